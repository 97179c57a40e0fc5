"""Partial rankings as Luce choices: the candidates of every item and the choice each mention records.

Every ranking aggregator works on each item's *candidates*: the options any of its rankings names, and — for the
Plackett–Luce models — one *pool* slot standing for all the options none of them names (Stutz et al. 2023,
arXiv:2307.02191, collect the unranked conditions of a case the same way; its plausibility is shared evenly by
those options when a full distribution is needed). :func:`candidate_slots` lays the candidates of all items end to
end.

Plackett–Luce reads a ranking as successive choices (Luce 1959; Plackett 1975): the first option is chosen from
all candidates, the next from those left, and so on; the options a ranking leaves out rank below all it names.
A *tied group* is read the way rank-breaking reads a partial order (Soufiani, Parkes & Xia 2014, "Computing
parametric ranking models via rank-breaking", ICML; Khetan & Oh 2016, JMLR 17): each of its options is chosen over
everything ranked below the group — not over the other members of its group. Without ties this is exactly the
Plackett–Luce likelihood of a top-k ranking; with ties it is a composite likelihood in which tied options neither
beat nor lose to one another. :func:`choice_events` lists one choice per mention: the chosen slot and the slots it
was chosen from.

>>> from stableval.data.rankings import Rankings
>>> rankings = Rankings.from_records([(None, "case", [["a"], ["b", "c"]]), (None, "case", ["d"])],
...                                   options=["a", "b", "c", "d", "e"])
>>> slots = candidate_slots(rankings, pool=True)
>>> slots.option.tolist(), slots.pool_size.tolist()       # -1: the pool of options nobody named
([0, 1, 2, 3, -1], [1])
>>> events = choice_events(rankings, slots)
>>> [sorted(events.members(e).tolist()) for e in range(events.n_events)]
[[0, 1, 2, 3, 4], [1, 3, 4], [2, 3, 4], [0, 1, 2, 3, 4]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stableval.data.rankings import Rankings

__all__ = ["ChoiceEvents", "Slots", "candidate_slots", "choice_events", "segment_max"]


@dataclass(frozen=True)
class Slots:
    """The candidates of every item, laid end to end.

    Attributes:
        offsets: (N+1,) the slots of item ``i`` are ``offsets[i]:offsets[i+1]``.
        item: (K,) the item of each slot.
        option: (K,) the option of each slot; -1 for the item's pool (the options none of its rankings names).
        pool_size: (N,) how many options each item's pool stands for (0 when the item has none).
        n_options: how many options there are in all.
    """

    offsets: np.ndarray
    item: np.ndarray
    option: np.ndarray
    pool_size: np.ndarray
    n_options: int

    @property
    def n_slots(self) -> int:
        return int(self.item.size)

    @property
    def n_items(self) -> int:
        return int(self.offsets.size - 1)

    def key(self) -> np.ndarray:
        """(K,) sortable key of each slot: ``item · (C + 1) + option`` (the pool counts as option C)."""
        return self.item * (self.n_options + 1) + np.where(self.option < 0, self.n_options, self.option)

    def lookup(self, item: np.ndarray, option: np.ndarray) -> np.ndarray:
        """The slot of each (item, option) pair (the pairs must be candidates)."""
        return np.asarray(np.searchsorted(self.key(), np.asarray(item) * (self.n_options + 1) + np.asarray(option)))

    def normalise(self, values: np.ndarray) -> np.ndarray:
        """``values`` (…, K) divided by their sum over each item's slots (a distribution per item)."""
        totals = np.add.reduceat(values, self.offsets[:-1], axis=-1)
        return np.asarray(values / np.repeat(totals, np.diff(self.offsets), axis=-1))

    def dense(self, values: np.ndarray) -> np.ndarray:
        """(N, C) distribution over all options from per-slot values (K,): a pool's value is shared evenly by the
        options it stands for."""
        out = np.zeros((self.n_items, self.n_options))
        named = self.option >= 0
        out[self.item[named], self.option[named]] = values[named]
        pooled = np.flatnonzero(~named)
        if pooled.size:
            share = values[pooled] / self.pool_size[self.item[pooled]]
            mask = np.ones((self.n_items, self.n_options), dtype=bool)
            mask[self.item[named], self.option[named]] = False
            rows = self.item[pooled]
            out[rows] += mask[rows] * share[:, None]
        return out


