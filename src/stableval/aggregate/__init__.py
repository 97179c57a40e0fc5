"""Aggregators: turn disagreeing judgments into one distribution over levels per response.

Every method is declared once (:mod:`stableval.aggregate.methods`, listed by :mod:`stableval.aggregate.registry`);
estimators follow scikit-learn's shape (:mod:`stableval.aggregate._base`; the EM estimators' fit:
:mod:`stableval.aggregate.em_fit`). Names load lazily, so the command line can read the registry without importing
the numerical kernels.

>>> from stableval.aggregate import MajorityVote, DawidSkene, Stableval, clone, get_method
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.aggregate._base import (
        Aggregator as Aggregator,
        Estimator as Estimator,
        clone as clone,
    )
    from stableval.aggregate.bradley_terry import BradleyTerry as BradleyTerry
    from stableval.aggregate.dawid_skene import DawidSkene as DawidSkene
    from stableval.aggregate.em_fit import EMAggregator as EMAggregator
    from stableval.aggregate.glad import GLAD as GLAD
    from stableval.aggregate.mace import MACE as MACE
    from stableval.aggregate.majority_vote import MajorityVote as MajorityVote
    from stableval.aggregate.method import Method as Method
    from stableval.aggregate.one_coin import OneCoinDawidSkene as OneCoinDawidSkene
    from stableval.aggregate.ordinal import OrdinalRaters as OrdinalRaters
    from stableval.aggregate.pairwise import PairwiseAggregator as PairwiseAggregator
    from stableval.aggregate.registry import (
        REGISTRY as REGISTRY,
        default_methods as default_methods,
        get_method as get_method,
        method_names as method_names,
        resolve_methods as resolve_methods,
    )
    from stableval.aggregate.responses import Judgments as Judgments
    from stableval.aggregate.stableval import Stableval as Stableval
    from stableval.aggregate.wawa import Wawa as Wawa
    from stableval.aggregate.zero_based_skill import ZeroBasedSkill as ZeroBasedSkill


__getattr__, __dir__, __all__ = lazy_package(globals())
