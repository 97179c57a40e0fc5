"""The one declaration of a ranking aggregation method (:mod:`stableval.aggregate.rankings.methods` declares them).

The ranking registry (:mod:`stableval.aggregate.rankings.registry`) lists them; ``stableval
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
from typing import TYPE_CHECKING, Any, Literal

from stableval._lazy import imported_class
from stableval._options import Option

if TYPE_CHECKING:  # pragma: no cover
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
        estimator_at: where the estimator class lives, ``"package.module:Class"`` (imported on first use:
            :attr:`estimator`), or the class itself.
        samples: where the uncertainty of its plausibilities comes from: ``"bootstrap"`` (refit on rankings drawn
            with replacement, per item: the rater bootstrap) or ``"posterior"`` (the model's own posterior samples,
            ``sample_plausibility_``).
        rater_model: the fit estimates a reliability per rater (``raters_``), so per-rater diagnostics exist.
        default: the method ``stableval ddx`` runs without ``--method``.
        summary: one sentence for ``--help`` and the docs.
        draws_per_fit: the most bootstrap draws stacked into one fit (each draw's items side by side); None: as
            many as fit in a few million elements. An optimiser whose steps slow down on large problems (L-BFGS)
            refits one draw at a time.
        params: every hyper-parameter's declaration (with its default), in the order of the estimator's
            ``__init__``, which reads them (``PARAMETERS``); for a class given as ``estimator_at``, its own by
            default.
    """

    name: str
    label: str
    title: str
    colour: str
    estimator_at: str | type[RankingAggregator]
    samples: Literal["bootstrap", "posterior"] = "bootstrap"
    rater_model: bool = False
    default: bool = False
    summary: str = ""
    draws_per_fit: int | None = None
    params: tuple[Option, ...] = ()

    def __post_init__(self) -> None:
        if not self.params and not isinstance(self.estimator_at, str):  # a class at hand declares its own
            object.__setattr__(self, "params", self.estimator_at.declared_params())

    @property
    def estimator(self) -> type[RankingAggregator]:
        """The estimator class (its module imported now, if it was not yet); ``estimator(**params)`` builds one."""
        cls: type[RankingAggregator] = imported_class(self.estimator_at)
        return cls

    def param(self, name: str) -> Option:
        """The declaration of the hyper-parameter ``name``; ``ValueError`` listing those that exist."""
        for option in self.params:
            if option.name == name:
                return option
        raise ValueError(f"{self.name} has no parameter {name!r}; its parameters: "
                         + (", ".join(option.name for option in self.params) or "none"))

    def build(self, **params: Any) -> RankingAggregator:
        """A new, unfitted estimator with these hyper-parameters (the rest at their defaults)."""
        names = [option.name for option in self.params]
        for name in params:
            if name not in names:
                raise ValueError(f"{self.name} has no parameter {name!r}; its parameters: "
                                 + (", ".join(names) or "none"))
        return self.estimator(**params)
