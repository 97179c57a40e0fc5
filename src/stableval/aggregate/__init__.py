"""Aggregators: turn disagreeing judgments into one distribution over levels per response.

Every method is declared once (:mod:`stableval.aggregate.registry`); estimators follow scikit-learn's shape
(:mod:`stableval.aggregate._base`). Names load lazily, so the command line can read the registry without
importing the numerical kernels.

>>> from stableval.aggregate import MajorityVote, DawidSkene, Stableval, clone, get_method
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate._base import Aggregator, EMAggregator, Estimator, Method, clone
    from stableval.aggregate.bradley_terry import BradleyTerry
    from stableval.aggregate.dawid_skene import DawidSkene
    from stableval.aggregate.glad import GLAD
    from stableval.aggregate.mace import MACE
    from stableval.aggregate.majority_vote import MajorityVote
    from stableval.aggregate.one_coin import OneCoinDawidSkene
    from stableval.aggregate.ordinal import OrdinalRaters
    from stableval.aggregate.pairwise import PairwiseAggregator
    from stableval.aggregate.registry import REGISTRY, default_methods, get_method, method_names, resolve_methods
    from stableval.aggregate.stableval import Stableval
    from stableval.aggregate.wawa import Wawa
    from stableval.aggregate.zero_based_skill import ZeroBasedSkill

_HOME = {
    "Aggregator": "stableval.aggregate._base",
    "EMAggregator": "stableval.aggregate._base",
    "Estimator": "stableval.aggregate._base",
    "Method": "stableval.aggregate._base",
    "clone": "stableval.aggregate._base",
    "BradleyTerry": "stableval.aggregate.bradley_terry",
    "DawidSkene": "stableval.aggregate.dawid_skene",
    "GLAD": "stableval.aggregate.glad",
    "MACE": "stableval.aggregate.mace",
    "MajorityVote": "stableval.aggregate.majority_vote",
    "OneCoinDawidSkene": "stableval.aggregate.one_coin",
    "OrdinalRaters": "stableval.aggregate.ordinal",
    "PairwiseAggregator": "stableval.aggregate.pairwise",
    "REGISTRY": "stableval.aggregate.registry",
    "default_methods": "stableval.aggregate.registry",
    "get_method": "stableval.aggregate.registry",
    "method_names": "stableval.aggregate.registry",
    "resolve_methods": "stableval.aggregate.registry",
    "Stableval": "stableval.aggregate.stableval",
    "Wawa": "stableval.aggregate.wawa",
    "ZeroBasedSkill": "stableval.aggregate.zero_based_skill",
}

__all__ = [
    "GLAD",
    "MACE",
    "REGISTRY",
    "Aggregator",
    "BradleyTerry",
    "DawidSkene",
    "EMAggregator",
    "Estimator",
    "MajorityVote",
    "Method",
    "OneCoinDawidSkene",
    "OrdinalRaters",
    "PairwiseAggregator",
    "Stableval",
    "Wawa",
    "ZeroBasedSkill",
    "clone",
    "default_methods",
    "get_method",
    "method_names",
    "resolve_methods",
]


__getattr__, __dir__ = lazy_exports(globals(), _HOME, __all__)
