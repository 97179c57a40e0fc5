"""crowd-kit's names over stableval's aggregators: swap ``from crowdkit.aggregation import ...`` for
``from stableval.crowdkit import ...`` and a crowd-kit script runs unchanged.

Each class takes crowd-kit's constructor parameters (``DawidSkene(n_iter=100, tol=1e-5)``; ``n_iter`` becomes
stableval's ``max_iter``, ``random_state`` its ``seed``), fits on a DataFrame (``task, worker, label``, or any
columns :func:`~stableval.data.frames.as_table` reads; repeated judgments are kept, as crowd-kit keeps them) or a
pyarrow Table, and answers as crowd-kit does: ``fit_predict`` a Series of labels indexed by ``task``,
``fit_predict_proba`` a DataFrame task × label, and after ``fit`` the attributes ``labels_``, ``probas_``,
``skills_`` (indexed by ``worker``, where the model has a per-worker skill) and ``errors_`` (indexed by
(``worker``, ``label``), where it has confusion matrices). Integer task, worker and label ids come back as
integers. The fitted stableval estimator is ``model_`` (its numeric arrays: ``model_.posteriors_``, ...).

Classes: ``MajorityVote``, ``DawidSkene``, ``OneCoinDawidSkene``, ``Wawa``, ``ZeroBasedSkill``, and ``GLAD``,
``MACE`` when stableval has them. Differences from crowd-kit 1.4.2: the EM models stop on stableval's rule (the
log-likelihood gains less than ``tol`` relative), where crowd-kit stops as soon as its per-judgment objective fails
to rise by ``tol`` (for ``OneCoinDawidSkene`` that can be after 3 iterations, far from convergence); majority-vote
ties go to the lowest label (crowd-kit's go to whichever label pandas lists first); ``predict`` on new data and
golden labels are not offered.

>>> import pandas as pd
>>> df = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": [7, 8, 9, 7, 8, 9], "label": [1, 1, 0, 0, 0, 1]})
>>> DawidSkene(n_iter=100).fit_predict(df).to_dict()
{1: 1, 2: 0}
>>> Wawa().fit(df).skills_.to_dict()
{7: 1.0, 8: 1.0, 9: 0.0}
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate import Aggregator

__all__ = ["DawidSkene", "MajorityVote", "OneCoinDawidSkene", "Wawa", "ZeroBasedSkill"]

#: crowd-kit's parameter names → stableval's
RENAMED = {"n_iter": "max_iter", "random_state": "seed"}


class CrowdKitAggregator:
    """What every crowd-kit-style class shares: a stableval estimator (``model_`` after ``fit``) and crowd-kit's
    result shapes."""

    #: "module:Class" of the stableval estimator
    native: str = ""

    def __init__(self, **params: Any) -> None:
        module, _, name = self.native.partition(":")
        estimator = getattr(importlib.import_module(module), name)
        own = estimator.parameter_names()
        native_params = {}
        for key, value in params.items():
            target = RENAMED.get(key, key) if RENAMED.get(key, key) in own else key
            if target not in own:
                allowed = sorted({k for k, v in RENAMED.items() if v in own} | set(own) - set(RENAMED.values()))
                raise TypeError(f"{type(self).__name__} got an unexpected parameter {key!r}; allowed: "
                                + ", ".join(allowed))
            native_params[target] = value
        self._params = params
        self._estimator: Aggregator = estimator(**native_params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._params.items())})"

    def fit(self, data: Any) -> Self:
        """Fit on a DataFrame (``task, worker, label``) or a pyarrow Table; returns the aggregator."""
        from stableval.data.frames import as_table

        frame = data.to_pandas() if hasattr(data, "to_pandas") and not isinstance(data, pd.DataFrame) else data
        self._kinds = _integer_roles(frame) if isinstance(frame, pd.DataFrame) else {}
        self._estimator.fit(as_table(frame, duplicates="keep"))
        self.model_ = self._estimator
        return self

    def fit_predict(self, data: Any) -> pd.Series:
        """Fit, then the most probable label per task (``labels_``)."""
        return self.fit(data).labels_

    def fit_predict_proba(self, data: Any) -> pd.DataFrame:
        """Fit, then each task's distribution over labels (``probas_``)."""
        return self.fit(data).probas_

    @property
    def labels_(self) -> pd.Series:
        labels = self._model()._label_series()
        return pd.Series(self._labels(labels.to_numpy()), index=self._tasks(labels.index), name="agg_label")

    @property
    def probas_(self) -> pd.DataFrame:
        probas = self._model()._proba_frame()
        return pd.DataFrame(probas.to_numpy(), index=self._tasks(probas.index),
                            columns=pd.Index(self._labels(probas.columns.to_numpy()), name="label"))

    @property
    def skills_(self) -> pd.Series:
        skills = self._model().skills_
        return pd.Series(skills.to_numpy(), index=self._workers(skills.index), name="skill")

    @property
    def errors_(self) -> pd.DataFrame:
        errors = self._model().errors_
        workers = self._workers(errors.index.get_level_values(0))
        given = self._labels(errors.index.get_level_values(1).to_numpy())
        return pd.DataFrame(errors.to_numpy(), index=pd.MultiIndex.from_arrays([workers, given],
                                                                             names=["worker", "label"]),
                            columns=pd.Index(self._labels(errors.columns.to_numpy()), name="label"))

    def _model(self) -> Aggregator:
        from stableval.errors import NotFittedError

        if "model_" not in self.__dict__:
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(data) first")
        return self._estimator

    def _tasks(self, index: pd.Index) -> pd.Index:
        if isinstance(index, pd.MultiIndex):
            return index
        values = index.to_numpy()
        return pd.Index(values.astype(np.int64) if self._kinds.get("item") else values, name="task")

    def _workers(self, index: pd.Index) -> pd.Index:
        values = np.asarray(index)
        return pd.Index(values.astype(np.int64) if self._kinds.get("rater") else values, name="worker")

    def _labels(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values).astype(np.int64) if self._kinds.get("label") else np.asarray(values)


