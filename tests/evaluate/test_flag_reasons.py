"""Flags by reason per evaluator against QC (issue 31), counted by hand."""

from __future__ import annotations

import pandas as pd

from displayed import check_displayed
from stableval.evaluate.flag_reasons import FLAG_REASON_COLUMNS, flags_by_reason


def _rows(records: list[tuple[str, str, bool, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(records, columns=["item", "rater", "flag", "flag_reason"])
    return frame.assign(agent="", qc=frame["rater"] == "qc")


def test_counts_by_hand() -> None:
    """QC flags i1 PII, i2 NSFW, i3 PII, leaves i4 and i5 unflagged. Evaluator a: i1 PII (both), i2 PII (QC said
    NSFW: "other reason" on the NSFW row; not "extra", QC flagged i2 too), i3 not flagged (missed PII), i4 medical
    advice (extra). Evaluator b: i1 PII (both), i5 not flagged, and i6 with no QC judgment (left out, noted)."""
    rows = _rows([
        ("i1", "qc", True, "PII"), ("i2", "qc", True, "NSFW"), ("i3", "qc", True, "PII"), ("i4", "qc", False, ""),
        ("i5", "qc", False, ""),
        ("i1", "a", True, "PII"), ("i2", "a", True, "PII"), ("i3", "a", False, ""), ("i4", "a", True, "medical advice"),
        ("i1", "b", True, "PII"), ("i5", "b", False, ""), ("i6", "b", True, "NSFW"),
    ])
    result = flags_by_reason(rows)
    table = result.frame.set_index(["evaluator", "reason"])
    assert tuple(result.frame.columns) == FLAG_REASON_COLUMNS
    columns = ["flagged", "qc_flagged", "both", "other_reason", "missed", "extra"]
    assert table.loc[("a", "PII"), columns].tolist() == [2, 2, 1, 0, 1, 0]
    assert table.loc[("a", "NSFW"), columns].tolist() == [0, 1, 0, 1, 0, 0]
    assert table.loc[("a", "medical advice"), columns].tolist() == [1, 0, 0, 0, 0, 1]
    assert table.loc[("b", "PII"), columns].tolist() == [1, 1, 1, 0, 0, 0]
    assert table.loc[("(all)", "PII"), columns].tolist() == [3, 3, 2, 0, 1, 0]
    assert result.notes == ("1 evaluator judgment(s) without a QC judgment of the same item are left out",)
    check_displayed(result)


def test_qc_by_rater_id_and_no_reason_column() -> None:
    """QC given as a rater id; flags without a reason column are 'unspecified'."""
    rows = pd.DataFrame({"item": ["1", "1", "2", "2"], "agent": "", "rater": ["lead", "e", "lead", "e"],
                         "flag": [True, True, True, False], "qc": False})
    table = flags_by_reason(rows, qc_rater=["lead"]).frame.set_index(["evaluator", "reason"])
    assert table.loc[("e", "unspecified"), ["flagged", "qc_flagged", "both", "missed"]].tolist() == [1, 2, 1, 1]
