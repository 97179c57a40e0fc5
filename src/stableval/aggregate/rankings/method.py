"""The one declaration of a ranking aggregation method, written next to its estimator (``METHOD = RankingMethod(...)``).

The ranking registry (:mod:`stableval.aggregate.rankings.registry`) lists the modules that declare one; ``stableval
ddx --method``, ``--compare-methods``, ``plot ddx-case --ranking-method``, ``nrp agree --aggregate``, the docs
tables and the contract tests read the declarations from there — the ranking counterpart of
:class:`~stableval.aggregate.method.Method`.

>>> from stableval.aggregate.rankings.registry import get_ranking_method
>>> method = get_ranking_method("bayes-pl")
>>> method.label, method.samples, method.rater_model
('Bayes-PL', 'posterior', False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from stableval._options import Option
from stableval.aggregate.rankings.base import RankingAggregator

__all__ = ["RankingMethod"]


@dataclass(frozen=True)
class RankingMethod:
    """A ranking aggregation method.

    Attributes:
        name: the name users type (``--method pl``).
        label: short label for tables (``"PL"``).
        title: long name with its source, for legends and docs.
        colour: its colour in every figure.
        estimator: the estimator class; ``estimator(**params)`` builds one.
        samples: where the uncertainty of its plausibilities comes from: ``"bootstrap"`` (refit on rankings drawn
            with replacement, per item: the rater bootstrap) or ``"posterior"`` (the model's own posterior samples,
            ``sample_plausibility_``).
        rater_model: the fit estimates a reliability per rater (``raters_``), so per-rater diagnostics exist.
        default: the method ``stableval ddx`` runs without ``--method``.
        summary: one sentence for ``--help`` and the docs.
        draws_per_fit: the most bootstrap draws stacked into one fit (each draw's items side by side); None: as
            many as fit in a few million elements. An optimiser whose steps slow down on large problems (L-BFGS)
            refits one draw at a time.
    """

    name: str
    label: str
    title: str
    colour: str
    estimator: type[RankingAggregator]
    samples: Literal["bootstrap", "posterior"] = "bootstrap"
    rater_model: bool = False
    default: bool = False
    summary: str = ""
    draws_per_fit: int | None = None

    @property
    def params(self) -> tuple[Option, ...]:
        """Every hyper-parameter's declaration, in the order of the estimator's ``__init__``."""
        return self.estimator.declared_params()

    def param(self, name: str) -> Option:
        """The declaration of the hyper-parameter ``name``; ``ValueError`` listing those that exist."""
        for option in self.params:
            if option.name == name:
                return option
        raise ValueError(f"{self.name} has no parameter {name!r}; its parameters: "
                         + (", ".join(option.name for option in self.params) or "none"))

    def build(self, **params: Any) -> RankingAggregator:
        """A new, unfitted estimator with these hyper-parameters (the rest at their defaults)."""
        names = self.estimator.parameter_names()
        for name in params:
            if name not in names:
                raise ValueError(f"{self.name} has no parameter {name!r}; its parameters: "
                                 + (", ".join(names) or "none"))
        return self.estimator(**params)