def candidate_slots(rankings: Rankings, *, pool: bool) -> Slots:
    """Each item's candidates (the options its rankings name, in option order), plus a pool slot last when
    ``pool`` and some option is named by none of them."""
    n, c = rankings.n_items, rankings.n_options
    key = np.unique(rankings.item_of[rankings.ranking_of] * c + rankings.option)
    item, option = key // c, key % c
    named = np.bincount(item, minlength=n)
    pool_size = np.where(named > 0, c - named, 0) if pool else np.zeros(n, dtype=np.int64)
    if pool and np.any(pool_size > 0):
        pooled = np.flatnonzero(pool_size > 0)
        item = np.concatenate([item, pooled])
        option = np.concatenate([option, np.full(pooled.size, c)])
        order = np.lexsort((option, item))
        item, option = item[order], option[order]
    counts = np.bincount(item, minlength=n)
    return Slots(offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), item=item.astype(np.int64),
                 option=np.where(option == c, -1, option).astype(np.int64), pool_size=pool_size.astype(np.int64),
                 n_options=c)


@dataclass(frozen=True)
class ChoiceEvents:
    """One Luce choice per mention of every ranking.

    Attributes:
        winner: (E,) the slot chosen. ranking: (E,) the ranking the choice belongs to. item: (E,) its item.
        member_event, member_slot: (Q,) the slots each choice was made from (the winner included), sorted by
            event.
        starts: (E+1,) the members of event ``e`` are ``member_slot[starts[e]:starts[e+1]]``.
    """

    winner: np.ndarray
    ranking: np.ndarray
    item: np.ndarray
    member_event: np.ndarray
    member_slot: np.ndarray
    starts: np.ndarray

    @property
    def n_events(self) -> int:
        return int(self.winner.size)

    def members(self, event: int) -> np.ndarray:
        """The slots event ``event`` chose from."""
        return self.member_slot[self.starts[event]:self.starts[event + 1]]

    def set_sums(self, values: np.ndarray) -> np.ndarray:
        """(…, E) sum of ``values`` (…, K) over each event's choice set."""
        gathered = values[..., self.member_slot]
        return np.add.reduceat(gathered, self.starts[:-1], axis=-1)


def choice_events(rankings: Rankings, slots: Slots) -> ChoiceEvents:
    """The choices of every ranking (one per mention), each with the slots it was made from: the chosen option and
    every candidate of the item that the ranking does not place in the chosen option's group or above (unranked
    candidates and the pool included)."""
    c1 = slots.n_options + 1
    ranking = rankings.ranking_of
    item = rankings.item_of[ranking]
    winner = slots.lookup(item, rankings.option)
    group = rankings.group
    per_item = np.diff(slots.offsets)
    counts = per_item[item]
    total = int(counts.sum())
    pair_event = np.repeat(np.arange(rankings.n_mentions), counts)
    within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    pair_slot = slots.offsets[item][pair_event] + within
    # the group the event's ranking gives each candidate (the pool and unranked candidates: below every group)
    mention_key = ranking * c1 + rankings.option
    order = np.argsort(mention_key, kind="stable")
    sorted_key = mention_key[order]
    slot_option = np.where(slots.option < 0, slots.n_options, slots.option)
    pair_key = ranking[pair_event] * c1 + slot_option[pair_slot]
    found = np.minimum(np.searchsorted(sorted_key, pair_key), sorted_key.size - 1)
    hit = sorted_key[found] == pair_key
    pair_group = np.where(hit, group[order[found]], np.iinfo(np.int64).max)
    keep = (pair_slot == winner[pair_event]) | (pair_group > group[pair_event])
    member_event, member_slot = pair_event[keep], pair_slot[keep]
    starts = np.concatenate([[0], np.cumsum(np.bincount(member_event, minlength=rankings.n_mentions))])
    return ChoiceEvents(winner=winner, ranking=ranking, item=item, member_event=member_event,
                        member_slot=member_slot, starts=starts.astype(np.int64))


def segment_max(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(…, N) maximum of ``values`` (…, K) over each segment ``offsets[i]:offsets[i+1]`` (none empty)."""
    return np.asarray(np.maximum.reduceat(values, offsets[:-1], axis=-1))
