"""Aggregators: turn disagreeing judgments into one distribution over levels per response.

Every method is declared once (:mod:`stableval.aggregate.registry`); estimators follow scikit-learn's shape
(:mod:`stableval.aggregate._base`). Names load lazily, so the command line can read the registry without
importing the numerical kernels.

>>> from stableval.aggregate import MajorityVote, DawidSkene, Stableval, clone, get_method
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate._base import Aggregator, EMAggregator, Estimator, Method, clone
    from stableval.aggregate.bradley_terry import BradleyTerry
    from stableval.aggregate.dawid_skene import DawidSkene
    from stableval.aggregate.majority_vote import MajorityVote
    from stableval.aggregate.pairwise import PairwiseAggregator
    from stableval.aggregate.registry import REGISTRY, default_methods, get_method, method_names, resolve_methods
    from stableval.aggregate.stableval import Stableval

_HOME = {
    "Aggregator": "_base",
    "EMAggregator": "_base",
    "Estimator": "_base",
    "Method": "_base",
    "clone": "_base",
    "BradleyTerry": "bradley_terry",
    "DawidSkene": "dawid_skene",
    "MajorityVote": "majority_vote",
    "PairwiseAggregator": "pairwise",
    "REGISTRY": "registry",
    "default_methods": "registry",
    "get_method": "registry",
    "method_names": "registry",
    "resolve_methods": "registry",
    "Stableval": "stableval",
}

__all__ = [
    "REGISTRY",
    "Aggregator",
    "BradleyTerry",
    "DawidSkene",
    "EMAggregator",
    "Estimator",
    "MajorityVote",
    "Method",
    "PairwiseAggregator",
    "Stableval",
    "clone",
    "default_methods",
    "get_method",
    "method_names",
    "resolve_methods",
]


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(importlib.import_module(f"stableval.aggregate.{_HOME[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'stableval.aggregate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
