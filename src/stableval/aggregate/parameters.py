"""The hyper-parameters several aggregation methods share, declared once: the EM settings and the accelerators.

A leaf: nothing here imports numpy or another estimator module, so the declarations
(:mod:`stableval.aggregate.methods`) and the EM code (:mod:`stableval.aggregate.em_acceleration`,
:mod:`stableval.aggregate.em_fit`) both read these.

>>> MAX_ITER.cli, ACCELERATIONS[0]
('--max-iter', 'auto')
"""

from __future__ import annotations

from dataclasses import replace

from stableval._options import MAX_ITERATIONS, Option

__all__ = ["ACCELERATION", "ACCELERATIONS", "MAX_ITER", "TOL", "em_settings"]

#: ``acceleration`` values of :func:`~stableval.aggregate.em.run_em` (the first is the estimators' default;
#: :func:`~stableval.aggregate.em_acceleration.acceleration_choice`)
ACCELERATIONS = ("auto", "anderson", "squarem", "none")

#: the settings every EM estimator shares, declared once (an estimator may word its own help with
#: ``dataclasses.replace``)
MAX_ITER = Option("max_iter", int, "Most EM iterations (E-steps).", ge=1, le=MAX_ITERATIONS,
                  size_bound=True)
TOL = Option("tol", float, "Stop when one EM step improves the log-likelihood by less than tol · max(1, "
                           "|log-likelihood|).", ge=0)
ACCELERATION = Option(
    "acceleration", str, "auto (Anderson acceleration from 250,000 stored judgments when at most 1% of the raters "
    "have fewer than 500 each, SQUAREM otherwise), anderson (Anderson acceleration with a monotone safeguard and "
    "restarts), squarem (SQUAREM with a monotone safeguard) — each the same fixed point in fewer E-steps — or none "
    "(plain EM).", choices=ACCELERATIONS)


def em_settings(max_iter: int = 500, tol: float = 1e-8) -> tuple[Option, Option]:
    """:data:`MAX_ITER` and :data:`TOL` with these defaults (the EM methods differ only in them).

    >>> [option.default for option in em_settings(100)]
    [100, 1e-08]
    """
    return replace(MAX_ITER, default=max_iter), replace(TOL, default=tol)
