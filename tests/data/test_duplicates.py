"""The duplicate policy's key checks against sorting."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from stableval.data.duplicates import apply_duplicates, combine_codes, has_repeats, repeats_in_pairs


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 6)), max_size=80), st.booleans())
def test_repeats_in_pairs_agrees_with_sorting(rows: list[tuple[int, int]], grouped: bool) -> None:
    """Issue 14: integer ids read by lookup."""
    first = np.array([r[0] for r in rows], dtype=np.int32)
    second = np.array([r[1] for r in rows], dtype=np.int32)
    if grouped:  # the judgments of a response next to each other, the layout the no-sort check serves
        order = np.argsort(first, kind="stable")
        first, second = first[order], second[order]
    expected = has_repeats(combine_codes(first, second)) if first.size else False
    assert repeats_in_pairs(first, second, 7) == expected
    assert repeats_in_pairs(first, second, 7, distinct=len(set(first.tolist()))) == expected
    assert repeats_in_pairs(first, second, 7, longest_run=1) == expected
    assert repeats_in_pairs(first, second, 7, longest_run=0) == expected  # always the sorting branch


def test_repeats_in_pairs_lags_and_wide_keys() -> None:
    """Issue 14: integer ids read by lookup."""
    first = np.repeat(np.arange(5), 4)
    second = np.tile([0, 1, 2, 3], 5)
    assert not repeats_in_pairs(first, second, 4)
    for lag in (1, 2, 3):  # a repeat 1, 2 or 3 rows back inside a run of 4
        changed = second.copy()
        changed[8 + lag] = changed[8]
        assert repeats_in_pairs(first, changed, 4)
    wide = np.array([2**20, 5, 2**20]), np.array([2**20 - 1, 0, 2**20 - 1])
    assert repeats_in_pairs(*wide, 2**20) and not repeats_in_pairs(wide[0], np.array([1, 0, 2]), 2**20)


def test_duplicate_key_checks() -> None:
    """Issue 14: the fast reading path equals the simple one."""
    assert not has_repeats(np.array([5, 1, 9])) and has_repeats(np.array([5, 1, 5]))
    assert not has_repeats(np.array([], dtype=np.int64))
    big = np.array([2**40, 2**40, 1]), np.array([2**30, 2**30 + 1, 2**30]), np.array([7, 7, 7])
    key = combine_codes(*big)  # the product of the widths overflows int64: renumbered, still one code per tuple
    assert len(set(key.tolist())) == 3
    keep, notes = apply_duplicates(np.array([4, 2, 4]), "first", source="x", offset=None, describe=str, what="k")
    assert keep is not None and keep.tolist() == [True, True, False] and "dropped 1" in notes[0]
