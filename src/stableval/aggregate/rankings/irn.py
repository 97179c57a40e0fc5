"""Inverse rank normalisation (IRN): each ranking gives 1/g to every option of its g-th group.

Source: the adjudication rule of Liu et al. (2020), "A deep learning system for differential diagnosis of skin
diseases", Nature Medicine 26:900–908, as Stutz et al. (2023), arXiv:2307.02191, describe it: summed over
the item's rankings, an option in the g-th group scores 1/g (tied options each get the group's full 1/g), and the
scores are normalised over the item's named options into its plausibility. Options no ranking names get 0.

>>> from stableval.data.rankings import Rankings
>>> rankings = Rankings.from_records([(None, "q", [["a"], ["b", "c"]]), (None, "q", ["b"])])
>>> IRN().fit(rankings).distributions()                 # a 1, b 1/2 + 1, c 1/2; total 3
{'q': {'a': 0.333333333333, 'b': 0.5, 'c': 0.166666666667}}
"""

from __future__ import annotations

import numpy as np

from stableval.aggregate.rankings.base import RankingAggregator
from stableval.aggregate.rankings.choices import Slots
from stableval.aggregate.rankings.methods import declared
from stableval.data.rankings import Rankings

__all__ = ["IRN", "METHOD", "irn_scores"]


def irn_scores(rankings: Rankings, slots: Slots) -> np.ndarray:
    """(K,) summed 1/g of every candidate slot (not normalised)."""
    item = rankings.item_of[rankings.ranking_of]
    return np.bincount(slots.lookup(item, rankings.option), weights=1.0 / rankings.group,
                       minlength=slots.n_slots)


#: the declaration this estimator reads (its hyper-parameters: :attr:`IRN.PARAMETERS`)
METHOD = declared("irn")


class IRN(RankingAggregator):
    """Inverse rank normalisation (closed form; no hyper-parameters)."""

    PARAMETERS = METHOD.params

    def __init__(self) -> None:
        pass

    def _fit(self, rankings: Rankings, slots: Slots, start: RankingAggregator | None) -> np.ndarray:
        return slots.normalise(irn_scores(rankings, slots))
