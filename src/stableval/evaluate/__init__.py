"""Scoring and comparing agents from aggregated judgments, and analysing the disagreement behind them.

>>> from stableval.evaluate import score_agents, ranking_stability, diagnose, pairwise_leaderboard
"""

from stableval.evaluate.credit import METHODS, fit_methods, item_credit
from stableval.evaluate.diagnostics import Diagnostics, diagnose
from stableval.evaluate.pairwise import PairwiseLeaderboard, pairwise_leaderboard
from stableval.evaluate.scores import AgentScores, score_agents
from stableval.evaluate.stability import StabilityResult, ranking_stability

__all__ = [
    "METHODS",
    "AgentScores",
    "Diagnostics",
    "PairwiseLeaderboard",
    "StabilityResult",
    "diagnose",
    "fit_methods",
    "item_credit",
    "pairwise_leaderboard",
    "ranking_stability",
    "score_agents",
]
