"""Likert and numeric ratings to ordered levels without hand recoding: merge label values into levels, or cut
numbers into bins.

``merge_levels`` names each level, worst first, with the label values it takes: ``"1,2=low 3=mid 4,5=high"``
(groups separated by spaces or ``;``). ``bins`` gives increasing cut points, ``"2.5,3.5"``: a value ``v`` falls in
bin ``i`` when ``cut[i-1] <= v < cut[i]``; the bins are named ``<2.5``, ``[2.5,3.5)``, ``>=3.5``, or by ``levels``
(one name per bin, worst first). A label that no group names, or that is not a number when binning, is an error
naming its row.

>>> import pandas as pd
>>> merge = recoding("1,2=low 3=mid 4,5=high")
>>> merge.levels, merge.apply(pd.Series(["1", "5", "3", " 2"]), source="x.csv", column="label").tolist()
(('low', 'mid', 'high'), ['low', 'high', 'mid', 'low'])
>>> merge.describe()
'levels merged: 1,2 → low; 3 → mid; 4,5 → high'
>>> cut = recoding(bins="2.5,3.5")
>>> cut.levels, cut.apply(pd.Series([1, 2.5, 4.0]), source="x.csv", column="score").tolist()
(('<2.5', '[2.5,3.5)', '>=3.5'), ['<2.5', '[2.5,3.5)', '>=3.5'])
>>> recoding(bins="2.5", levels="bad,good").to_dict()
{'bins': [2.5], 'levels': {'bad': '<2.5', 'good': '>=2.5'}}
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

from stableval.data.files import line_offset, row_error
from stableval.errors import InputError

__all__ = ["Recoding", "recoding"]

_MERGE_EXAMPLE = "groups VALUES=LEVEL worst first, e.g. '1,2=low 3=mid 4,5=high'"
_BINS_EXAMPLE = "increasing finite numbers, e.g. '2.5,3.5'"


@dataclass(frozen=True)
class Recoding:
    """How label values become levels.

    Attributes:
        levels: the new levels, worst first.
        groups: for merging, the label values of each level; empty when binning.
        cuts: for binning, the increasing cut points; empty when merging.
    """

    levels: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...] = ()
    cuts: tuple[float, ...] = ()

    def _bin_names(self) -> list[str]:
        c = [f"{v:g}" for v in self.cuts]
        return [f"<{c[0]}", *(f"[{a},{b})" for a, b in pairwise(c)), f">={c[-1]}"]

    def describe(self) -> str:
        """The mapping in one line, for notes and the printed output."""
        if self.cuts:
            pairs = zip(self._bin_names(), self.levels, strict=True)
            return "labels binned: " + "; ".join(b if b == level else f"{b} → {level}" for b, level in pairs)
        return "levels merged: " + "; ".join(f"{','.join(g)} → {level}"
                                              for g, level in zip(self.groups, self.levels, strict=True))

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: ``{"merge": {level: [values]}}`` or ``{"bins": [cuts], "levels": {level: interval}}``."""
        if self.cuts:
            return {"bins": list(self.cuts), "levels": dict(zip(self.levels, self._bin_names(), strict=True))}
        return {"merge": {level: list(g) for level, g in zip(self.levels, self.groups, strict=True)}}

    def apply(self, values: pd.Series, *, source: str, column: str, offset: int | None = None) -> pd.Series:
        """The level name of each value (missing and empty values become ``""``, for the reader to report or, where
        a row is flagged or skipped, to allow)."""
        text = values.astype("string").str.strip()
        empty = (text.isna() | (text == "")).to_numpy()
        if self.cuts:
            numbers = pd.to_numeric(text.where(~empty), errors="coerce").to_numpy(dtype=float)
            bad = ~empty & ~np.isfinite(numbers)
            allowed = "a number (the labels are binned with {bins})"
            code = np.searchsorted(np.asarray(self.cuts), np.nan_to_num(numbers), side="right")
        else:
            lookup = {value: i for i, group in enumerate(self.groups) for value in group}
            numeric = {_number(value): i for value, i in lookup.items() if _number(value) is not None}
            codes, uniques = pd.factorize(text.where(~empty), use_na_sentinel=True)
            mapped = np.array([lookup.get(u, numeric.get(_number(u), -1)) for u in uniques] + [-1], dtype=np.int64)
            code = mapped[codes]
            bad = ~empty & (code < 0)
            allowed = "one of the merged values: " + ", ".join(lookup)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise row_error(f"label not covered by the recoding ({int(bad.sum()):,} row(s) in all)", source=source,
                            row=pos + 1, offset=offset, column=column, value=str(values.iloc[pos]),
                            has_value=True, allowed=allowed)
        names = np.asarray(self.levels, dtype=object)[np.clip(code, 0, len(self.levels) - 1)]
        return pd.Series(np.where(empty, "", names), index=values.index, dtype=object)

    def apply_to_frame(self, frame: pd.DataFrame, column: str, *, source: str) -> pd.DataFrame:
        """``frame`` with ``column`` recoded (its other columns and attributes kept)."""
        out = frame.assign(**{column: self.apply(frame[column], source=source, column=column,
                                                 offset=line_offset(frame))})
        out.attrs = dict(frame.attrs)
        return out


