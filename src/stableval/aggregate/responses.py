"""What a fit reads of the judgments, wherever they are: the response matrix whole in this process
(:class:`WholeMatrix`) or cut into partitions on a Dask cluster
(:class:`~stableval.aggregate.distributed.PartitionedMatrix`).

A method whose fit needs only these statistics implements :meth:`Aggregator.fit_responses
<stableval.aggregate._base.Aggregator.fit_responses>` once, declares ``distributed=True`` in its registry entry,
and runs on both kinds of table with the same numbers:

* :meth:`ResponseMatrix.vote_counts` — (N, K) judgments of each level per response (majority vote, every start);
* :meth:`ResponseMatrix.e_steps` — the Dawid–Skene E-step and its expected counts
  (:class:`~stableval.aggregate.em.EStep`: Dawid–Skene, STABLEVAL, one-coin, ordinal raters);
* :meth:`ResponseMatrix.votes` — votes weighted per rater and each rater's agreement with them (:class:`Votes`:
  Wawa, Zero-Based Skill).

>>> import scipy.sparse as sp
>>> whole = WholeMatrix(sp.csr_matrix(np.array([[1.0, 0, 0, 1], [0, 1, 0, 1]])), n_raters=2, n_levels=2)
>>> whole.vote_counts().tolist(), whole.votes().agreement(None).tolist()
([[1.0, 1.0], [0.0, 2.0]], [0.75, 0.75])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import numpy as np
import scipy.sparse as sp

from stableval.aggregate.em import EStep, ResponseBlocks, expected_rows, vote_counts_of_matrix

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data.table import AnnotationTable

__all__ = ["Judgments", "MatrixVotes", "ResponseMatrix", "Votes", "WholeMatrix", "first_seen"]


class Votes(Protocol):
    """Votes weighted per rater, and each rater's agreement with them, over every judgment."""

    def agreement(self, weights: np.ndarray | None) -> np.ndarray:
        """(R,) each rater's share of judgments equal to the level of the ``weights``-weighted vote (R,; None: one
        each) of their responses (a judgment of one of t tied levels counts 1/t; the gold level where known); 0 for an
        unused rater."""
        ...

    def shares(self, weights: np.ndarray) -> np.ndarray:
        """(N, K) the ``weights``-weighted vote shares per response (plain shares where every weight is 0)."""
        ...

    def levels_given(self) -> int:
        """How many distinct levels the raters gave."""
        ...


class ResponseMatrix(Protocol):
    """The response matrix (responses × rater·K + label) a fit reads, through the statistics it needs."""

    n_responses: int
    n_raters: int
    n_levels: int
    #: (N,) known level per response (-1 = unknown), or None
    gold: np.ndarray | None

    def vote_counts(self) -> np.ndarray:
        """(N, K) number of judgments of each level per response."""
        ...

    def first_seen(self) -> np.ndarray | None:
        """(N, K) file-order position of each level's first judgment of each response, or None when unknown."""
        ...

    def e_steps(self, *, precise: bool = False) -> EStep:
        """The E-step of the whole matrix, its kernel chosen here by the matrix's size (``precise``: the exponential
        in double precision on the numpy kernel too)."""
        ...

    def rows(self, rows: np.ndarray) -> sp.csr_matrix:
        """The matrix rows ``rows`` (sorted response numbers), in this process."""
        ...

    def expected_rows(self, posteriors: np.ndarray) -> np.ndarray:
        """(R·K, K) expected confusion counts of (N, K) posteriors, one row per (rater, true level)."""
        ...

    def votes(self) -> Votes:
        """The rater-weighted votes over every judgment."""
        ...

    def matrix(self) -> sp.csr_matrix:
        """The whole matrix in this process (for methods that need every judgment at once)."""
        ...


class Judgments:
    """The stored judgments of a response matrix (responses × rater·K + label) as flat arrays: ``response``,
    ``rater``, ``level`` and ``count`` (repeated identical judgments are one entry with their count).

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

    def agreed(self, labels: np.ndarray) -> np.ndarray:
        """(R,) each rater's number of judgments equal to ``labels`` (N,) of their responses."""
        return np.bincount(self.rater, weights=self.count * (self.level == labels[self.response]),
                           minlength=self.n_raters)

    def agreement(self, labels: np.ndarray) -> np.ndarray:
        """(R,) each rater's share of judgments equal to ``labels`` (N,) of their responses; 0 for an unused
        rater."""
        return np.asarray(self.agreed(labels) / np.maximum(self.per_rater, 1e-300))

    def top_levels(self, weights: np.ndarray | None = None, gold: np.ndarray | None = None) -> np.ndarray:
        """(N, K) the level of the ``weights``-weighted vote per response as a distribution: 1 on the top level,
        ``1 / t`` on each of ``t`` tied top levels (so no level's code breaks a tie), or one-hot on the ``gold``
        level (>= 0)."""
        scores = self.vote(weights)
        top = scores == scores.max(axis=1, keepdims=True)
        shares = top / top.sum(axis=1, keepdims=True)
        if gold is not None and (gold >= 0).any():
            known = gold >= 0
            shares[known] = np.eye(self.n_levels)[gold[known]]
        return np.asarray(shares)

    def agreed_with(self, top: np.ndarray) -> np.ndarray:
        """(R,) each rater's number of judgments equal to the top level ``top`` (N, K) of their responses, a
        judgment of one of ``t`` tied levels counting ``1 / t``."""
        return np.bincount(self.rater, weights=self.count * top[self.response, self.level], minlength=self.n_raters)

    def shares(self, weights: np.ndarray, gold: np.ndarray | None = None) -> np.ndarray:
        """(N, K) the ``weights``-weighted vote shares per response (plain vote shares where every weight is 0);
        responses with a ``gold`` level (>= 0) are one-hot on it."""
        scores = self.vote(weights)
        totals = scores.sum(axis=1, keepdims=True)
        plain = self.vote()
        shares = np.where(totals > 0, scores / np.where(totals > 0, totals, 1.0),
                          plain / np.maximum(plain.sum(axis=1, keepdims=True), 1e-300))
        if gold is not None and (gold >= 0).any():
            known = gold >= 0
            shares[known] = np.eye(self.n_levels)[gold[known]]
        return shares


