"""Scoring and comparing agents from aggregated judgments.

>>> from stableval.evaluate import score_agents, AgentScores, MethodOptions
"""

from stableval.evaluate.credit import METHODS, MethodOptions, fit_methods, item_credit
from stableval.evaluate.scores import AgentScores, score_agents

__all__ = ["METHODS", "AgentScores", "MethodOptions", "fit_methods", "item_credit", "score_agents"]
