"""Wawa (Worker Agreement with Aggregate): majority vote weighted by each rater's agreement with the majority.

Source: the "Worker Agreement with Aggregate" baseline as implemented in crowd-kit (D. Ustalov, N. Pavlichenko
and B. Tseitlin (2024), "Learning from Crowds with Crowd-Kit", Journal of Open Source Software 9(96):6227;
``crowdkit.aggregation.Wawa``), described there as a heuristic used in Toloka's production pipelines. Three
steps: (1) the majority level of each response (ties to the lowest level, as crowd-kit's ``idxmax``); (2) each
rater's skill = the share of their judgments equal to that majority; (3) the vote weighted by those skills. The
weighted vote shares are the reported distribution (crowd-kit's ``probas_``); a response whose raters all have
skill 0 keeps its plain vote shares (crowd-kit would give 0/0).

The judgments are read once from the response matrix as flat arrays (:class:`Judgments`), and each step is an
``np.bincount``: a million judgments take a few tens of milliseconds.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
...                       "label": [1, 1, 0, 0, 0, 1, 1, 0, 1]})
>>> model = Wawa().fit(AnnotationTable.from_frame(frame, levels=("no", "yes")))
>>> model.skills_.round(3).tolist(), model.posteriors_[0].round(3).tolist()
([1.0, 0.667, 0.333], [0.167, 0.833])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np

from stableval.aggregate._base import Aggregator, Method

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp

__all__ = ["METHOD", "Judgments", "Wawa"]


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


def vote_labels(scores: np.ndarray, gold: np.ndarray | None = None) -> np.ndarray:
    """(N,) the level with the highest score per response (lowest level on ties), or the ``gold`` level (>= 0)."""
    labels = np.asarray(scores.argmax(axis=1))
    if gold is not None:
        labels = np.where(gold >= 0, gold, labels)
    return labels


def weighted_shares(judgments: Judgments, weights: np.ndarray, gold: np.ndarray | None = None) -> np.ndarray:
    """(N, K) the ``weights``-weighted vote shares per response (plain vote shares where every weight is 0);
    responses with a ``gold`` level (>= 0) are one-hot on it."""
    scores = judgments.vote(weights)
    totals = scores.sum(axis=1, keepdims=True)
    plain = judgments.vote()
    shares = np.where(totals > 0, scores / np.where(totals > 0, totals, 1.0),
                      plain / np.maximum(plain.sum(axis=1, keepdims=True), 1e-300))
    if gold is not None and (gold >= 0).any():
        known = gold >= 0
        shares[known] = np.eye(judgments.n_levels)[gold[known]]
    return shares


class Wawa(Aggregator):
    """Wawa: the vote weighted by each rater's agreement with the majority vote (no hyper-parameters).

    Attributes after ``fit``: ``posteriors_`` (N, K) the weighted vote shares, ``accuracy_`` (R,) each rater's
    agreement with the majority (``skills_`` by rater name).
    """

    def __init__(self) -> None:
        pass

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> Self:
        """Fit on a response matrix (responses × rater·K + label); ``gold`` levels (>= 0) replace the majority."""
        judgments = Judgments(X, n_raters, n_levels)
        majority = vote_labels(judgments.vote(), gold)
        self.accuracy_ = judgments.agreement(majority)
        self.posteriors_ = weighted_shares(judgments, self.accuracy_, gold)
        return self

    def rater_skills(self) -> np.ndarray:
        """Each rater's agreement with the majority vote (the ``skills_`` view)."""
        return np.asarray(self.accuracy_)


METHOD = Method(
    name="wawa", label="Wawa", title="Wawa (worker agreement with aggregate)", colour="#bcbd22", estimator=Wawa,
    credit="hard", batch="stacked", rater_model=False, default=False,
    summary="Majority vote weighted by each rater's agreement with the plain majority (crowd-kit's Wawa).",
)
