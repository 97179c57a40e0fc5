"""The annotation table: code order against pandas, the label column and the response frame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.data.table import AnnotationTable, labels_at, sorted_codes, sorted_integer_codes


def test_sorted_codes_match_pandas_factorize() -> None:
    """Issue 14: the fast reading path equals the simple one."""
    values = pd.Series(["b", "10", "9", "é", "b", "A", "10"])
    expected_codes, expected = pd.factorize(values, sort=True)
    for column in (values, values.astype("category"),
                   pd.Series(pd.Categorical(values, categories=["zz", *sorted(set(values))]))):
        codes, names = sorted_codes(column)
        assert codes.tolist() == expected_codes.tolist() and names.tolist() == list(expected)
    wide = np.array([10**12, 5, 10**12, 0])
    for span in (10**12 + 1, 10):  # a sort, and (a small span claimed) the lookup table on small values
        codes, distinct = sorted_integer_codes(wide if span > 10 else np.array([7, 3, 7]), span)
        assert codes.tolist() == ([2, 1, 2, 0] if span > 10 else [1, 0, 1])
        assert distinct.tolist() == ([0, 5, 10**12] if span > 10 else [3, 7])


@pytest.mark.parametrize("labels", [
    pd.Index(["a", "b", "c"], dtype=object), pd.Index([3, 1, 2]), pd.Index([1, "x", 2.5], dtype=object),
    pd.Index([1.5, 2.5]), pd.Index(["a", "b"], dtype="str"), pd.Index([True, False], dtype=object),
    pd.Index(["1", "2"], dtype=object), pd.Index(pd.to_datetime(["2020-01-01", "2021-06-30"])),
])
def test_labels_at_builds_the_column_pandas_infers(labels: pd.Index) -> None:
    """Issue 14: the score path at scale."""
    codes = np.random.default_rng(0).integers(0, len(labels), 50)
    for taken in (codes, codes[:0]):
        simple = pd.DataFrame({"x": labels.to_numpy()[taken]})
        pd.testing.assert_frame_equal(pd.DataFrame({"x": labels_at(labels, taken)}), simple, check_exact=True)


def test_response_frame_equals_the_frame_from_every_label() -> None:
    """Issue 14: the score path at scale."""
    frame = pd.DataFrame({"item": [10, 10, 11, 12, 12], "agent": ["x", "y", "x", "y", "y"],
                          "rater": ["r1", "r2", "r1", "r2", "r3"], "label": [0, 1, 1, 0, 1]})
    table = AnnotationTable.from_frame(frame, levels=("0", "1"))
    simple = pd.DataFrame({"item": table.items.to_numpy()[table.response_item],
                           "agent": table.agents.to_numpy()[table.response_agent],
                           "judgments": table.judgments_per_response()})
    pd.testing.assert_frame_equal(table.response_frame(), simple, check_exact=True)
    assert table.response_frame()["agent"].tolist() == ["x", "y", "x", "y"]
