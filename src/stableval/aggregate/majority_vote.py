"""Majority vote: the baseline every evaluation starts from.

Soft vote shares per response, and a hard label with an explicit tie policy. The default, ``ties="split"``,
shares a tied response's mass equally among its tied levels, so its credit is the mean credit of those levels
(neither optimistic nor pessimistic, and deterministic). ``ties="first"`` gives a tie to the tied level whose
first judgment comes first in the table (file order), as Python's ``collections.Counter(labels).most_common(1)``
does when the labels are listed in file order: the convention behind the STABLEVAL paper's majority-vote columns.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": ["q1"] * 4 + ["q2"] * 2, "agent": "A", "rater": list("abcdab"),
...                       "label": [2, 2, 1, 0, 2, 0]})
>>> table = AnnotationTable.from_frame(frame, levels=("low", "mid", "high"))
>>> MajorityVote().fit(table).posteriors_.tolist()
[[0.0, 0.0, 1.0], [0.5, 0.0, 0.5]]
>>> MajorityVote(ties="lowest").fit(table).labels_.tolist(), MajorityVote(ties="first").fit(table).labels_.tolist()
([2, 0], [2, 2])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np

from stableval.aggregate._base import Aggregator
from stableval.aggregate.methods import TIE_POLICIES as TIE_POLICIES, declared
from stableval.aggregate.responses import ResponseMatrix, WholeMatrix

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp


def lowest_winner(winners_by_level: np.ndarray) -> np.ndarray:
    """Per column of ``winners_by_level`` (K, N) bool, the lowest level that is True (0 where none is): the
    same as ``winners_by_level.argmax(axis=0)``, a level at a time.

    >>> lowest_winner(np.array([[False, True, False], [True, True, False], [True, False, False]])).tolist()
    [1, 0, 0]
    """
    labels = np.zeros(winners_by_level.shape[1], dtype=np.intp)
    for level in range(winners_by_level.shape[0] - 1, 0, -1):
        labels[winners_by_level[level]] = level
    labels[winners_by_level[0]] = 0
    return labels


#: the declaration this estimator reads (its hyper-parameters: :attr:`MajorityVote.PARAMETERS`)
METHOD = declared("mv")


class MajorityVote(Aggregator):
    """Majority vote with an explicit tie policy.

    Hyper-parameters (:attr:`PARAMETERS`): ``ties``, the tie rule, and ``seed``. ``"first"`` is Python's
    ``Counter.most_common`` convention on the labels in file order (the STABLEVAL paper's majority-vote columns);
    ``"lowest"`` / ``"highest"`` are pessimistic / optimistic.

    ``"first"`` needs the order of the judgments, which :meth:`fit` takes from the table (its rows are in file
    order; a partitioned table keeps each level's first row). :meth:`fit_matrix` sees only the response matrix,
    where that order is lost, unless it is given ``first_seen`` (:func:`~stableval.aggregate.responses.first_seen`);
    without it the order is treated as unknown, i.e. exchangeable, and the first-seen tied level is then equally
    likely to be any tied level (they have the same number of judgments), so a tie is broken as ``"random"`` does,
    with ``seed``. ``tie_break_`` records which rule was applied. That
    is what the simulator's stacked fit (simulated judgments come in random order) and bare-matrix callers get;
    ``score --refit`` keeps the point fit's labels, since resampling responses does not change a per-response
    method's labels.

    Attributes after ``fit``:
        vote_shares_: (N, K) share of each level among a response's judgments (the soft vote).
        posteriors_: (N, K) the hard vote as a distribution (one-hot, or split over ties): what the method
            reports for each response (its credit, and its accuracy against gold).
        labels_: (N,) the majority level (for ``split``, the lowest tied level; see ``tied_``).
        tied_: (N,) whether the top vote count was shared by several levels.
        tie_break_: the tie rule applied: ``ties``, except ``"random"`` for ``"first"`` without the file order.
    """

    PARAMETERS = METHOD.params

    def __init__(self, ties: str = "split", seed: int | None = 0) -> None:
        self._set_checked(ties=ties, seed=seed)

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None, *, first_seen: np.ndarray | None = None) -> Self:
        """Fit on a response matrix (responses × rater·K + label) directly; responses with a known ``gold``
        level (>= 0) take it. ``first_seen`` (N, K): where each level's first judgment of each response comes in
        file order (:func:`~stableval.aggregate.responses.first_seen`), for ``ties="first"``; without it that
        policy breaks ties at random."""
        return self.fit_responses(WholeMatrix(X, n_raters, n_levels, gold, first_seen))

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """The vote from the label counts per response (and, for ``ties="first"``, the file order of the
        judgments), whether the matrix is in memory or partitioned."""
        n_levels, gold = responses.n_levels, responses.gold
        counts = responses.vote_counts()
        first_seen = responses.first_seen() if self.ties == "first" else None
        if first_seen is not None and np.shape(first_seen) != counts.shape:
            raise ValueError(f"first_seen must have shape {counts.shape} (responses × levels), "
                             f"got {np.shape(first_seen)}")
        if gold is not None and (gold >= 0).any():
            known = gold >= 0
            counts[known] = np.eye(n_levels)[gold[known]]
        # column by column (K is small): reductions along a row of K values cost more than K column passes, and
        # views of the columns add no (N, K) copy to the peak memory
        totals, top = counts[:, 0].copy(), counts[:, 0].copy()
        for level in range(1, n_levels):
            totals += counts[:, level]
            np.maximum(top, counts[:, level], out=top)
        self.vote_shares_ = counts / np.where(totals > 0, totals, 1.0)[:, None]
        winners_by_level = np.empty((n_levels, counts.shape[0]), dtype=bool)
        for level in range(n_levels):
            np.equal(counts[:, level], top, out=winners_by_level[level])
        n_winners = winners_by_level.sum(axis=0, dtype=np.int8 if n_levels < 128 else np.int64)
        self.tied_ = n_winners > 1
        rule = "random" if self.ties == "first" and first_seen is None else self.ties
        self.tie_break_ = rule
        if rule == "split":  # hard_distribution(counts, atol=0.0), from the winners already found
            self.posteriors_ = np.empty(counts.shape)
            for level in range(n_levels):  # a lone winner: 1.0
                np.divide(winners_by_level[level], n_winners, out=self.posteriors_[:, level])
            self.labels_ = lowest_winner(winners_by_level)
            return self
        winners = winners_by_level.T
        if rule == "first":
            assert first_seen is not None
            labels = np.where(winners, np.asarray(first_seen, dtype=np.int64), np.iinfo(np.int64).max).argmin(axis=1)
        elif rule == "lowest":
            labels = lowest_winner(winners_by_level)
        elif rule == "highest":
            labels = n_levels - 1 - winners[:, ::-1].argmax(axis=1)
        else:  # random: a uniform draw among the tied levels of each response
            noise = np.random.default_rng(self.seed).random(counts.shape)
            labels = np.where(winners, noise, -1.0).argmax(axis=1)
        self.labels_ = labels
        self.posteriors_ = np.eye(n_levels)[labels]
        return self
