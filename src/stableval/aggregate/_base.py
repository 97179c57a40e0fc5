"""What every aggregator shares: the estimator shape, its parameters, and its declaration in the method registry.

Estimators follow scikit-learn (Pedregosa et al. 2011, JMLR 12; Buitinck et al. 2013, "API design for machine
learning software"): hyper-parameters only in ``__init__``, stored under their own names; :meth:`get_params` and
:meth:`set_params` are read off ``__init__``'s signature, :func:`clone` builds an unfitted copy, ``fit`` returns
the estimator and results live in trailing-underscore attributes that exist only after fitting.

Every per-response aggregator fits through one path, :meth:`Aggregator.fit_matrix` on the sparse response matrix
(responses × rater·K + label) of :meth:`AnnotationTable.response_matrix`; :meth:`Aggregator.fit` builds that matrix
from a table. Each registered method is declared once by a :class:`Method` next to its estimator.

>>> from stableval.aggregate import Stableval
>>> model = Stableval(alpha_pi=2.0)
>>> model.get_params()["alpha_pi"], clone(model.set_params(tol=1e-6)).tol
(2.0, 1e-06)
>>> model.set_params(alpha_p=3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: Stableval has no parameter 'alpha_p'; its parameters: alpha_mu, alpha_pi, epsilon, init, n_starts, ...
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Self, TypeAlias, TypeVar

import numpy as np

from stableval.errors import InputError, NotFittedError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import scipy.sparse as sp

    from stableval.aggregate.em import EMResult
    from stableval.data.frames import TableLike
    from stableval.data.table import AnnotationTable

__all__ = [
    "Aggregator",
    "EMAggregator",
    "EMRunner",
    "EMStart",
    "Estimator",
    "GoldLabels",
    "Judgments",
    "Method",
    "check_em_settings",
    "clamp_gold",
    "clone",
    "diagonal_dominant",
    "em_fit_summary",
    "gold_codes",
    "hard_distribution",
    "pooled_confusion",
    "screening_rows",
    "softmax_posteriors",
]

#: Known true levels: {(item, agent): level name or code}, or an (N,) code array (-1 = unknown).
GoldLabels = Mapping[tuple[str, str], "str | int"] | np.ndarray


class Estimator:
    """Hyper-parameters read off ``__init__`` (``get_params``, ``set_params``, a ``repr`` that shows the ones not
    at their defaults), and results in trailing-underscore attributes that raise a clear error before ``fit``."""

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: a result attribute that fit() has not set yet.
        if name.endswith("_") and not name.startswith("__"):
            raise NotFittedError(f"{type(self).__name__}.{name} is not available: call fit(table) first")
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The names of ``__init__``'s parameters (every estimator stores each under its own name)."""
        signature = inspect.signature(cls.__init__)
        names = []
        for name, parameter in signature.parameters.items():
            if name == "self":
                continue
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must list its hyper-parameters explicitly, not *{name}")
            names.append(name)
        return tuple(names)

    @classmethod
    def default_params(cls) -> dict[str, Any]:
        """Every hyper-parameter's default value, from ``__init__``'s signature."""
        signature = inspect.signature(cls.__init__)
        return {name: signature.parameters[name].default for name in cls.parameter_names()}

    def get_params(self) -> dict[str, Any]:
        """The hyper-parameters, as ``__init__`` received them (after its validation)."""
        return {name: getattr(self, name) for name in self.parameter_names()}

    def set_params(self, **params: Any) -> Self:
        """Change hyper-parameters by name (validated as ``__init__`` validates them); returns the estimator."""
        names = self.parameter_names()
        for name in params:
            if name not in names:
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}; its parameters: "
                                 + (", ".join(names) or "none"))
        checked = type(self)(**{**self.get_params(), **params})
        for name in params:
            setattr(self, name, getattr(checked, name))
        return self

    def __repr__(self) -> str:
        defaults = self.default_params()
        shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults[k])
        return f"{type(self).__name__}({shown})"


E = TypeVar("E", bound=Estimator)


def clone(estimator: E) -> E:
    """A new, unfitted estimator with the same hyper-parameters."""
    return type(estimator)(**estimator.get_params())


#: the labelled result views every aggregator fitted on a table offers (crowd-kit's names), see :class:`Aggregator`
LABELLED_VIEWS = ("labels_", "probas_", "skills_", "errors_")


