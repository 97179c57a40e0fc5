"""Ranking aggregators: turn several raters' partial rankings of each item into a plausibility over its options.

The family of :mod:`stableval.aggregate` for partial rankings with ties (differential diagnoses, expert orderings of
documents): inverse rank normalisation and Borda as baselines, Plackett–Luce by MM or I-LSR, Bayesian Plackett–Luce
with posterior samples, and Plackett–Luce with a reliability per rater. Each method is declared once
(:class:`~stableval.aggregate.rankings.method.RankingMethod`, in :mod:`stableval.aggregate.rankings.methods`) and
listed by name in :mod:`stableval.aggregate.rankings.registry`. Names load lazily.

>>> from stableval.aggregate.rankings import PlackettLuce, get_ranking_method, fit_rater_rankings
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.aggregate.rankings.base import RankingAggregator as RankingAggregator
    from stableval.aggregate.rankings.bayesian_pl import BayesianPlackettLuce as BayesianPlackettLuce
    from stableval.aggregate.rankings.borda import Borda as Borda
    from stableval.aggregate.rankings.irn import IRN as IRN
    from stableval.aggregate.rankings.method import RankingMethod as RankingMethod
    from stableval.aggregate.rankings.plackett_luce import PlackettLuce as PlackettLuce
    from stableval.aggregate.rankings.rater_pl import (
        RaterPlackettLuce as RaterPlackettLuce,
        fit_rater_rankings as fit_rater_rankings,
    )
    from stableval.aggregate.rankings.registry import (
        RANKING_REGISTRY as RANKING_REGISTRY,
        get_ranking_method as get_ranking_method,
        ranking_method_names as ranking_method_names,
        resolve_ranking_methods as resolve_ranking_methods,
    )


__getattr__, __dir__, __all__ = lazy_package(globals())
