"""Borda count for partial rankings with ties: an option scores the candidates ranked below it.

Source: de Borda (1781), "Mémoire sur les élections au scrutin"; with ties and unranked options handled as in the
averaged-rank Borda count (each of k tied options scores the mean of the k positions they share). Per ranking of an
item, the item's candidates are the options any of its rankings names; an option scores the number of candidates
the ranking places strictly below it plus half the number tied with it, and the candidates a ranking leaves out
share the bottom positions (each scores half the number of the others left out). The scores, summed over the
item's rankings and normalised, are its plausibility (uniform when every score is 0). Options no ranking of the
item names get 0.

>>> from stableval.data.rankings import Rankings
>>> rankings = Rankings.from_records([(None, "q", [["a"], ["b", "c"]]), (None, "q", ["b"])])
>>> Borda().fit(rankings).distributions()   # r1: a 2, b 0.5, c 0.5; r2: b 2, a and c left out 0.5 each
{'q': {'a': 0.416666666667, 'b': 0.416666666667, 'c': 0.166666666667}}
"""

from __future__ import annotations

import numpy as np

from stableval.aggregate.rankings.base import RankingAggregator
from stableval.aggregate.rankings.choices import Slots
from stableval.aggregate.rankings.methods import declared
from stableval.data.rankings import Rankings

__all__ = ["METHOD", "Borda", "borda_points"]


def borda_points(rankings: Rankings, slots: Slots) -> np.ndarray:
    """(K,) summed Borda points of every candidate slot (not normalised)."""
    ranking = rankings.ranking_of
    item = rankings.item_of[ranking]
    candidates = np.diff(slots.offsets)[rankings.item_of]                 # (R,) candidates of each ranking's item
    length = np.diff(rankings.offsets)                                    # (R,) options each ranking names
    width = int(rankings.group.max()) + 1
    key = ranking * width + rankings.group
    sorted_key = np.sort(key)
    at_or_above = np.searchsorted(sorted_key, key, side="right") - rankings.offsets[ranking]
    tied = np.bincount(key, minlength=int(key.max()) + 1)[key] - 1
    below = candidates[ranking] - at_or_above
    slot = slots.lookup(item, rankings.option)
    points = np.bincount(slot, weights=below + tied / 2, minlength=slots.n_slots)
    left_out = candidates - length                                        # (R,) candidates each ranking leaves out
    share = np.where(left_out > 0, (left_out - 1) / 2, 0.0)
    per_item = np.bincount(rankings.item_of, weights=share, minlength=rankings.n_items)
    named_share = np.bincount(slot, weights=share[ranking], minlength=slots.n_slots)
    return np.asarray(points + per_item[slots.item] - named_share)


#: the declaration this estimator reads (its hyper-parameters: :attr:`Borda.PARAMETERS`)
METHOD = declared("borda")


class Borda(RankingAggregator):
    """Borda count with shared positions for ties and for the candidates a ranking leaves out (closed form)."""

    PARAMETERS = METHOD.params

    def __init__(self) -> None:
        pass

    def _fit(self, rankings: Rankings, slots: Slots, start: RankingAggregator | None) -> np.ndarray:
        points = borda_points(rankings, slots)
        totals = np.add.reduceat(points, slots.offsets[:-1])
        flat = np.repeat(totals <= 0, np.diff(slots.offsets))
        return slots.normalise(np.where(flat, 1.0, points))