def _integer_roles(frame: pd.DataFrame) -> dict[str, bool]:
    """Which of the item (task), rater (worker) and label columns hold integers, so ids come back as integers."""
    from stableval.data.columns import ROLE_ALIASES, resolve_columns

    try:
        found = resolve_columns(frame, ROLE_ALIASES, None, source="<DataFrame>", optional=("agent",))
    except ValueError:
        return {}  # as_table reports the missing column
    return {role: found.get(role) is not None and pd.api.types.is_integer_dtype(frame[str(found[role])])
            for role in ("item", "rater", "label")}


class MajorityVote(CrowdKitAggregator):
    """crowd-kit's ``MajorityVote()``: ``probas_`` are the vote shares, ``skills_`` each worker's agreement with
    the majority; ties go to the lowest label."""

    native = "stableval.aggregate.majority_vote:MajorityVote"

    def __init__(self) -> None:
        super().__init__(ties="lowest")
        self._params = {}

    @property
    def probas_(self) -> pd.DataFrame:
        model = self._model()
        labels = model._proba_frame()
        shares = np.asarray(model.vote_shares_)
        return pd.DataFrame(shares, index=self._tasks(labels.index),
                            columns=pd.Index(self._labels(labels.columns.to_numpy()), name="label"))

    @property
    def skills_(self) -> pd.Series:
        from stableval.aggregate import Judgments

        model = self._model()
        table = model._fitted_names()
        agreement = Judgments(table.response_matrix(), table.n_raters, table.n_levels).agreement(
            np.asarray(model.posteriors_).argmax(axis=1))
        return pd.Series(agreement, index=self._workers(pd.Index(table.raters)), name="skill")


class DawidSkene(CrowdKitAggregator):
    """crowd-kit's ``DawidSkene(n_iter=100, tol=1e-5)`` (:class:`stableval.aggregate.DawidSkene`)."""

    native = "stableval.aggregate.dawid_skene:DawidSkene"

    def __init__(self, n_iter: int = 100, tol: float = 1e-5) -> None:
        super().__init__(n_iter=n_iter, tol=tol)
        self.n_iter, self.tol = n_iter, tol


class OneCoinDawidSkene(CrowdKitAggregator):
    """crowd-kit's ``OneCoinDawidSkene(n_iter=100, tol=1e-5)`` (:class:`stableval.aggregate.OneCoinDawidSkene`)."""

    native = "stableval.aggregate.one_coin:OneCoinDawidSkene"

    def __init__(self, n_iter: int = 100, tol: float = 1e-5) -> None:
        super().__init__(n_iter=n_iter, tol=tol)
        self.n_iter, self.tol = n_iter, tol


class Wawa(CrowdKitAggregator):
    """crowd-kit's ``Wawa()`` (:class:`stableval.aggregate.Wawa`)."""

    native = "stableval.aggregate.wawa:Wawa"

    def __init__(self) -> None:
        super().__init__()


class ZeroBasedSkill(CrowdKitAggregator):
    """crowd-kit's ``ZeroBasedSkill(n_iter=100, lr_init=1.0, lr_steps_to_reduce=20, lr_reduce_factor=0.5,
    eps=1e-5)`` (:class:`stableval.aggregate.ZeroBasedSkill`)."""

    native = "stableval.aggregate.zero_based_skill:ZeroBasedSkill"

    def __init__(self, n_iter: int = 100, lr_init: float = 1.0, lr_steps_to_reduce: int = 20,
                 lr_reduce_factor: float = 0.5, eps: float = 1e-5) -> None:
        super().__init__(n_iter=n_iter, lr_init=lr_init, lr_steps_to_reduce=lr_steps_to_reduce,
                         lr_reduce_factor=lr_reduce_factor, eps=eps)


#: crowd-kit class name → stableval module, for the models picked up only when stableval has them
OPTIONAL = {"GLAD": "glad", "MACE": "mace"}


def __getattr__(name: str) -> Any:
    """``GLAD`` and ``MACE``: crowd-kit-style classes over stableval's estimators of those names, when present
    (crowd-kit's parameter names map as for the others; any the estimator lacks is refused with the allowed
    names)."""
    module = OPTIONAL.get(name)
    if module is None or importlib.util.find_spec(f"stableval.aggregate.{module}") is None:
        raise AttributeError(f"module 'stableval.crowdkit' has no attribute {name!r}")
    cls = type(name, (CrowdKitAggregator,), {"native": f"stableval.aggregate.{module}:{name}",
                                             "__doc__": f"crowd-kit's ``{name}`` (stableval.aggregate.{name})."})
    globals()[name] = cls
    return cls
