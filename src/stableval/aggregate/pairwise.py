"""What the pairwise models share: the base class and the vote counting they fit on.

A pairwise model fits on votes (``item, agent_a, agent_b, rater, winner``, optionally ``weight``): a
:class:`~stableval.data.PairwiseTable` or its frame. :func:`pairwise_counts` turns them into (A, A) weighted win
and tie counts; :meth:`PairwiseAggregator.fit_counts` fits on those.

>>> import pandas as pd
>>> votes = pd.DataFrame({"agent_a": ["A", "A", "B"], "agent_b": ["B", "B", "A"], "winner": ["a", "tie", "a"]})
>>> wins, ties, agents = pairwise_counts(votes)
>>> agents, wins.tolist(), ties.tolist()
(['A', 'B'], [[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np
import pandas as pd

from stableval.aggregate._base import Estimator
from stableval.errors import InputError

__all__ = ["PairwiseAggregator", "count_matrices", "pairwise_counts", "vote_codes"]


class PairwiseAggregator(Estimator):
    """Base class of the pairwise models (Bradley–Terry): hyper-parameters in ``__init__``, ``fit(votes)``
    returns the model, results in trailing-underscore attributes."""

    def fit(self, votes: Any, weights: np.ndarray | None = None) -> Self:
        """Fit on a :class:`~stableval.data.PairwiseTable` (or its frame); ``weights`` per vote (default 1, or
        the table's ``weight`` column)."""
        frame = getattr(votes, "frame", votes)
        if not isinstance(frame, pd.DataFrame):
            raise InputError("pairwise votes must be a PairwiseTable or a DataFrame", value=type(votes).__name__,
                             allowed="stableval.data.read_pairwise(...) or a frame with agent_a, agent_b, winner")
        wins, ties, agents = pairwise_counts(frame, weights)
        return self.fit_counts(wins, ties, agents)

    def fit_counts(self, wins: np.ndarray, ties: np.ndarray, agents: Sequence[str],
                   start: np.ndarray | None = None) -> Self:  # pragma: no cover - interface
        """Fit on (A, A) weighted win counts (row beat column) and symmetric tie counts."""
        raise NotImplementedError


def vote_codes(frame: pd.DataFrame, agents: Sequence[str] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Integer codes of a vote frame (``agent_a, agent_b, winner``): (a, b, outcome 0=a 1=b 2=tie, agents)."""
    if agents is None:
        agents = sorted(set(frame["agent_a"]) | set(frame["agent_b"]))
    index = pd.Index(list(agents))
    outcome = pd.Categorical(frame["winner"], categories=["a", "b", "tie"]).codes.astype(np.int64)
    return (index.get_indexer(pd.Index(frame["agent_a"])), index.get_indexer(pd.Index(frame["agent_b"])), outcome,
            list(index))


def count_matrices(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weights: np.ndarray,
                   n_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """(wins, ties) (A, A) weighted counts: wins[i, j] = i beat j; ties symmetric."""
    winner = np.where(outcome == 0, a, b)
    loser = np.where(outcome == 0, b, a)
    decisive = outcome != 2
    cells = n_agents * n_agents
    wins = np.bincount(winner[decisive] * n_agents + loser[decisive], weights=weights[decisive], minlength=cells)
    tie = ~decisive
    ties = np.bincount(a[tie] * n_agents + b[tie], weights=weights[tie], minlength=cells).reshape(n_agents, n_agents)
    return wins.reshape(n_agents, n_agents), ties + ties.T


def pairwise_counts(frame: pd.DataFrame, weights: np.ndarray | None = None,
                    agents: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(wins (A, A), ties (A, A), agents) from a vote frame with ``agent_a, agent_b, winner`` columns;
    ``weights`` per vote default to the frame's ``weight`` column, or 1."""
    a, b, outcome, names = vote_codes(frame, agents)
    if weights is None:
        weights = frame["weight"].to_numpy(float) if "weight" in frame.columns else np.ones(len(a))
    wins, ties = count_matrices(a, b, outcome, np.asarray(weights, dtype=float), len(names))
    return wins, ties, names