def _number(text: object) -> float | None:
    try:
        value = float(str(text))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _refuse(problem: str, option: str, value: object, allowed: str) -> InputError:
    return InputError(problem, value=value, allowed=allowed, option=option)


def _merge_groups(spec: str | Mapping[str, Sequence[object]]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    if isinstance(spec, Mapping):
        pairs = [(str(level).strip(), [str(v).strip() for v in values]) for level, values in spec.items()]
    else:
        pairs = []
        for group in (g for g in re.split(r"[\s;]+", spec.strip()) if g):
            values, sep, level = group.rpartition("=")
            if not sep:
                raise _refuse(f"merge group {group!r} has no '='", "merge_levels", spec, _MERGE_EXAMPLE)
            pairs.append((level.strip(), [v.strip() for v in values.split(",")]))
    seen: dict[str, str] = {}
    for level, values in pairs:
        if not level or not values or any(not v for v in values):
            raise _refuse("a merge group has an empty value or level name", "merge_levels", spec, _MERGE_EXAMPLE)
        for value in values:
            if value in seen:
                raise _refuse(f"value {value!r} is merged into both {seen[value]!r} and {level!r}", "merge_levels",
                              spec, _MERGE_EXAMPLE)
            seen[value] = level
    levels = tuple(level for level, _ in pairs)
    if len(set(levels)) != len(levels):
        raise _refuse("a level is named twice", "merge_levels", spec, _MERGE_EXAMPLE + " (each level once)")
    if len(levels) < 2:
        raise _refuse("need at least 2 levels", "merge_levels", spec, _MERGE_EXAMPLE)
    return levels, tuple(tuple(values) for _, values in pairs)


def _cut_points(bins: str | Sequence[float]) -> tuple[float, ...]:
    words = [w for w in re.split(r"[\s,;]+", bins.strip()) if w] if isinstance(bins, str) else list(bins)
    cuts = [_number(w) for w in words]
    if not cuts or any(c is None for c in cuts):
        raise _refuse("cut points are not numbers", "bins", bins, _BINS_EXAMPLE)
    values = tuple(float(c) for c in cuts if c is not None)
    if any(b <= a for a, b in pairwise(values)):
        raise _refuse("cut points are not increasing", "bins", bins, _BINS_EXAMPLE)
    return values


def recoding(merge_levels: str | Mapping[str, Sequence[object]] | None = None,
             bins: str | Sequence[float] | None = None,
             levels: Sequence[str] | str | None = None) -> Recoding | None:
    """The recoding the options ask for (``None``: none); a bad spec raises :class:`InputError` naming the option.

    ``levels`` names the bins (one per bin, worst first); with ``merge_levels`` the spec names the levels itself.

    >>> try:
    ...     recoding("1,2=low 3")
    ... except InputError as error:
    ...     print(error.problem_template)
    merge group '3' has no '='
    """
    if merge_levels is None and bins is None:
        return None
    if merge_levels is not None and bins is not None:
        raise _refuse("give either merged levels or bins, not both", "bins", bins, "one of {merge_levels}, {bins}")
    if merge_levels is not None:
        if levels is not None:
            raise _refuse("levels cannot be combined with merged levels: the merge names the levels, worst first",
                          "levels", levels if isinstance(levels, str) else list(levels), "no {levels}")
        names, groups = _merge_groups(merge_levels)
        return Recoding(levels=names, groups=groups)
    cuts = _cut_points(bins)  # type: ignore[arg-type]
    named = Recoding(levels=(), cuts=cuts)._bin_names()
    if levels is not None:
        given = [v.strip() for v in levels.split(",")] if isinstance(levels, str) else [str(v) for v in levels]
        if len(given) != len(cuts) + 1:
            raise _refuse(f"{len(cuts)} cut point(s) make {len(cuts) + 1} bins, but {len(given)} level name(s) are "
                          "given", "levels", levels if isinstance(levels, str) else given,
                          f"{len(cuts) + 1} names, worst first")
        named = given
    return Recoding(levels=tuple(named), cuts=cuts)
