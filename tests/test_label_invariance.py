"""Renaming or reordering the labels changes no output of any registered label model (issue 28).

Issue 28 found two copies of one data set that differ only in the names of the labels giving the default STABLEVAL
0.7671 and 0.7571 accuracy: its random starts were drawn level by level in the order of the level codes, so a
different coding drew a different start. Wawa and ZeroBasedSkill broke ties of the majority vote towards the lowest
code, and MACE drew its random spamming distributions level by level in code order. The property below checks
every method of the registry on small random tables: the copy whose levels are renamed (and so re-coded in a new
order) gets the same posteriors, level by level, as the original. The ordinal model reads the level order as
meaningful, so it is checked under renamings that keep the order only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stableval.aggregate.registry import REGISTRY, method_names
from stableval.data.table import AnnotationTable

#: methods whose model reads the level order (checked with order-keeping renamings only)
ORDERED = {name for name in method_names() if REGISTRY[name].estimator.__name__ == "OrdinalRaters"}


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, int]:
    """A small table of judgments (item, rater, level code), some responses rated by few raters."""
    k = draw(st.integers(2, 4))
    n_items = draw(st.integers(3, 14))
    n_raters = draw(st.integers(2, 5))
    rows = []
    for item in range(n_items):
        raters = draw(st.lists(st.integers(0, n_raters - 1), min_size=1, max_size=n_raters, unique=True))
        rows += [(f"i{item}", "A", f"r{rater}", draw(st.integers(0, k - 1))) for rater in raters]
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    return frame, k


def renamed(frame: pd.DataFrame, k: int, order: list[int]) -> tuple[AnnotationTable, AnnotationTable, list[int]]:
    """(the table with levels named L0..L(k-1), the copy whose level j is named so that it sorts at
    ``order[j]``, and where each original level's column is in the copy)."""
    names = [f"L{j}" for j in range(k)]
    original = AnnotationTable.from_frame(frame, levels=names)
    new_names = [f"M{order[j]}" for j in range(k)]  # level j's new name; codes follow the new names' order
    code = {name: position for position, name in enumerate(sorted(new_names))}
    column = [code[new_names[j]] for j in range(k)]
    copy = frame.assign(label=[column[j] for j in frame["label"]])
    return original, AnnotationTable.from_frame(copy, levels=sorted(new_names)), column


def check(method: str, frame: pd.DataFrame, k: int, order: list[int]) -> None:
    original, copy, column = renamed(frame, k, order)
    first = np.asarray(REGISTRY[method].estimator().fit(original).posteriors_)
    second = np.asarray(REGISTRY[method].estimator().fit(copy).posteriors_)[:, column]
    np.testing.assert_allclose(second, first, atol=1e-6, err_msg=f"{method}: renaming the levels changed the "
                                                                 f"posteriors (order {order})")


@pytest.mark.parametrize("method", method_names())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(), seed=st.integers(0, 2**16))
def test_renaming_the_levels_changes_no_posterior(method: str, data: tuple[pd.DataFrame, int], seed: int) -> None:
    frame, k = data
    order = list(range(k)) if method in ORDERED else [int(j) for j in np.random.default_rng(seed).permutation(k)]
    check(method, frame, k, order)
    if method not in ORDERED:
        check(method, frame, k, list(range(k))[::-1])
