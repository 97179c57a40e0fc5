"""Partial rankings with ties: who ranked which options of which item, in what order.

A *partial ranking* orders some of an item's options in groups, best first; the options inside a group are tied,
and the options it leaves out rank below all it names. A dermatologist's differential diagnosis of a case
(``[['Hemangioma'], ['Melanocytic Nevus', 'Melanoma']]``), an expert's ordering of a question's documents and a
portal rater's answer to a ranking task are all partial rankings. :class:`Rankings` holds many of them, flattened
into integer arrays (the shape the ranking aggregators of :mod:`stableval.aggregate.rankings` fit on), with the
names of the items, options and raters.

Build one from records ``(rater, item, ranking)`` (:meth:`Rankings.from_records`, a ranking being a list of groups,
a group an option or a list of tied options), from a long table ``item, rater, option, rank`` where equal ranks
tie (:meth:`Rankings.from_frame`), or from the arrays themselves.

>>> rankings = Rankings.from_records([("ann", "case1", [["flu"], ["cold", "covid"]]),
...                                   ("bob", "case1", ["cold", "flu"])])
>>> rankings.n_rankings, rankings.options, rankings.group.tolist()
(2, ('cold', 'covid', 'flu'), [1, 2, 2, 1, 2])
>>> rankings.groups_of(0)
[['flu'], ['cold', 'covid']]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from stableval.errors import InputError

__all__ = ["ANONYMOUS", "Rankings"]

#: The rater name of rankings whose raters are not known (every such ranking is by this one "rater").
ANONYMOUS = "(anonymous)"


@dataclass(frozen=True, eq=False)
class Rankings:
    """Partial rankings, flattened.

    Attributes:
        item_of: (R,) item index of each ranking.
        rater_of: (R,) rater index of each ranking.
        offsets: (R+1,) the options named by ranking ``r`` are ``option[offsets[r]:offsets[r+1]]``.
        option: (M,) option index of each mention, 0..n_options-1.
        group: (M,) 1-based position of the mention's group in its ranking (equal groups: tied).
        n_items, n_options: how many items and options there are (an item or option may have no ranking).
        items, options, raters: the names (``items`` may be empty for unnamed items: their 1-based numbers).
        source: where the rankings come from. notes: what reading them found.
    """

    item_of: np.ndarray
    rater_of: np.ndarray
    offsets: np.ndarray
    option: np.ndarray
    group: np.ndarray
    n_items: int
    n_options: int
    items: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    raters: tuple[str, ...] = (ANONYMOUS,)
    source: str = "<memory>"
    notes: tuple[str, ...] = field(default=())

    @property
    def n_rankings(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n_raters(self) -> int:
        return len(self.raters)

    @property
    def n_mentions(self) -> int:
        return int(self.option.size)

    @property
    def ranking_of(self) -> np.ndarray:
        """(M,) the ranking of each mention."""
        return np.repeat(np.arange(self.n_rankings), np.diff(self.offsets))

    @property
    def rankings_per_item(self) -> np.ndarray:
        """(n_items,) number of rankings of each item."""
        return np.bincount(self.item_of, minlength=self.n_items)

    def item_name(self, index: int) -> str:
        """The name of item ``index`` (its 1-based number when the items are unnamed)."""
        return self.items[index] if self.items else str(index + 1)

    def option_names(self) -> tuple[str, ...]:
        """The option names (``0``, ``1``, ... when unnamed)."""
        return self.options or tuple(str(i) for i in range(self.n_options))

    def groups_of(self, ranking: int) -> list[list[str]]:
        """Ranking ``ranking`` as a list of groups of option names, best first."""
        names = self.option_names()
        start, stop = int(self.offsets[ranking]), int(self.offsets[ranking + 1])
        groups: dict[int, list[str]] = {}
        for option, group in zip(self.option[start:stop].tolist(), self.group[start:stop].tolist(), strict=True):
            groups.setdefault(group, []).append(names[option])
        return [groups[g] for g in sorted(groups)]

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_arrays(cls, item_of: Any, offsets: Any, option: Any, group: Any, *, n_items: int | None = None,
                    n_options: int | None = None, rater_of: Any = None, items: Sequence[str] = (),
                    options: Sequence[str] = (), raters: Sequence[str] | None = None,
                    source: str = "<memory>") -> Rankings:
        """From the flat arrays (checked for shape; groups must be 1, 2, ... within each ranking in mention
        order, non-decreasing)."""
        item_of = np.asarray(item_of, dtype=np.int64)
        offsets = np.asarray(offsets, dtype=np.int64)
        option = np.asarray(option, dtype=np.int64)
        group = np.asarray(group, dtype=np.int64)
        if offsets.ndim != 1 or offsets.size != item_of.size + 1 or offsets[0] != 0 or offsets[-1] != option.size \
                or np.any(np.diff(offsets) < 1) or group.shape != option.shape:
            raise InputError("ranking arrays do not fit together", file=source,
                             allowed="offsets (R+1, from 0 to the mentions, each ranking naming at least one "
                                     "option), one item per ranking, one group per mention")
        n_items = int(item_of.max()) + 1 if n_items is None else int(n_items)
        n_options = int(option.max()) + 1 if n_options is None else int(n_options)
        if rater_of is None:
            rater_of = np.zeros(item_of.size, dtype=np.int64)
            raters = (ANONYMOUS,) if raters is None else raters
        rater_of = np.asarray(rater_of, dtype=np.int64)
        raters = tuple(raters) if raters is not None else tuple(str(r) for r in range(int(rater_of.max()) + 1))
        return cls(item_of=item_of, rater_of=rater_of, offsets=offsets, option=option, group=group,
                   n_items=n_items, n_options=n_options, items=tuple(items), options=tuple(options),
                   raters=raters, source=source)

    @classmethod
    def from_records(cls, records: Iterable[tuple[Hashable, Hashable, Any]], *,
                     options: Sequence[str] | None = None, source: str = "<memory>") -> Rankings:
        """From ``(rater, item, ranking)`` records; a ranking is a list of groups, best first, and a group is an
        option name or a list of tied option names (``["flu", ["cold", "covid"]]``). ``rater`` may be ``None``
        (unknown). ``options``: every option there is, in order (default: those named, sorted). Every problem is
        an :class:`InputError` naming the record (1-based) and what is allowed.

        >>> r = Rankings.from_records([(None, "q1", ["d2", "d1"]), ("x", "q2", [["d1", "d3"]])])
        >>> r.raters, r.items, r.rater_of.tolist(), r.group.tolist()
        (('(anonymous)', 'x'), ('q1', 'q2'), [0, 1], [1, 2, 1, 1])
        """
        rows: list[tuple[str, str, list[list[str]]]] = []
        allowed = "a list of groups, best first; a group is an option or a list of tied options"
        for number, record in enumerate(records, start=1):
            try:
                rater, item, ranking = record
            except (TypeError, ValueError):
                raise InputError("a record must be (rater, item, ranking)", file=source, row=number, value=record,
                                 allowed="(rater, item, [group, ...])") from None
            if isinstance(ranking, str) or not isinstance(ranking, Sequence) or not ranking:
                raise InputError("ranking is empty or not a list", file=source, row=number, value=ranking,
                                 allowed=allowed)
            groups: list[list[str]] = []
            seen: set[str] = set()
            for entry in ranking:
                names = [entry] if isinstance(entry, str | int) else list(entry) if isinstance(entry, Sequence) \
                    else None
                if not names or any(not isinstance(n, str | int) or isinstance(n, bool) for n in names):
                    raise InputError("a group is empty or not an option name", file=source, row=number,
                                     value=entry, allowed=allowed)
                texts = [str(n) for n in names]
                repeated = [t for t in texts if t in seen] or [t for t in texts if texts.count(t) > 1]
                if repeated:
                    raise InputError("an option is ranked twice", file=source, row=number, value=repeated[0],
                                     allowed="each option at most once per ranking")
                seen.update(texts)
                groups.append(texts)
            rows.append((ANONYMOUS if rater is None else str(rater), str(item), groups))
        if not rows:
            raise InputError("no rankings", file=source, allowed="at least one (rater, item, ranking) record")
        named = sorted({name for _, _, groups in rows for group in groups for name in group})
        if options is None:
            option_names = named
        else:
            option_names = [str(o) for o in options]
            unknown = sorted(set(named) - set(option_names))
            if unknown:
                raise InputError("ranking names an unknown option", file=source, value=unknown[0],
                                 allowed="one of the options given: " + ", ".join(option_names[:10])
                                 + (", ..." if len(option_names) > 10 else ""))
        option_index = {name: i for i, name in enumerate(option_names)}
        item_names = list(dict.fromkeys(item for _, item, _ in rows))
        item_index = {name: i for i, name in enumerate(item_names)}
        rater_names = list(dict.fromkeys(rater for rater, _, _ in rows))
        rater_index = {name: i for i, name in enumerate(rater_names)}
        option: list[int] = []
        group: list[int] = []
        sizes: list[int] = []
        for _, _, groups in rows:
            for g, members in enumerate(groups, start=1):
                option.extend(option_index[name] for name in members)
                group.extend([g] * len(members))
            sizes.append(sum(len(members) for members in groups))
        return cls(item_of=np.array([item_index[item] for _, item, _ in rows], dtype=np.int64),
                   rater_of=np.array([rater_index[rater] for rater, _, _ in rows], dtype=np.int64),
                   offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                   option=np.asarray(option, dtype=np.int64), group=np.asarray(group, dtype=np.int64),
                   n_items=len(item_names), n_options=len(option_names), items=tuple(item_names),
                   options=tuple(option_names), raters=tuple(rater_names), source=source)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, item: str = "item", rater: str | None = "rater",
                   option: str = "option", rank: str = "rank", source: str = "<memory>") -> Rankings:
        """From a long table, one row per ranked option: ``item``, ``rater`` (optional), ``option`` and ``rank``
        (smaller = better; equal ranks of one rater's ranking of one item are tied).

        >>> frame = pd.DataFrame({"item": ["q", "q", "q"], "rater": ["a", "a", "a"], "option": ["x", "y", "z"],
        ...                       "rank": [1, 2, 2]})
        >>> Rankings.from_frame(frame).groups_of(0)
        [['x'], ['y', 'z']]
        """
        missing = [c for c in (item, option, rank) if c not in frame.columns]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}", file=source, value=list(frame.columns),
                             allowed=f"{item}, {option}, {rank} (smaller = better) and optionally {rater}")
        ranks = pd.to_numeric(frame[rank], errors="coerce")
        if ranks.isna().any():
            row = int(np.flatnonzero(ranks.isna().to_numpy())[0])
            raise InputError("rank is not a number", file=source, row=row + 1, column=rank,
                             value=frame[rank].iloc[row], allowed="numbers, smaller = better")
        data = pd.DataFrame({"item": frame[item].astype(str), "option": frame[option].astype(str), "rank": ranks,
                             "rater": frame[rater].astype(str) if rater is not None and rater in frame.columns
                             else ANONYMOUS})
        records = []
        for (rater_name, item_name), rows in data.groupby(["rater", "item"], sort=False):
            ordered = rows.sort_values("rank", kind="stable")
            groups = [list(g["option"]) for _, g in ordered.groupby("rank", sort=True)]
            records.append((rater_name, item_name, groups))
        return cls.from_records(records, source=source)

    # ---------------------------------------------------------------- selection
    def take(self, ranking_ids: np.ndarray, *, item_of: np.ndarray | None = None,
             rater_of: np.ndarray | None = None, n_items: int | None = None,
             n_raters: int | None = None) -> Rankings:
        """The rankings ``ranking_ids`` (repeats allowed), optionally re-assigned to other items and raters (a
        bootstrap draw stacks its copies as new items: ``item_of = draw · N + item``); unnamed items and raters
        when re-assigned.

        >>> r = Rankings.from_records([("a", "q", ["x", "y"]), ("b", "q", ["y"])])
        >>> r.take(np.array([1, 1])).option.tolist()
        [1, 1]
        """
        ranking_ids = np.asarray(ranking_ids, dtype=np.int64)
        counts = np.diff(self.offsets)[ranking_ids]
        total = int(counts.sum())
        within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        mention = np.repeat(self.offsets[ranking_ids], counts) + within
        new_items = item_of is not None
        new_raters = rater_of is not None
        items_out = np.asarray(item_of if new_items else self.item_of[ranking_ids], dtype=np.int64)
        raters_out = np.asarray(rater_of if new_raters else self.rater_of[ranking_ids], dtype=np.int64)
        raters: tuple[str, ...] = self.raters
        if new_raters:
            count = int(raters_out.max()) + 1 if n_raters is None else n_raters
            raters = tuple(str(r) for r in range(count))
        return Rankings(item_of=items_out, rater_of=raters_out,
                        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                        option=self.option[mention], group=self.group[mention],
                        n_items=(int(items_out.max()) + 1 if n_items is None else n_items) if new_items
                        else self.n_items, n_options=self.n_options, items=() if new_items else self.items,
                        options=self.options, raters=raters, source=self.source)
