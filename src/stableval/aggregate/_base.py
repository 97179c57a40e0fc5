"""What every aggregator shares: the estimator shape, its parameters, its labelled results and gold labels.

Estimators follow scikit-learn (Pedregosa et al. 2011, JMLR 12; Buitinck et al. 2013, "API design for machine
learning software"): hyper-parameters only in ``__init__``, stored under their own names; :meth:`get_params` and
:meth:`set_params` are read off ``__init__``'s signature, :func:`clone` builds an unfitted copy, ``fit`` returns
the estimator and results live in trailing-underscore attributes that exist only after fitting.

Every per-response aggregator fits through one path, :meth:`Aggregator.fit_matrix` on the sparse response matrix
(responses × rater·K + label) of :meth:`AnnotationTable.response_matrix`; :meth:`Aggregator.fit` builds that matrix
from a table. Each registered method is declared once by a :class:`~stableval.aggregate.method.Method` next to its
estimator; EM estimators build on :class:`~stableval.aggregate.em_fit.EMAggregator`.

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
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

import numpy as np

from stableval._options import Option
from stableval.aggregate.responses import ResponseMatrix, WholeMatrix
from stableval.errors import InputError, NotFittedError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import scipy.sparse as sp

    from stableval.data.frames import TableLike
    from stableval.data.table import AnnotationTable

__all__ = [
    "CROWDKIT_NAMES",
    "Aggregator",
    "Estimator",
    "GoldLabels",
    "clamp_gold",
    "clone",
    "gold_codes",
    "hard_distribution",
    "softmax_posteriors",
]

#: Known true levels: {(item, agent): level name or code}, or an (N,) code array (-1 = unknown).
GoldLabels = Mapping[tuple[str, str], "str | int"] | np.ndarray


#: crowd-kit's parameter names → stableval's (an estimator given crowd-kit's name says which to use)
CROWDKIT_NAMES = {"n_iter": "max_iter", "random_state": "seed"}


class Estimator:
    """Hyper-parameters read off ``__init__`` (``get_params``, ``set_params``, a ``repr`` that shows the ones not
    at their defaults), and results in trailing-underscore attributes that raise a clear error before ``fit``.

    Each hyper-parameter is declared once, in :attr:`PARAMETERS`: what it does and the values allowed (a
    :class:`~stableval._options.Option`; a registered method's estimator reads them from its declaration,
    :mod:`stableval.aggregate.methods`, whose defaults ``__init__`` repeats), as scikit-learn's
    ``_parameter_constraints`` declares them. ``__init__`` stores the values through :meth:`_set_checked`, which
    refuses a value outside its declaration; ``--param`` parses text with it, and the docs table and the command
    line's help are written from it.
    """

    #: every hyper-parameter's declaration, in ``__init__``'s order (a default left out, ``None``: ``__init__``'s)
    PARAMETERS: ClassVar[tuple[Option, ...]] = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """Refuse an unknown parameter naming the allowed ones, and for crowd-kit's names (:data:`CROWDKIT_NAMES`)
        stableval's name and the crowd-kit-compatible class."""
        allowed = cls.parameter_names()
        for key in kwargs:
            if key not in allowed:
                ours = CROWDKIT_NAMES.get(key)
                hint = (f"; stableval's name is {ours} (or use stableval.crowdkit.{cls.__name__}, which takes "
                        f"crowd-kit's names)" if ours in allowed else "")
                raise TypeError(f"{cls.__name__} got an unexpected parameter {key!r}{hint}; allowed: "
                                + ", ".join(allowed))
        return super().__new__(cls)

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

    @classmethod
    def declared_params(cls) -> tuple[Option, ...]:
        """Every hyper-parameter's declaration with its default from ``__init__``, in ``__init__``'s order; a
        ``TypeError`` names the parameters ``__init__`` and :attr:`PARAMETERS` do not share, or a default declared
        (not ``None``) that ``__init__`` does not repeat."""
        return _declared(cls)

    def _set_checked(self, **values: Any) -> None:
        """Store each hyper-parameter under its own name, checked against its declaration (``ValueError``
        naming it, the value and what is allowed)."""
        options = {option.name: option for option in self.declared_params()}
        for name, value in values.items():
            setattr(self, name, options[name].check(value))

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


_DECLARED: dict[type, tuple[Option, ...]] = {}


def _declared(cls: type[Estimator]) -> tuple[Option, ...]:
    if cls in _DECLARED:
        return _DECLARED[cls]
    defaults = cls.default_params()
    declared = {option.name: option for option in cls.PARAMETERS}
    if set(declared) != set(defaults):
        raise TypeError(f"{cls.__name__}.PARAMETERS must declare exactly the parameters of __init__: missing "
                        f"{sorted(set(defaults) - set(declared))}, unknown {sorted(set(declared) - set(defaults))}")
    differ = [f"{name}={declared[name].default!r} declared, {default!r} in __init__"
              for name, default in defaults.items()
              if declared[name].default is not None and declared[name].default != default]
    if differ:
        raise TypeError(f"{cls.__name__}.__init__'s defaults must be the declared ones: {'; '.join(differ)}")
    _DECLARED[cls] = tuple(replace(declared[name], default=default) for name, default in defaults.items())
    return _DECLARED[cls]


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
        """Fit on an annotation table (what :meth:`fit` calls after converting its input): its response matrix
        (and file order) through :meth:`fit_responses`."""
        self.fit_responses(WholeMatrix.of_table(table, gold_codes(table, gold)))

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int, gold: np.ndarray | None = None) -> Self:
        """Fit on a response matrix (responses × rater·K + label) directly; ``gold`` (N,) codes, -1 = unknown.

        A subclass implements this or :meth:`fit_responses`; by default it is :meth:`fit_responses` on the whole
        matrix."""
        if type(self).fit_responses is Aggregator.fit_responses:
            raise NotImplementedError(f"{type(self).__name__} implements neither fit_responses nor fit_matrix")
        return self.fit_responses(WholeMatrix(X, n_raters, n_levels, gold))

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """Fit on the statistics of a response matrix, whole in this process or in partitions on a Dask cluster
        (:mod:`stableval.aggregate.responses`: vote counts, the E-step and its expected counts, rater-weighted
        votes). A method that fits from these alone implements this and declares ``distributed=True`` in its
        registry entry: it then runs on both kinds of table with the same numbers. By default the whole matrix is
        fitted with :meth:`fit_matrix` (a method that needs every judgment at once)."""
        return self.fit_matrix(responses.matrix(), responses.n_raters, responses.n_levels, gold=responses.gold)

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


def level_log_priors(given: np.ndarray, gold: np.ndarray | None = None) -> np.ndarray:
    """(K,) log class priors uniform over the levels some judgment gives (``given``: (K,) judgments per level) or
    some ``gold`` code names, and −inf on the others: a level nobody used gets no mass (GLAD, MACE).

    >>> level_log_priors(np.array([0.0, 4.0, 2.0])).round(4).tolist()
    [-inf, -0.6931, -0.6931]
    """
    used = np.asarray(given) > 0
    if gold is not None:
        used[np.unique(gold[gold >= 0])] = True
    if not used.any():
        used[:] = True
    return np.where(used, -np.log(used.sum()), -np.inf)


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
