"""The one declaration of an aggregation method (:mod:`stableval.aggregate.methods` declares them all).

The registry (:mod:`stableval.aggregate.registry`) lists them; every analysis, the command line's flags and help,
the docs tables and the contract tests read the declarations from there. A declaration names its estimator by
where it lives (``"module:Class"``), so reading it imports no numerical code; :attr:`Method.estimator` imports the
class when a method is built or fitted.

>>> from stableval.aggregate.registry import get_method
>>> method = get_method("ds")
>>> method.label, method.credit, method.rater_model
('DS', 'hard', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from stableval._lazy import imported_class
from stableval._options import Option
from stableval.errors import StableValError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from stableval.aggregate._base import Aggregator

__all__ = ["Method"]


@dataclass(frozen=True)
class Method:
    """The one declaration of an aggregation method (:mod:`stableval.aggregate.methods`); the registry
    (:mod:`stableval.aggregate.registry`) lists them, and every analysis reads them from there.

    Attributes:
        name: the name users type (``--method``, ``score_agents(table, ["stableval"])``).
        label: short label for table headers (``"STABLEVAL"``).
        title: long name for legends and docs (``"STABLEVAL (Bayesian Dawid–Skene)"``).
        colour: its colour in every figure.
        estimator_at: where the estimator class lives, ``"package.module:Class"`` (imported on first use:
            :attr:`estimator`), or the class itself.
        credit: ``"soft"`` — a response earns the posterior expected credit; ``"hard"`` — the credit of its most
            probable level (exact ties share the credit equally).
        batch: how the simulator fits many small problems at once: ``"em"`` (the batched EM; the estimator is an
            :class:`EMAggregator`), ``"stacked"`` (a per-response method: one fit of the block-diagonal matrix of
            all problems gives each problem's own result), ``"each"`` (one fit per problem).
        rater_model: the fit estimates each rater's confusion matrix (``confusion_``, ``priors_``), so
            ``diagnose`` can judge the raters with it.
        distributed: the estimator fits from vote counts, the E-step's expected counts or rater-weighted votes
            alone (:meth:`~stableval.aggregate._base.Aggregator.fit_responses`), so it also runs on a table
            partitioned over a Dask cluster (``--executor dask``), with the in-memory numbers.
        why_in_memory: for a method that is not ``distributed``, why it needs the judgments in memory (the Dask
            executor's refusal says it).
        default: part of the default method set of ``score``, ``stability``, ``report``, ``ablate``, ``demo`` and the
            portal's results page (False unless declared: a new method joins that set only by saying so).
        primary: the headline method when it is among those chosen: the leaderboard is sorted by it, and its win
            probabilities and rater model are the ones reported first.
        summary: one sentence for ``--help`` and the docs.
        params: every hyper-parameter's declaration (what it does, its default and the values allowed), in the
            order of the estimator's ``__init__``, which reads them (``PARAMETERS``); for a class given as
            ``estimator_at``, its own (:meth:`~stableval.aggregate._base.Estimator.declared_params`) by default.
    """

    name: str
    label: str
    title: str
    colour: str
    estimator_at: str | type[Aggregator]
    credit: Literal["soft", "hard"] = "soft"
    batch: Literal["em", "stacked", "each"] = "each"
    rater_model: bool = False
    distributed: bool = False
    why_in_memory: str = ""
    default: bool = False
    primary: bool = False
    summary: str = ""
    params: tuple[Option, ...] = ()

    def __post_init__(self) -> None:
        if not self.params and not isinstance(self.estimator_at, str):  # a class at hand declares its own
            object.__setattr__(self, "params", self.estimator_at.declared_params())

    @property
    def estimator(self) -> type[Aggregator]:
        """The estimator class (its module imported now, if it was not yet); ``estimator(**params)`` builds one."""
        cls: type[Aggregator] = imported_class(self.estimator_at)
        return cls

    def implemented_by(self, cls: type) -> bool:
        """Whether ``cls`` is this method's estimator class (without importing the estimator's module).

        >>> from stableval.aggregate.registry import get_method
        >>> get_method("ds").implemented_by(get_method("ds").estimator), get_method("mv").implemented_by(int)
        (True, False)
        """
        if isinstance(self.estimator_at, str):
            return self.estimator_at == f"{cls.__module__}:{cls.__qualname__}"
        return cls is self.estimator_at

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The hyper-parameters' names, in the order of the estimator's ``__init__``."""
        return tuple(option.name for option in self.params)

    def param(self, name: str) -> Option:
        """The declaration of the hyper-parameter ``name``; ``ValueError`` listing those that exist."""
        for option in self.params:
            if option.name == name:
                return option
        raise ValueError(f"{self.name} has no parameter {name!r}; its parameters: "
                         + (", ".join(option.name for option in self.params) or "none"))

    def build(self, **params: Any) -> Aggregator:
        """A new, unfitted estimator with these hyper-parameters (the rest at their defaults); an unknown name
        raises ``ValueError`` listing the parameters that exist."""
        names = self.parameter_names
        for name in params:
            if name not in names:
                raise ValueError(f"{self.name} has no parameter {name!r}; its parameters: "
                                 + (", ".join(names) or "none"))
        return self.estimator(**params)

    def fit(self, table: Any, estimator: Aggregator | None = None, **params: Any) -> Aggregator:
        """``estimator`` (unfitted), or a new one with ``params``, fitted on a table of either kind
        (:class:`~stableval.data.table.JudgmentTable`): in memory by :meth:`Aggregator.fit
        <stableval.aggregate._base.Aggregator.fit>` (an annotation table, or a frame), or on the Dask cluster of a
        :class:`~stableval.data.partitioned.PartitionedTable` by :meth:`Aggregator.fit_responses
        <stableval.aggregate._base.Aggregator.fit_responses>`, for a method declared ``distributed``."""
        from stableval.data.table import AnnotationTable

        model = estimator if estimator is not None else self.build(**params)
        if isinstance(table, AnnotationTable):
            return model.fit(table)
        from stableval.data.partitioned import PartitionedTable

        if not isinstance(table, PartitionedTable):
            return model.fit(table)
        self.check_distributed()
        from stableval.aggregate.distributed import PartitionedMatrix

        return model.fit_responses(PartitionedMatrix(table))

    def check_distributed(self) -> None:
        """Raise :class:`~stableval.errors.StableValError`, with the declared reason, unless the method runs on a
        Dask cluster."""
        if not self.distributed:
            why = self.why_in_memory or "it declares no distributed fit (distributed=False in its registry entry)"
            raise StableValError(f"method {self.name!r} is not supported by the Dask executor: {why}")

    def credit_distribution(self, posteriors: np.ndarray) -> np.ndarray:
        """(N, K) distribution whose expected credit is the method's item credit, from the fitted posteriors."""
        import numpy as np

        from stableval.aggregate._base import hard_distribution

        return hard_distribution(posteriors) if self.credit == "hard" else np.asarray(posteriors)
