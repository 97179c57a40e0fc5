"""crowd-kit's input, read once: the ``task, worker, label`` rows of a DataFrame as integer codes, the original
task, worker and label values kept (with their dtypes: booleans stay booleans, integers integers) to label every
result as crowd-kit does.

>>> import pandas as pd
>>> answers = Answers.of(pd.DataFrame({"task": [1, 1, 2], "worker": ["a", "b", "a"], "label": [True, False, True]}))
>>> answers.n_tasks, answers.n_workers, answers.labels.tolist()
(2, 2, [False, True])
>>> answers.label_series(np.array([1, 0])).to_dict()
{1: True, 2: False}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval.errors import MissingColumnError

__all__ = ["COLUMNS", "Answers", "answers_frame", "weighted_votes"]

#: the columns crowd-kit reads
COLUMNS = ("task", "worker", "label")


def answers_frame(data: Any, columns: Sequence[str] = COLUMNS, what: str = "data") -> pd.DataFrame:
    """``data`` (a DataFrame or a pyarrow Table) as a DataFrame holding ``columns``; a missing one raises
    :class:`~stableval.errors.MissingColumnError` (a ``KeyError``, as crowd-kit raises)."""
    if hasattr(data, "to_pandas") and not isinstance(data, pd.DataFrame | pd.Series):
        data = data.to_pandas()
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame with columns {', '.join(columns)}; got "
                        f"{type(data).__name__}")
    for column in columns:
        if column not in data.columns:
            raise MissingColumnError(f"{what} has no column {column!r}", column=column,
                                     allowed=", ".join(map(str, data.columns)) or "no columns")
    return data


def _codes(values: pd.Series, sort: bool = True) -> tuple[np.ndarray, pd.Index]:
    """Integer codes and the distinct values, sorted when they sort (``sort``), else in order of first
    appearance."""
    try:
        codes, uniques = pd.factorize(values, sort=sort)
    except TypeError:  # mixed types that do not compare
        codes, uniques = pd.factorize(values, sort=False)
    return np.asarray(codes, dtype=np.int64), pd.Index(uniques)


@dataclass(frozen=True)
class Answers:
    """The rows as codes: ``task``, ``worker``, ``label`` (J,) index the distinct ``tasks``, ``workers`` and
    ``labels``, each sorted as crowd-kit's pandas group-bys sort them (in order of first appearance when the values
    do not compare, or for a model whose random start crowd-kit draws in that order)."""

    tasks: pd.Index
    workers: pd.Index
    labels: pd.Index
    task: np.ndarray
    worker: np.ndarray
    label: np.ndarray

    @classmethod
    def of(cls, data: Any, what: str = "data", *, sort: bool = True) -> Answers:
        """The answers of ``data``; ``sort=False``: tasks, workers and labels in order of first appearance."""
        frame = answers_frame(data, what=what)
        task, tasks = _codes(frame["task"], sort)
        worker, workers = _codes(frame["worker"], sort)
        label, labels = _codes(frame["label"], sort)
        return cls(tasks.rename("task"), workers.rename("worker"), labels, task, worker, label)

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)

    @property
    def n_workers(self) -> int:
        return len(self.workers)

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def empty(self) -> bool:
        return len(self.task) == 0

    def matrix(self) -> sp.csr_matrix:
        """The (tasks × workers·labels) count matrix stableval's estimators fit (repeated answers add up)."""
        k = self.n_labels
        ones = np.ones(len(self.task))
        return sp.csr_matrix((ones, (self.task, self.worker * k + self.label)),
                             shape=(self.n_tasks, self.n_workers * k))

    def votes(self, weights: np.ndarray | None = None) -> np.ndarray:
        """(tasks, labels) votes, each answer weighted by its worker's ``weights`` (None: 1)."""
        return weighted_votes(self.task, self.label, None if weights is None else weights[self.worker],
                              self.n_tasks, self.n_labels)

    def gold(self, true_labels: Any) -> np.ndarray | None:
        """(tasks,) label codes of the known tasks (``true_labels``: a Series by task), -1 elsewhere."""
        if true_labels is None:
            return None
        known = true_labels_series(true_labels)
        codes = np.full(self.n_tasks, -1, dtype=np.int64)
        where = self.tasks.get_indexer(known.index)
        label = self.labels.get_indexer(pd.Index(known.to_numpy()))
        usable = (where >= 0) & (label >= 0)
        codes[where[usable]] = label[usable]
        return codes

    # ------------------------------------------------------------------ results labelled as crowd-kit labels them
    def label_series(self, codes: np.ndarray) -> pd.Series:
        return pd.Series(self.labels.take(codes), index=self.tasks, name="agg_label")

    def probas_frame(self, probas: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(probas, index=self.tasks, columns=pd.Index(self.labels, name="label"))

    def worker_series(self, values: np.ndarray, name: str = "skill") -> pd.Series:
        return pd.Series(np.asarray(values, dtype=float), index=self.workers, name=name)

    def task_series(self, values: np.ndarray, name: str) -> pd.Series:
        return pd.Series(np.asarray(values, dtype=float), index=self.tasks, name=name)

    def label_priors(self, priors: np.ndarray) -> pd.Series:
        return pd.Series(np.asarray(priors, dtype=float), index=pd.Index(self.labels, name="label"), name="prior")

    def errors_frame(self, confusion: np.ndarray) -> pd.DataFrame:
        """The (R, K, K) confusion matrices [worker, true, given] as crowd-kit's ``errors_``: rows (worker, given
        label) for the labels each worker gave, columns the true label."""
        r, k = self.n_workers, self.n_labels
        index = pd.MultiIndex.from_product([self.workers, self.labels], names=["worker", "label"])
        frame = pd.DataFrame(np.asarray(confusion).transpose(0, 2, 1).reshape(r * k, k), index=index,
                             columns=pd.Index(self.labels))
        given = np.zeros(r * k, dtype=bool)
        given[self.worker * k + self.label] = True
        return frame[given]


def true_labels_series(true_labels: Any) -> pd.Series:
    """Known labels as a Series by task: a Series, or a DataFrame with ``task`` and ``label`` columns."""
    if isinstance(true_labels, pd.DataFrame):
        frame = answers_frame(true_labels, ("task", "label"), what="true_labels")
        return pd.Series(frame["label"].to_numpy(), index=pd.Index(frame["task"], name="task"))
    if not isinstance(true_labels, pd.Series):
        raise TypeError(f"true_labels must be a pandas Series of labels indexed by task; got "
                        f"{type(true_labels).__name__}")
    return true_labels


def weighted_votes(task: np.ndarray, label: np.ndarray, weight: np.ndarray | None, n_tasks: int,
                   n_labels: int) -> np.ndarray:
    """(tasks, labels) sums of the answers' weights (None: counts)."""
    return np.bincount(task * n_labels + label, weights=weight, minlength=n_tasks * n_labels).reshape(
        n_tasks, n_labels).astype(float)
