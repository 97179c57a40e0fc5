"""crowd-kit's classification models under crowd-kit's names: swap ``from crowdkit.aggregation import ...`` for
``from stableval.crowdkit import ...`` and a crowd-kit script runs unchanged.

Models: ``MajorityVote``, ``GoldMajorityVote``, ``MMSR``, ``DawidSkene``, ``OneCoinDawidSkene``, ``Wawa``,
``ZeroBasedSkill``, ``GLAD``, ``MACE``, ``KOS`` (binary labels) and ``BinaryRelevance`` (multi-label), each with
crowd-kit's parameters, methods and result attributes (:mod:`stableval.crowdkit.models`). crowd-kit's own
classification tests run against them (tests/crowdkit_upstream). Differences from crowd-kit 1.4.2: the EM models
stop on stableval's rule (the log-likelihood gains less than ``tol`` relative), where crowd-kit stops as soon as
its per-answer objective fails to rise by ``tol``; ties go to the lowest label (crowd-kit's go to whichever label
pandas lists first); MACE seeds restart j with ``random_state + j``.

>>> import pandas as pd
>>> from stableval.crowdkit import DawidSkene
>>> df = pd.DataFrame({"task": ["t1", "t1", "t1", "t2", "t2", "t2"], "worker": list("abcabc"),
...                    "label": ["yes", "yes", "no", "no", "no", "yes"]})
>>> DawidSkene(n_iter=100).fit_predict(df).to_dict()
{'t1': 'yes', 't2': 'no'}
"""

from __future__ import annotations

from stableval.crowdkit.base import CrowdKitAggregator
from stableval.crowdkit.binary_relevance import BinaryRelevance
from stableval.crowdkit.gold_majority_vote import GoldMajorityVote
from stableval.crowdkit.kos import KOS
from stableval.crowdkit.mmsr import MMSR
from stableval.crowdkit.models import (
    GLAD,
    MACE,
    DawidSkene,
    MajorityVote,
    OneCoinDawidSkene,
    Wawa,
    ZeroBasedSkill,
)

__all__ = ["GLAD", "KOS", "MACE", "MMSR", "BinaryRelevance", "CrowdKitAggregator", "DawidSkene", "GoldMajorityVote",
           "MajorityVote", "OneCoinDawidSkene", "Wawa", "ZeroBasedSkill"]