class Aggregator(Estimator):
    """Base class of the per-response aggregators.

    Subclasses implement :meth:`fit_matrix`, which sets ``posteriors_``: an (N, K) distribution over levels per
    response (rows sum to 1), rows in the table's response order; those numeric arrays are what every analysis
    uses. ``fit`` takes an :class:`AnnotationTable`, a pandas DataFrame or a pyarrow Table (our columns,
    crowd-kit's ``task, worker, label`` or any alias the readers accept: :func:`~stableval.data.frames.as_table`)
    and fits the converted table with :meth:`fit_table`.

    After ``fit`` on a table or frame, labelled views (pandas, built on access, named as crowd-kit names them):
    ``labels_`` (Series: the most probable level name per response, lowest level on exact ties), ``probas_``
    (DataFrame response × level), ``skills_`` (Series by rater name, for models with a per-rater skill:
    :meth:`rater_skills`) and ``errors_`` (DataFrame of the confusion matrices, for models with ``confusion_``:
    rows (rater, given label), columns the true level, each column of a rater summing to 1, as crowd-kit's
    ``DawidSkene.errors_``). Responses are indexed by ``item`` when the table has one agent (a crowd-kit frame:
    its tasks), else by (``item``, ``agent``). :class:`~stableval.aggregate.majority_vote.MajorityVote` keeps
    its own ``labels_``, the (N,) level codes.

    >>> import pandas as pd
    >>> crowd = pd.DataFrame({"task": ["t1", "t1", "t1", "t2", "t2", "t2"], "worker": list("abcabc"),
    ...                       "label": ["yes", "yes", "no", "no", "no", "yes"]})
    >>> from stableval.aggregate import DawidSkene
    >>> DawidSkene().fit_predict(crowd).to_dict()
    {'t1': 'yes', 't2': 'no'}
    >>> DawidSkene().fit(crowd).errors_.loc["a"].round(2).to_dict("index")
    {'no': {'no': 1.0, 'yes': 0.0}, 'yes': {'no': 0.0, 'yes': 1.0}}
    """

    posteriors_: np.ndarray
    _fitted_table: AnnotationTable

    def fit(self, table: TableLike, gold: GoldLabels | None = None) -> Self:
        """Fit on an annotation table, a DataFrame or a pyarrow Table (:data:`~stableval.data.frames.TableLike`);
        ``gold`` optionally clamps known responses ({(item, agent): level})."""
        from stableval.data.frames import as_table

        converted = as_table(table)
        self.fit_table(converted, gold)
        self._fitted_table = converted
        return self

    def fit_table(self, table: AnnotationTable, gold: GoldLabels | None = None) -> None:
        """Fit on an annotation table (what :meth:`fit` calls after converting its input): the response matrix
        through :meth:`fit_matrix`. A method that needs more of the table than the matrix overrides this."""
        self.fit_matrix(table.response_matrix(), table.n_raters, table.n_levels, gold=gold_codes(table, gold))

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> Self:  # pragma: no cover - interface
        """Fit on a response matrix (responses × rater·K + label) directly; ``gold`` (N,) codes, -1 = unknown."""
        raise NotImplementedError

    def fit_predict_proba(self, table: TableLike) -> pd.DataFrame:
        """Fit, then return the posterior (or vote-share) DataFrame: response × level (``probas_``)."""
        self.fit(table)
        return self._proba_frame()

    def fit_predict(self, table: TableLike) -> pd.Series:
        """Fit, then return the most probable level name per response (``labels_``; lowest level on exact ties)."""
        self.fit(table)
        return self._label_series()

    def rater_skills(self) -> np.ndarray | None:
        """(R,) one skill per rater for models that have one (the ``skills_`` view), else ``None``."""
        return None

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: the labelled views are built here on access.
        if name in LABELLED_VIEWS and "posteriors_" in self.__dict__:
            return self._labelled_view(name)
        return super().__getattr__(name)

    def _fitted_names(self) -> AnnotationTable:
        """The table of the last ``fit``, checked to match the fitted arrays."""
        table: AnnotationTable | None = self.__dict__.get("_fitted_table")
        if table is None or table.n_responses != len(self.posteriors_):
            raise NotFittedError(f"{type(self).__name__}'s labelled views (labels_, probas_, skills_, errors_) need "
                                 "fit(table or frame); after fit_matrix use the arrays (posteriors_, ...)")
        return table

    def _response_index(self) -> pd.Index:
        import pandas as pd

        table = self._fitted_names()
        items = table.items.to_numpy()[table.response_item]
        index: pd.Index
        if table.n_agents == 1:
            index = pd.Index(items.tolist(), dtype=object, name="item")
            return index
        index = pd.MultiIndex.from_arrays([items, table.agents.to_numpy()[table.response_agent]],
                                                    names=["item", "agent"])
        return index

    def _proba_frame(self) -> pd.DataFrame:
        import pandas as pd

        table = self._fitted_names()
        return pd.DataFrame(np.asarray(self.posteriors_), index=self._response_index(),
                            columns=pd.Index(table.levels, name="label"))

    def _label_series(self) -> pd.Series:
        import pandas as pd

        table = self._fitted_names()
        codes = np.asarray(self.posteriors_).argmax(axis=1)
        return pd.Series(np.asarray(table.levels, dtype=object)[codes], index=self._response_index(), name="label")

    def _labelled_view(self, name: str) -> Any:
        import pandas as pd

        if name == "labels_":
            return self._label_series()
        if name == "probas_":
            return self._proba_frame()
        table = self._fitted_names()
        raters = pd.Index(table.raters, name="rater")
        if name == "skills_":
            skills = self.rater_skills()
            if skills is None:
                raise AttributeError(f"{type(self).__name__} has no per-rater skill (skills_); "
                                     + ("its confusion matrices are errors_" if "confusion_" in self.__dict__
                                        else "it has no rater model"))
            return pd.Series(np.asarray(skills, dtype=float), index=raters, name="skill")
        confusion = self.__dict__.get("confusion_")
        if confusion is None:
            raise AttributeError(f"{type(self).__name__} has no confusion matrices (errors_): it has no rater model")
        r, k, _ = np.shape(confusion)
        rows = np.asarray(confusion).transpose(0, 2, 1).reshape(r * k, k)  # [rater·given, true]
        index = pd.MultiIndex.from_product([raters, pd.Index(table.levels)], names=["rater", "label"])
        return pd.DataFrame(rows, index=index, columns=pd.Index(table.levels, name="label"))

    def fit_summary(self) -> dict[str, Any]:
        """How the fit went (iterations, convergence, objective) for iterative methods; empty otherwise."""
        return {}


