"""Majority vote: the baseline every evaluation starts from.

Soft vote shares per response, and a hard label with an explicit tie policy. The default, ``ties="split"``,
shares a tied response's mass equally among its tied levels, so its credit is the mean credit of those levels
(neither optimistic nor pessimistic, and deterministic).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": ["q1"] * 4 + ["q2"] * 2, "agent": "A", "rater": list("abcdab"),
...                       "label": [2, 2, 1, 0, 0, 2]})
>>> table = AnnotationTable.from_frame(frame, levels=("low", "mid", "high"))
>>> MajorityVote().fit(table).posteriors_.tolist()
[[0.0, 0.0, 1.0], [0.5, 0.0, 0.5]]
>>> MajorityVote(ties="lowest").fit(table).labels_.tolist()
[2, 0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np

from stableval.aggregate._base import Aggregator, Method, hard_distribution

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp

TIE_POLICIES = ("split", "lowest", "highest", "random")


class MajorityVote(Aggregator):
    """Majority vote with an explicit tie policy.

    Args:
        ties: ``"split"`` (default) — a tie shares its mass equally among the tied levels;
            ``"lowest"`` / ``"highest"`` — the lowest / highest tied level wins (pessimistic / optimistic);
            ``"random"`` — a tied level drawn uniformly with ``seed``.
        seed: seed for ``ties="random"``.

    Attributes after ``fit``:
        vote_shares_: (N, K) share of each level among a response's judgments (the soft vote).
        posteriors_: (N, K) the hard vote as a distribution (one-hot, or split over ties).
        labels_: (N,) the majority level (for ``split``, the lowest tied level; see ``tied_``).
        tied_: (N,) whether the top vote count was shared by several levels.
    """

    def __init__(self, ties: str = "split", seed: int | None = 0) -> None:
        if ties not in TIE_POLICIES:
            raise ValueError(f"ties={ties!r} is not a tie policy; allowed: {', '.join(TIE_POLICIES)}")
        self.ties = ties
        self.seed = seed

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> Self:
        """Fit on a response matrix (responses × rater·K + label) directly; responses with a known ``gold``
        level (>= 0) take it."""
        from stableval.aggregate.em import vote_counts

        counts = vote_counts(X, n_levels)
        if gold is not None and (gold >= 0).any():
            known = gold >= 0
            counts[known] = np.eye(n_levels)[gold[known]]
        totals = counts.sum(axis=1, keepdims=True)
        self.vote_shares_ = counts / np.where(totals > 0, totals, 1.0)
        top = counts.max(axis=1, keepdims=True)
        winners = counts == top
        self.tied_ = winners.sum(axis=1) > 1
        if self.ties == "split":
            self.posteriors_ = hard_distribution(counts, atol=0.0)
            self.labels_ = winners.argmax(axis=1)
        else:
            if self.ties == "lowest":
                labels = winners.argmax(axis=1)
            elif self.ties == "highest":
                labels = n_levels - 1 - winners[:, ::-1].argmax(axis=1)
            else:  # random: a uniform draw among the tied levels of each response
                noise = np.random.default_rng(self.seed).random(counts.shape)
                labels = np.where(winners, noise, -1.0).argmax(axis=1)
            self.labels_ = labels
            self.posteriors_ = np.eye(n_levels)[labels]
        return self

    def level_distribution(self) -> np.ndarray:
        """The vote shares (the soft vote), beside the hard vote of ``posteriors_``."""
        return np.asarray(self.vote_shares_)


METHOD = Method(
    name="mv", label="MV", title="Majority vote", colour="#7f7f7f", estimator=MajorityVote, credit="hard",
    batch="stacked", rater_model=False,
    summary="The most frequent level per response; ties split the credit equally by default.",
)
