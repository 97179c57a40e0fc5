"""The duplicate policy: what to do when the same (item, agent, rater) — or the same vote — appears on several rows.

The policies are declared once, as :class:`~stableval.data.options.DuplicatePolicy`.

``"error"`` (default) names the repeated rows; ``"first"`` and ``"last"`` keep one of them; ``"keep"`` keeps
every one as an independent judgment.

>>> import numpy as np
>>> key = combine_codes(np.array([0, 0, 1]), np.array([3, 3, 3]))
>>> keep, notes = apply_duplicates(key, "last", source="x.csv", offset=1, describe=str, what="(item, rater)")
>>> keep.tolist(), notes
([False, True, True], ["dropped 1 duplicate judgment(s) (policy 'last')"])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from stableval.data.files import rows_text
from stableval.data.labels import WARNING_PREFIX
from stableval.data.options import DUPLICATE_POLICIES, check_policy  # declared with InputOptions
from stableval.errors import COLUMN_OPTION, InputError, spell_options

__all__ = ["DUPLICATE_POLICIES", "apply_duplicates", "check_policy", "combine_codes", "has_repeats",
           "repeats_in_pairs"]

def combine_codes(*codes: np.ndarray) -> np.ndarray:
    """One int64 code per distinct tuple of non-negative integer codes (no overflow: compress as we go).

    >>> combine_codes(np.array([0, 1, 0]), np.array([2, 2, 2])).tolist()
    [2, 5, 2]
    """
    key = np.asarray(codes[0], dtype=np.int64)
    top = int(key.max()) if key.size else 0
    for more in codes[1:]:
        more = np.asarray(more, dtype=np.int64)
        width = int(more.max()) + 1 if more.size else 1
        if (top + 1) * width >= 2**62:  # the plain product could overflow: renumber the key first
            key = pd.factorize(key, sort=False)[0].astype(np.int64)
            top = int(key.max()) if key.size else 0
        key = key * width  # a new array: the caller's codes are never changed
        key += more
        top = top * width + width - 1
    return key


def has_repeats(key: np.ndarray) -> bool:
    """True when some value of the int64 ``key`` occurs more than once (one sort, no hashing).

    >>> has_repeats(np.array([3, 1, 2])), has_repeats(np.array([3, 1, 3]))
    (False, True)
    """
    ordered = np.sort(np.asarray(key))
    return bool((ordered[1:] == ordered[:-1]).any())


def repeats_in_pairs(first: np.ndarray, second: np.ndarray, width: int, *, distinct: int | None = None,
                     longest_run: int = 16) -> bool:
    """True when some pair (``first[i]``, ``second[i]``) occurs on two rows, for non-negative integer codes (``second``
    below ``width``); ``distinct``: how many values ``first`` takes, when the caller knows.

    Rows grouped by ``first`` (each value's rows next to each other, as files usually list the judgments of a
    response) in runs of at most ``longest_run`` rows are checked by comparing each row with the rows 1, 2, ...
    before it until no run is that long, without sorting and without index arrays; otherwise the packed key
    ``first · width + second`` is sorted (:func:`has_repeats`).

    >>> repeats_in_pairs(np.array([0, 0, 1, 1]), np.array([2, 1, 2, 1]), 3)
    False
    >>> repeats_in_pairs(np.array([0, 0, 1, 0]), np.array([2, 1, 2, 2]), 3)
    True
    """
    first, second = np.asarray(first), np.asarray(second)
    if first.size < 2:
        return False
    if distinct is None:
        seen = np.zeros(int(first.max()) + 1, dtype=bool)
        seen[first] = True
        distinct = int(np.count_nonzero(seen))
    runs = 1 + int(np.count_nonzero(first[1:] != first[:-1]))
    if runs == distinct:  # grouped: a repeat lies within a run, fewer rows back than the run is long
        for lag in range(1, min(longest_run, first.size - 1) + 1):
            equal = first[lag:] == first[:-lag]
            if not equal.any():  # no run is longer than `lag`: every pair within a run was compared
                return False
            equal &= second[lag:] == second[:-lag]
            if equal.any():
                return True
    top = int(first.max()) + 1
    key_type = np.dtype(np.uint32 if top * width <= 2**32 else np.int64)
    key = first.astype(key_type)
    key *= width
    key += second.astype(key_type, copy=False)
    return has_repeats(key)


def apply_duplicates(
    key: np.ndarray,
    duplicates: str,
    *,
    source: str,
    offset: int | None,
    describe: Callable[[int], str],
    what: str,
    hints: Mapping[str, pd.Series] | None = None,
) -> tuple[np.ndarray | None, list[str]]:
    """Rows to keep (None = all) and notes, for rows sharing ``key``.

    ``describe(pos)`` names the ids of row ``pos`` for the message; ``what`` names the key, e.g.
    '(item, agent, rater)'. With ``"error"`` repeated keys raise an :class:`InputError` naming up to three of
    them with their rows. ``hints`` are unused columns (e.g. ``turn``, ``category``) that may tell the repeated
    rows apart: one that does is named in the error (instead of suggesting a policy that would hide it) and, under
    another policy, in a warning note.
    """
    if not has_repeats(key):  # the usual case, decided by one sort of the integer key
        return None, []
    series = pd.Series(key)
    repeat = series.duplicated(keep="first").to_numpy()
    n_repeat = int(repeat.sum())
    if n_repeat == 0:
        return None, []
    differ = _differing(key, hints or {})
    if differ:
        names = ", ".join(map(repr, differ))
        criterion = COLUMN_OPTION + "criterion"
        advice = (f"rows that repeat a {what} differ in column(s) {names}: they are probably different things "
                  "judged (e.g. a second turn or another criterion). Name them: make the column part of the item "
                  f"id, score each value separately (pairwise votes: {{{criterion}}}), or "
                  "convert the file (stableval convert mt-bench for MT-Bench votes)")
        options = {criterion: differ[0], "duplicates": "keep"}
        if duplicates == "error":
            first = int(np.flatnonzero(repeat)[0])
            raise InputError(f"{n_repeat:,} row(s) repeat a {what} judged on an earlier row, but {advice}",
                             file=source, row=first + 1, column=differ[0], options=options,
                             allowed=f"one row per {what}; {{duplicates}} would merge them")
    if duplicates == "error":
        examples = []
        repeated_keys = pd.unique(key[repeat])[:3]
        for value in repeated_keys:
            same = np.flatnonzero(key == value)
            pos = int(same[0])
            rows = [int(p) + 1 for p in same[:4]]
            examples.append(f"{rows_text(rows, offset)} ({describe(pos)})")
        first = int(np.flatnonzero(repeat)[0])
        raise InputError(
            f"{n_repeat:,} row(s) repeat a {what} judged on an earlier row: " + "; ".join(examples),
            file=source, row=first + 1, options={"duplicates": "first|last|keep"},
            allowed="{duplicates} to keep the first, the last, or every one of them as an independent judgment")
    # a note is read by Python and command-line users alike: the option in words
    warning = [WARNING_PREFIX + spell_options(advice, options, lambda _, column: f"make {column!r} the criterion "
                                                                                  "column")] if differ else []
    if duplicates == "keep":
        return None, [f"kept {n_repeat:,} repeated judgment(s) of the same {what} as independent judgments "
                      "(policy 'keep')", *warning]
    keep = ~series.duplicated(keep="first" if duplicates == "first" else "last").to_numpy()
    return keep, [f"dropped {n_repeat:,} duplicate judgment(s) (policy {duplicates!r})", *warning]


def _differing(key: np.ndarray, hints: Mapping[str, pd.Series]) -> list[str]:
    """The ``hints`` columns whose value differs between rows sharing a key."""
    if not hints:
        return []
    key_code = pd.factorize(pd.Series(key))[0]
    n_keys = int(key_code.max()) + 1 if len(key_code) else 0
    out = []
    for name, values in hints.items():
        pair = combine_codes(key_code, pd.factorize(values)[0])
        if len(pd.unique(pair)) > n_keys:
            out.append(name)
    return out
