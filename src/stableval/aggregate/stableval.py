"""STABLEVAL: Bayesian Dawid–Skene whose full posteriors give each response an expected credit.

Source: Bonagiri et al. (2026), "STABLEVAL: Disagreement-Aware and Stable Evaluation of AI Systems",
arXiv:2605.02122, Section 3 and Algorithm 1. Dirichlet(alpha_mu) on the class priors and Dirichlet(alpha_pi) on
each row of each rater's confusion matrix; MAP EM initialised from the hard majority vote (class priors = the
share of responses whose majority is each level, ties split) and near-identity confusion matrices
``(1 - epsilon) I + epsilon / K``; the E-step comes first.

Default priors are weak (``alpha_mu = alpha_pi = 1.01``): on well-identified data the posteriors stay close to
maximum likelihood (Dawid–Skene), while a rater's never-seen confusion cells stay away from exact zeros.
Stronger priors (e.g. ``alpha_pi = 2``) pull sparse raters towards uniform confusion rows and are worth it when
most raters judge only a handful of responses.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "agent": "A", "rater": list("abcabc"),
...                       "label": [1, 1, 0, 0, 0, 0]})
>>> table = AnnotationTable.from_frame(frame, levels=("no", "yes"))
>>> model = Stableval().fit(table)
>>> model.posteriors_.argmax(axis=1).tolist(), bool(model.converged_)
([1, 0], True)
"""

from __future__ import annotations

import numpy as np

from stableval.aggregate._base import EMAggregator, EMStart, Method, hard_distribution

INITS = ("majority", "soft")


class Stableval(EMAggregator):
    """MAP Dawid–Skene with Dirichlet priors (Algorithm 1 of the STABLEVAL paper).

    Args:
        alpha_mu: Dirichlet concentration on the class priors (>= 1; 1 = no prior).
        alpha_pi: Dirichlet concentration on every confusion-matrix row (>= 1; 1 = no prior).
        epsilon: off-diagonal mass of the near-identity initial confusion matrices (0 < epsilon < 1).
        init: ``"majority"`` (Algorithm 1: hard majority vote priors + near-identity confusion, E-step first)
            or ``"soft"`` (as Dawid–Skene: soft vote shares, M-step first).
        max_iter, tol: as for :class:`~stableval.aggregate.DawidSkene`; convergence is on the log posterior.

    Attributes after ``fit``: as Dawid–Skene; ``objective_`` is the log posterior (log-likelihood + log prior,
    non-decreasing), ``log_likelihood_`` the marginal log-likelihood at each step.
    """

    def __init__(
        self,
        alpha_mu: float = 1.01,
        alpha_pi: float = 1.01,
        epsilon: float = 0.1,
        init: str = "majority",
        max_iter: int = 500,
        tol: float = 1e-8,
    ) -> None:
        if alpha_mu < 1 or alpha_pi < 1:
            raise ValueError(f"alpha_mu and alpha_pi must be >= 1 (got {alpha_mu}, {alpha_pi}): "
                             "below 1 the MAP update is not defined")
        if not 0 < epsilon < 1:
            raise ValueError(f"epsilon must be in (0, 1), got {epsilon}")
        if init not in INITS:
            raise ValueError(f"init={init!r}; allowed: {', '.join(INITS)}")
        if int(max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter}")
        if not tol >= 0:
            raise ValueError(f"tol must be >= 0, got {tol}")
        self.alpha_mu = float(alpha_mu)
        self.alpha_pi = float(alpha_pi)
        self.epsilon = float(epsilon)
        self.init = init
        self.max_iter = int(max_iter)
        self.tol = float(tol)

    def dirichlet(self) -> tuple[float, float]:
        return self.alpha_mu, self.alpha_pi

    def em_start(self, counts: np.ndarray) -> EMStart:
        """Algorithm 1 (``init="majority"``): class priors from the hard majority vote (ties split) and
        near-identity confusion matrices ``(1 - epsilon) I + epsilon / K``, E-step first; or the soft vote
        shares, M-step first (``init="soft"``)."""
        if self.init == "soft":
            return EMStart(counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0))
        k = counts.shape[1]
        return EMStart(hard_distribution(counts, atol=0.0), (1.0 - self.epsilon) * np.eye(k) + self.epsilon / k)


METHOD = Method(
    name="stableval", label="STABLEVAL", title="STABLEVAL (Bayesian Dawid–Skene)", colour="#d62728",
    estimator=Stableval, credit="soft", batch="em", rater_model=True, primary=True,
    summary="Bonagiri et al. (2026) MAP Dawid–Skene with Dirichlet priors; a response earns its posterior "
            "expected credit.",
)