def em_fit_summary(model: Aggregator) -> dict[str, Any]:
    """How an EM fit went: iterations, convergence, the final log-likelihood and objective, and the starts when
    there were several (``n_iter_``, ``converged_``, ``log_likelihood_``, ``objective_``, ``starts_``, ``start_``)."""
    summary: dict[str, Any] = {"n_iter": int(model.n_iter_), "converged": bool(model.converged_),
                               "log_likelihood": float(model.log_likelihood_[-1]),
                               "objective": float(model.objective_[-1])}
    if len(model.starts_) > 1:
        summary.update(start=model.start_, starts=model.starts_)
    return summary


class Judgments:
    """The stored judgments of a response matrix (responses × rater·K + label) as flat arrays: ``response``,
    ``rater``, ``level`` and ``count`` (repeated identical judgments are one entry with their count).

    >>> import scipy.sparse as sp
    >>> j = Judgments(sp.csr_matrix(np.array([[1.0, 0, 0, 2]])), n_raters=2, n_levels=2)
    >>> j.rater.tolist(), j.level.tolist(), j.count.tolist()
    ([0, 1], [0, 1], [1.0, 2.0])
    """

    def __init__(self, X: sp.csr_matrix, n_raters: int, n_levels: int) -> None:
        coo = X.tocoo()
        self.response = coo.row.astype(np.int64)
        self.rater = (coo.col // n_levels).astype(np.int64)
        self.level = (coo.col % n_levels).astype(np.int64)
        self.count = coo.data.astype(float)
        self.n_responses, self.n_raters, self.n_levels = int(X.shape[0]), n_raters, n_levels
        self.cell = self.response * n_levels + self.level
        self.per_rater = np.bincount(self.rater, weights=self.count, minlength=n_raters)

    def vote(self, weights: np.ndarray | None = None) -> np.ndarray:
        """(N, K) summed weight per (response, level): each judgment weighs its rater's ``weights`` (R,), or 1."""
        w = self.count if weights is None else self.count * weights[self.rater]
        return np.bincount(self.cell, weights=w, minlength=self.n_responses * self.n_levels).reshape(
            self.n_responses, self.n_levels)

    def agreement(self, labels: np.ndarray) -> np.ndarray:
        """(R,) each rater's share of judgments equal to ``labels`` (N,) of their responses; 0 for an unused
        rater."""
        agreed = np.bincount(self.rater, weights=self.count * (self.level == labels[self.response]),
                             minlength=self.n_raters)
        return np.asarray(agreed / np.maximum(self.per_rater, 1e-300))


def check_em_settings(max_iter: int, tol: float, acceleration: str) -> None:
    """Refuse EM settings that cannot run (the message names the value and what is allowed)."""
    from stableval.aggregate.em import ACCELERATIONS

    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    if acceleration not in ACCELERATIONS:
        raise ValueError(f"acceleration={acceleration!r}; allowed: {', '.join(ACCELERATIONS)}")


def expected_rows(X: sp.csr_matrix, posteriors: np.ndarray, n_raters: int, n_levels: int) -> np.ndarray:
    """(R·K, K) expected confusion counts, one row per (rater, true level): ``posteriors`` (N, K) times the
    response matrix."""
    k = n_levels
    counts = np.asarray(X.T @ np.ascontiguousarray(posteriors))  # (R·K, K): [r·K + given, true]
    return np.ascontiguousarray(counts.reshape(n_raters, k, k).transpose(0, 2, 1).reshape(n_raters * k, k))


def pooled_confusion(posteriors: np.ndarray, counts: np.ndarray, groups: np.ndarray | None = None,
                     n_groups: int = 1) -> np.ndarray:
    """(G, K, K) expected counts of (true level, given level) pooled over all raters, from the (N, K) posteriors
    and the (N, K) labels per response; one matrix per group of responses (``groups``, ``n_groups``)."""
    k = counts.shape[1]
    cells = (posteriors[:, :, None] * counts[:, None, :]).reshape(len(counts), k * k)
    if groups is None:
        return np.asarray(cells.sum(axis=0).reshape(1, k, k))
    return np.stack([np.bincount(groups, weights=cells[:, j], minlength=n_groups) for j in range(k * k)],
                    axis=1).reshape(n_groups, k, k)


def diagonal_dominant(pooled: np.ndarray, min_mass: float = 1.0) -> np.ndarray:
    """(G,) whether every true level holding at least ``min_mass`` responses' worth of posterior mass is, pooled over
    the raters, the label given strictly most often for it: raters agree with the truth more than with any other
    level.

    Dawid–Skene models are identified only up to relabelling the true levels, and EM can also collapse every
    response onto one level whose confusion rows then absorb the raters' disagreement (a higher likelihood on small
    data, no meaning). A solution that is not diagonally dominant is one of those, and multi-start fitting passes it
    over (:meth:`EMAggregator.fit_matrix`).

    >>> diagonal_dominant(np.array([[[5.0, 1.0], [2.0, 6.0]], [[0.0, 0.0], [4.0, 3.0]], [[2.0, 2.0], [0, 1]]])).tolist()
    [True, False, False]
    """
    rows = pooled.sum(axis=2)
    diagonal = np.diagonal(pooled, axis1=1, axis2=2)
    k = pooled.shape[-1]
    others = np.where(np.eye(k, dtype=bool)[None], -np.inf, pooled).max(axis=2)
    checked = rows >= min_mass
    return np.asarray(((diagonal > others + 1e-9 * np.maximum(rows, 1.0)) | ~checked).all(axis=1))


#: E-steps each start gets before the starts are compared (:meth:`EMAggregator.fit_matrix`)
SCREEN_ITER = 50
#: with more responses than this, the starts are compared on a seeded random subset of :data:`SCREEN_RESPONSES`
#: responses and only the winning start is fitted on all of them (at 1e7 judgments: 5 s instead of 17 s)
SCREEN_SUBSET_ABOVE = 500_000
SCREEN_RESPONSES = 200_000


def screening_rows(n_responses: int) -> np.ndarray | None:
    """The responses the EM starts are compared on (a seeded random subset, sorted), or None: all of them.

    >>> screening_rows(1000) is None, screening_rows(600_000).size
    (True, 200000)
    """
    if n_responses <= SCREEN_SUBSET_ABOVE:
        return None
    return np.sort(np.random.default_rng(0).choice(n_responses, SCREEN_RESPONSES, replace=False))


def chain(first: EMResult, then: EMResult) -> EMResult:
    """A run continued by another that started from its final posteriors (M-step first): the second's results,
    both histories (the second's first point repeats none of the first's), the E-steps of both."""
    from stableval.aggregate.em import EMResult

    return EMResult(posteriors=then.posteriors, priors=then.priors, confusion=then.confusion,
                    log_likelihood=np.concatenate([first.log_likelihood, then.log_likelihood]),
                    objective=np.concatenate([first.objective, then.objective]),
                    n_iter=first.n_iter + then.n_iter, converged=then.converged)


@dataclass(frozen=True)
class EMStart:
    """Where EM starts, from per-response distributions over levels (N, K).

    ``confusion is None``: an M-step comes first, on these distributions as posteriors (Dawid & Skene 1979).
    Otherwise the class priors start at the mean of ``distributions``, every rater's confusion matrix at
    ``confusion`` (K, K), and an E-step comes first (STABLEVAL, Algorithm 1). ``maximum_likelihood_first``: run
    maximum-likelihood EM (Dawid–Skene) from this start first, and the model's own EM from its solution.
    ``must_be_identified``: the start is not anchored to the votes (a random start), so its solution is only kept
    when it is strictly diagonally dominant (:func:`diagonal_dominant`).
    """

    distributions: np.ndarray
    confusion: np.ndarray | None = None
    maximum_likelihood_first: bool = False
    must_be_identified: bool = False


#: runs EM from a start with Dirichlet alphas for at most max_iter E-steps: ``run(start, alphas, max_iter)``
EMRunner: TypeAlias = "Callable[[EMStart, tuple[float, float | np.ndarray], int], EMResult]"


class EMAggregator(Aggregator):
    """A Dawid–Skene-type rater model fitted by (MAP) EM with :func:`stableval.aggregate.em.run_em`.

    A subclass says where EM starts (:meth:`em_starts`, or a single :meth:`em_start`) and which Dirichlet priors
    it uses (:meth:`dirichlet`); fitting (every start, keeping the highest objective), the batched EM of the
    simulator and the results are shared. Results after fitting: ``posteriors_`` (N, K), ``priors_`` (K,),
    ``confusion_`` (R, K, K) [rater, true, given], ``log_likelihood_`` and ``objective_`` (the accepted points of
    the winning start's run, non-decreasing), ``n_iter_`` (its E-steps), ``converged_``, ``start_`` (the winning
    start's name) and ``starts_`` (one record per start: ``start, objective, log_likelihood, n_iter, converged,
    admissible``). The winner is the admissible start (:func:`diagonal_dominant`) with the highest objective, or
    the highest objective if no start is admissible.
    """

    max_iter: int
    tol: float
    acceleration: str = "none"
    alpha_pi_: float | np.ndarray

    def em_start(self, counts: np.ndarray) -> EMStart:  # pragma: no cover - interface
        """The start of EM from the (N, K) label counts per response."""
        raise NotImplementedError

    def em_starts(self, counts: np.ndarray, groups: np.ndarray | None = None, *, rows: np.ndarray | None = None,
                  names: Collection[str] | None = None) -> list[tuple[str, EMStart]]:
        """Every start to try, named, from the (N, K) label counts; ``groups`` (N,) numbers independent problems
        fitted together (the simulator's batch), so random starts are drawn problem by problem exactly as for a
        table of its own. ``rows``: the starts on those responses only (equal to the full starts' rows; a subclass
        builds them there alone); ``names``: only the starts named. Default: the one :meth:`em_start`."""
        if names is not None and "start" not in names:
            return []
        return [("start", self.em_start(counts if rows is None else counts[rows]))]

    def dirichlet(self) -> tuple[float, float]:
        """(alpha_mu, alpha_pi): Dirichlet concentrations on the class priors and on each confusion row
        (1, 1 = maximum likelihood); for a learnt alpha_pi, the value of the first fit."""
        return 1.0, 1.0

    def learned_alpha_pi(self, rows: np.ndarray, groups: np.ndarray | None = None,
                         n_groups: int = 1) -> np.ndarray | None:
        """After a first fit: the (G,) alpha_pi to refit with, learnt from the expected confusion counts ``rows``
        (one rater's row for one true level each, summed per group), or ``None`` (the priors are fixed)."""
        return None

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> Self:
        from stableval.aggregate.em import acceleration_choice, rater_judgments, vote_counts
        from stableval.aggregate.em_kernel import kernel_choice, preload

        if kernel_choice(X.nnz) == "numba":  # load the compiled E-step while the starts are built
            preload(n_levels, X.indices.dtype)
        # the screened rows run the accelerator the whole fit runs ("auto" is chosen by the whole matrix)
        acceleration = acceleration_choice(self.acceleration, lambda: rater_judgments(X, n_raters))
        screen: tuple[np.ndarray, EMRunner] | None = None
        rows = screening_rows(X.shape[0])
        if rows is not None:
            subset: list[sp.csr_matrix] = []  # the screened rows, cut out when the first start is screened
            kernel = kernel_choice(X.nnz)  # the screen runs on the kernel the whole fit runs on

            def run_on_rows(start: EMStart, alphas: tuple[float, float | np.ndarray], max_iter: int) -> EMResult:
                assert rows is not None
                subset[:] = subset or [X[rows]]
                return self._run(subset[0], start, n_raters, n_levels, gold[rows] if gold is not None else None,
                                 alphas, max_iter, kernel=kernel, acceleration=acceleration)

            screen = rows, run_on_rows
        return self.fit_from_starts(
            vote_counts(X, n_levels), n_raters, n_levels,
            run=lambda start, alphas, max_iter: self._run(X, start, n_raters, n_levels, gold, alphas, max_iter,
                                                          acceleration=acceleration),
            expected=lambda posteriors: expected_rows(X, posteriors, n_raters, n_levels), screen=screen)

    def fit_from_starts(self, counts: np.ndarray, n_raters: int, n_levels: int, *, run: EMRunner,
                        expected: Callable[[np.ndarray], np.ndarray],
                        screen: tuple[np.ndarray, EMRunner] | None = None) -> Self:
        """The fit behind :meth:`fit_matrix`, for any E-step: every start (:meth:`em_starts` of the vote
        ``counts``) run by ``run(start, alphas, max_iter)``, then, when :meth:`learned_alpha_pi` learns a prior from
        ``expected(posteriors)`` (the expected confusion rows), the refit with it. The distributed fit passes an
        E-step over partitions (:mod:`stableval.aggregate.distributed`). ``screen = (rows, run_on_rows)``: compare
        the starts on those responses only, then fit the winner on all."""
        alphas = self.dirichlet()
        self._fit_starts(counts, run, alphas, screen)
        learns = self.learned_alpha_pi(np.zeros((0, n_levels))) is not None  # else the counts pass is not needed
        learned = self.learned_alpha_pi(expected(self.posteriors_)) if learns else None
        if learned is None:
            self.alpha_pi_ = alphas[1]
        elif np.ndim(learned[0]) == 0:  # one concentration for every confusion cell
            self.alpha_pi_ = float(learned[0])
            if self.alpha_pi_ != alphas[1]:
                self._fit_starts(counts, run, (alphas[0], self.alpha_pi_), screen)
        else:  # a (K, K) concentration per cell, the same for every rater (a pooled prior)
            self.alpha_pi_ = np.asarray(learned[0], dtype=float)
            every_rater = np.broadcast_to(self.alpha_pi_, (n_raters, n_levels, n_levels))
            self._fit_starts(counts, run, (alphas[0], every_rater), screen)
        return self

    def _fit_starts(self, counts: np.ndarray, run: EMRunner, alphas: tuple[float, float | np.ndarray],
                    subset: tuple[np.ndarray, EMRunner] | None = None) -> None:
        """Fit from every start with these Dirichlet alphas and keep the admissible one with the best objective.

        With several starts each runs for at most :data:`SCREEN_ITER` E-steps; the leader then goes on to
        convergence (``max_iter - SCREEN_ITER`` more E-steps at most), so trying five starts costs far less than
        five fits. With ``subset = (rows, run_on_rows)`` the starts are screened on those responses only and the
        winning start is then fitted on all responses from scratch. ``starts_`` records each start as screened.
        """
        starts = self.em_starts(counts, rows=subset[0]) if subset is not None else self.em_starts(counts)
        if subset is not None and len(starts) == 1:  # nothing to screen: the one start on every response
            starts = self.em_starts(counts)
        screen = min(self.max_iter, SCREEN_ITER) if len(starts) > 1 else self.max_iter
        rows, screen_run = subset if subset is not None and len(starts) > 1 else (None, run)
        best: tuple[bool, float] | None = None
        winner: EMResult | None = None
        chosen: EMStart | None = None
        records: list[dict[str, Any]] = []
        for name, start in starts:
            result = screen_run(start, alphas, screen)  # with rows, the start is built on those rows only
            admissible = not start.must_be_identified or bool(
                diagonal_dominant(pooled_confusion(result.posteriors.T, counts if rows is None else counts[rows]))[0])
            records.append({"start": name, "objective": float(result.objective[-1]),
                            "log_likelihood": float(result.log_likelihood[-1]), "n_iter": int(result.n_iter),
                            "converged": bool(result.converged), "admissible": admissible,
                            "screened_responses": int(len(counts) if rows is None else len(rows))})
            rank = (admissible, float(result.objective[-1]))
            if best is None or rank > best:
                best, winner, chosen, self.start_ = rank, result, start, name
        assert winner is not None and chosen is not None
        if rows is not None:  # the winning start, now built on every response
            winner = run(self.em_starts(counts, names=(self.start_,))[0][1], alphas, self.max_iter)
        elif not winner.converged and screen < self.max_iter:
            more = run(EMStart(winner.posteriors.T), alphas, self.max_iter - screen)
            winner = chain(winner, more)
        self._store(winner)
        self.starts_ = records

    def _run(self, X: sp.csr_matrix, start: EMStart, n_raters: int, n_levels: int,
             gold: np.ndarray | None, alphas: tuple[float, float | np.ndarray], max_iter: int,
             kernel: str | None = None, acceleration: str | None = None) -> EMResult:
        """EM from one start (through maximum likelihood first if the start says so), ``max_iter`` E-steps at
        most per stage; ``kernel`` and ``acceleration`` (None: the estimator's) as
        :func:`~stableval.aggregate.em.run_em` takes them."""
        from stableval.aggregate.em import EMResult, run_em

        alpha_mu, alpha_pi = alphas
        common: dict[str, Any] = dict(n_raters=n_raters, n_levels=n_levels, max_iter=max_iter, tol=self.tol,
                                      gold=gold, acceleration=acceleration or self.acceleration, kernel=kernel)
        if start.confusion is not None:
            distributions = start.distributions
            priors = distributions.mean(axis=0) if distributions.shape[0] else np.full(n_levels, 1.0 / n_levels)
            confusion = np.broadcast_to(start.confusion, (n_raters, n_levels, n_levels)).copy()
            return run_em(X, init_params=(priors, confusion), alpha_mu=alpha_mu, alpha_pi=alpha_pi, **common)
        shares = np.array(np.asarray(start.distributions).T, dtype=float, order="C")  # (K, N): one copy, not two
        clamp_gold(shares.T, gold)
        if not start.maximum_likelihood_first:
            return run_em(X, init_posteriors=shares, alpha_mu=alpha_mu, alpha_pi=alpha_pi, **common)
        ml = run_em(X, init_posteriors=shares, **common)
        result = run_em(X, init_posteriors=ml.posteriors, alpha_mu=alpha_mu, alpha_pi=alpha_pi, **common)
        return EMResult(posteriors=result.posteriors, priors=result.priors, confusion=result.confusion,
                        log_likelihood=result.log_likelihood, objective=result.objective,
                        n_iter=ml.n_iter + result.n_iter, converged=result.converged)

    def _store(self, result: EMResult) -> None:
        self.posteriors_ = result.posteriors.T  # (N, K) view of class-major storage
        self.priors_ = result.priors
        self.confusion_ = result.confusion
        self.log_likelihood_ = result.log_likelihood
        self.objective_ = result.objective
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged

    def fit_summary(self) -> dict[str, Any]:
        summary = em_fit_summary(self)
        if self.learned_alpha_pi(np.zeros((0, 2))) is not None:
            summary["alpha_pi"] = (float(self.alpha_pi_) if np.ndim(self.alpha_pi_) == 0
                                   else np.round(self.alpha_pi_, 6).tolist())
        return summary


@dataclass(frozen=True)
class Method:
    """The one declaration of an aggregation method, written next to its estimator; the registry
    (:mod:`stableval.aggregate.registry`) lists them, and every analysis reads them from there.

    Attributes:
        name: the name users type (``--method``, ``score_agents(table, ["stableval"])``).
        label: short label for table headers (``"STABLEVAL"``).
        title: long name for legends and docs (``"STABLEVAL (Bayesian Dawid–Skene)"``).
        colour: its colour in every figure.
        estimator: the estimator class; ``estimator(**params)`` builds one.
        credit: ``"soft"`` — a response earns the posterior expected credit; ``"hard"`` — the credit of its most
            probable level (exact ties share the credit equally).
        batch: how the simulator fits many small problems at once: ``"em"`` (the batched EM; the estimator is an
            :class:`EMAggregator`), ``"stacked"`` (a per-response method: one fit of the block-diagonal matrix of
            all problems gives each problem's own result), ``"each"`` (one fit per problem).
        rater_model: the fit estimates each rater's confusion matrix (``confusion_``, ``priors_``), so
            ``diagnose`` can judge the raters with it.
        default: part of the default method set of ``score``, ``stability``, ``report`` and ``ablate``.
        primary: the headline method when it is among those chosen: the leaderboard is sorted by it, and its win
            probabilities and rater model are the ones reported first.
        summary: one sentence for ``--help`` and the docs.
    """

    name: str
    label: str
    title: str
    colour: str
    estimator: type[Aggregator]
    credit: Literal["soft", "hard"] = "soft"
    batch: Literal["em", "stacked", "each"] = "each"
    rater_model: bool = False
    default: bool = True
    primary: bool = False
    summary: str = ""

    def build(self, **params: Any) -> Aggregator:
        """A new, unfitted estimator with these hyper-parameters (the rest at their defaults); an unknown name
        raises ``ValueError`` listing the parameters that exist."""
        names = self.estimator.parameter_names()
        for name in params:
            if name not in names:
                raise ValueError(f"{self.name} has no parameter {name!r}; its parameters: "
                                 + (", ".join(names) or "none"))
        return self.estimator(**params)

    def credit_distribution(self, posteriors: np.ndarray) -> np.ndarray:
        """(N, K) distribution whose expected credit is the method's item credit, from the fitted posteriors."""
        return hard_distribution(posteriors) if self.credit == "hard" else np.asarray(posteriors)


def hard_distribution(probabilities: np.ndarray, *, atol: float = 1e-12) -> np.ndarray:
    """One-hot of the most probable level per row; exact ties share the mass equally.

    >>> hard_distribution(np.array([[0.2, 0.8], [0.5, 0.5]]))
    array([[0. , 1. ],
           [0.5, 0.5]])
    """
    top = np.array(probabilities[:, 0], dtype=float)  # the row maxima, a column at a time (K is small)
    for level in range(1, probabilities.shape[1]):
        np.maximum(top, probabilities[:, level], out=top)
    winners = probabilities >= (top - atol)[:, None]
    n_winners = winners.sum(axis=1)
    out = winners.astype(float)
    shared = np.flatnonzero(n_winners != 1)  # ties (and NaN rows, 0 / 0) divide; a lone winner keeps its 1.0
    if shared.size:
        out[shared] = out[shared] / n_winners[shared, None]
    return out


def clamp_gold(posteriors: np.ndarray, gold: np.ndarray | None) -> None:
    """Set the (N, K) posteriors of responses with a known level (``gold`` >= 0) to that level, in place."""
    if gold is not None:
        known = np.flatnonzero(gold >= 0)
        posteriors[known] = np.eye(posteriors.shape[1])[gold[known]]


def softmax_posteriors(logits: np.ndarray, gold: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Row-wise softmax of (N, K) log joint probabilities (responses with a known ``gold`` level clamped to it) and
    the log-likelihood, the sum of the rows' log normalisers.

    >>> posteriors, log_likelihood = softmax_posteriors(np.log(np.array([[0.1, 0.3], [0.2, 0.2]])), np.array([-1, 0]))
    >>> posteriors.round(12).tolist(), round(log_likelihood, 6) == round(float(np.log(0.4) + np.log(0.4)), 6)
    ([[0.25, 0.75], [1.0, 0.0]], True)
    """
    from scipy.special import logsumexp

    normaliser = logsumexp(logits, axis=1, keepdims=True)
    posteriors = np.exp(logits - normaliser)
    clamp_gold(posteriors, gold)
    return posteriors, float(normaliser.sum())


def gold_codes(table: AnnotationTable, gold: GoldLabels | None) -> np.ndarray | None:
    """(N,) known level per response (-1 = unknown) from {(item, agent): level name or code} or an array."""
    if gold is None:
        return None
    if isinstance(gold, np.ndarray):
        codes = np.asarray(gold, dtype=np.int64)
        if codes.shape != (table.n_responses,) or codes.max(initial=-1) >= table.n_levels or codes.min(
            initial=-1
        ) < -1:
            raise InputError("gold array must have one level code (or -1) per response", value=codes.shape,
                             allowed=f"shape ({table.n_responses},), values -1..{table.n_levels - 1}")
        return codes
    import pandas as pd

    codes = np.full(table.n_responses, -1, dtype=np.int64)
    if not gold:
        return codes
    responses = pd.MultiIndex.from_arrays([table.items.to_numpy()[table.response_item],
                                           table.agents.to_numpy()[table.response_agent]])
    keys = list(gold)
    positions = responses.get_indexer(pd.MultiIndex.from_tuples([(str(k[0]), str(k[1])) for k in keys]))
    for key, response in zip(keys, positions, strict=True):
        level = gold[key]
        if response < 0:
            raise InputError("gold label for a response that has no judgments", column="gold", value=key,
                             allowed="(item, agent) pairs present in the table")
        if isinstance(level, str) and level in table.levels:
            codes[response] = table.levels.index(level)
        elif isinstance(level, int | np.integer) and 0 <= int(level) < table.n_levels:
            codes[response] = int(level)
        else:
            raise InputError("gold level not among the levels", column="gold", value=level,
                             allowed=", ".join(table.levels))
    return codes