class MatrixVotes:
    """:class:`Votes` over the judgments of one matrix (in memory, or one partition on its worker)."""

    def __init__(self, judgments: Judgments, gold: np.ndarray | None = None) -> None:
        self.judgments, self.gold = judgments, gold

    def agreed(self, weights: np.ndarray | None) -> np.ndarray:
        """(R,) each rater's number of judgments equal to the weighted vote (:meth:`agreement` before dividing)."""
        return self.judgments.agreed_with(self.judgments.top_levels(weights, self.gold))

    def agreement(self, weights: np.ndarray | None) -> np.ndarray:
        return np.asarray(self.agreed(weights) / np.maximum(self.judgments.per_rater, 1e-300))

    def shares(self, weights: np.ndarray) -> np.ndarray:
        return self.judgments.shares(weights, self.gold)

    def levels_given(self) -> int:
        return int(np.unique(self.judgments.level).size)


def first_seen(table: AnnotationTable) -> np.ndarray:
    """(N, K) position in the table (file order, 0-based) of each level's first judgment of each response;
    ``table.n_judgments`` where the response never got that level.

    >>> import pandas as pd
    >>> from stableval.data.table import AnnotationTable
    >>> frame = pd.DataFrame({"item": "q1", "agent": "A", "rater": list("abcd"), "label": [2, 0, 0, 2]})
    >>> first_seen(AnnotationTable.from_frame(frame, levels=("0", "1", "2"))).tolist()
    [[1, 4, 0]]
    """
    k = table.n_levels
    keys, first = np.unique(table.response.astype(np.int64) * k + table.label, return_index=True)
    positions = np.full(table.n_responses * k, table.n_judgments, dtype=np.int64)
    positions[keys] = first
    return positions.reshape(table.n_responses, k)


class WholeMatrix:
    """:class:`ResponseMatrix` of a matrix in this process: ``X`` (responses × rater·K + label), ``gold`` (N,)
    codes (-1 = unknown) or None, and ``first_seen`` (N, K) or a function computing it when asked (or None:
    the file order is unknown)."""

    def __init__(self, X: sp.csr_matrix, n_raters: int, n_levels: int, gold: np.ndarray | None = None,
                 first_seen: np.ndarray | Callable[[], np.ndarray] | None = None) -> None:
        self.X = X
        self.n_responses, self.n_raters, self.n_levels = int(X.shape[0]), n_raters, n_levels
        self.gold = gold
        self._first_seen = first_seen

    @classmethod
    def of_table(cls, table: AnnotationTable, gold: np.ndarray | None = None) -> WholeMatrix:
        """The table's response matrix, with its file order (computed only if a fit asks for it)."""
        return cls(table.response_matrix(), table.n_raters, table.n_levels, gold, lambda: first_seen(table))

    def vote_counts(self) -> np.ndarray:
        return vote_counts_of_matrix(self.X, self.n_levels)

    def first_seen(self) -> np.ndarray | None:
        return self._first_seen() if callable(self._first_seen) else self._first_seen

    def e_steps(self, *, precise: bool = False) -> EStep:
        from stableval.aggregate.em_kernel import kernel_choice, preload

        kernel = kernel_choice(self.X.nnz)
        if kernel == "numba":  # load the compiled E-step while the fit builds its starts
            preload(self.n_levels, self.X.indices.dtype)
        return ResponseBlocks(self.X, self.gold, kernel=kernel, precise=precise)

    def rows(self, rows: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix(self.X[rows])

    def expected_rows(self, posteriors: np.ndarray) -> np.ndarray:
        return expected_rows(self.X, posteriors, self.n_raters, self.n_levels)

    def votes(self) -> Votes:
        return MatrixVotes(Judgments(self.X, self.n_raters, self.n_levels), self.gold)

    def matrix(self) -> sp.csr_matrix:
        return self.X
