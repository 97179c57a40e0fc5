"""Scoring and comparing agents from aggregated judgments, and analysing the disagreement behind them.

>>> from stableval.evaluate import score_agents, ranking_stability, diagnose, pairwise_leaderboard

Names load lazily (:mod:`stableval._lazy`), so a light module of the package (:mod:`stableval.evaluate.vote_rules`)
is read by the command line without the numerical libraries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.evaluate.credit import (
        METHODS as METHODS,
        fit_methods as fit_methods,
        item_credit as item_credit,
    )
    from stableval.evaluate.diagnostics import (
        Diagnostics as Diagnostics,
        diagnose as diagnose,
        fragile_majorities as fragile_majorities,
    )
    from stableval.evaluate.flag_reasons import FlagReasons as FlagReasons, flags_by_reason as flags_by_reason
    from stableval.evaluate.pairwise import (
        PairwiseLeaderboard as PairwiseLeaderboard,
        pairwise_leaderboard as pairwise_leaderboard,
    )
    from stableval.evaluate.ppi import PPIScores as PPIScores, ppi_scores as ppi_scores
    from stableval.evaluate.ppi_pairwise import (
        PPIPairwise as PPIPairwise,
        ppi_bradley_terry as ppi_bradley_terry,
    )
    from stableval.evaluate.ppi_plan import BudgetPlan as BudgetPlan, plan_ppi as plan_ppi
    from stableval.evaluate.scores import AgentScores as AgentScores, score_agents as score_agents
    from stableval.evaluate.stability import (
        StabilityResult as StabilityResult,
        ranking_stability as ranking_stability,
    )


__getattr__, __dir__, __all__ = lazy_package(globals())
