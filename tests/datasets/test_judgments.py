"""Judgment tables with flags and skips: the readers and their errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stableval.datasets.judgments import read_judgments
from stableval.datasets.nvidia_reliability import read_toy_json
from stableval.errors import InputError

from paths import nvidia_toy_files


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("item,rater,label,flag\nq1,r1,A,maybe\n", ["row 1 (line 2)", "'flag'", "'maybe'", "yes/no"]),
        ("item,rater,label,flag\nq1,r1,A,no\nq1,r2,,no\n", ["row 2 (line 3)", "'label'", "flag/skip"]),
        ("item,label\nq1,A\n", ["no rater column"]),
    ],
)
def test_bad_input_names_row_column_value(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_judgments(path)
    for part in expected:
        assert part in str(error.value)


def test_judgment_readers_live_in_datasets(tmp_path: Path) -> None:
    """The moved readers: column aliases, flag parsing, the .json dispatch, explicit columns and levels."""
    from stableval.datasets.judgments import FLAG_FALSE, FLAG_TRUE, judgments_from_frame, parse_flags

    assert {"yes", "1"} <= FLAG_TRUE and "" in FLAG_FALSE
    raw = pd.DataFrame({"Task": ["q1", "q2"], "Judge": ["a", "b"], "Best": ["tie", ""], "NSFW": ["N", "True"]})
    frame = judgments_from_frame(raw, levels="tie,response_1", default_agent="bot")
    assert frame[["item", "agent", "rater", "label", "flag", "skip", "row"]].values.tolist() == [
        ["q1", "bot", "a", "tie", False, False, 1], ["q2", "bot", "b", "", True, False, 2]]
    with pytest.raises(InputError, match="not one of the levels"):
        judgments_from_frame(raw.assign(Best=["win", "tie"]), levels=["tie"])
    with pytest.raises(InputError, match=r"row 2.*'sometimes'"):
        parse_flags(pd.DataFrame({"f": ["no", "sometimes"]}), "f", source="x.csv")
    path = tmp_path / "j.tsv"
    path.write_text("question\tworker\tgrade\tstatus\nq1\tr1\tA\tyes\n")
    read = read_judgments(path, columns={"skip": "status"})
    assert read["skip"].tolist() == [True] and read["label"].tolist() == ["A"]
    data, _ = nvidia_toy_files()
    pd.testing.assert_frame_equal(read_judgments(data), read_toy_json(data))


def test_flag_reasons_are_read() -> None:
    """Issue 31: a flag_reason column says why a row is flagged; a flagged row without one is 'unspecified'; a
    reason on a row that is not flagged is an error naming the row."""
    import pandas as pd

    from stableval.datasets.judgments import judgments_from_frame
    from stableval.errors import InputError

    raw = pd.DataFrame({"item": ["q1", "q2", "q3"], "rater": ["a", "a", "a"], "label": ["", "", "B"],
                        "flag": ["yes", "yes", "no"], "reason": ["PII", "", ""]})
    assert judgments_from_frame(raw)["flag_reason"].tolist() == ["PII", "unspecified", ""]
    raw.loc[2, "reason"] = "NSFW"
    with pytest.raises(InputError, match=r"row 3, column 'reason': a flag reason on a row that is not flagged"):
        judgments_from_frame(raw)


def test_votes_are_judgments_of_the_comparison() -> None:
    """Issue 27: pairwise votes read as judgments; the same preference agrees whichever side the answer was on."""
    import pandas as pd

    from stableval.datasets.judgments import JUDGMENT_COLUMNS, judgments_from_votes

    votes = pd.DataFrame({"question_id": ["q1", "q1", "q1"], "model_a": ["A", "B", "A"], "model_b": ["B", "A", "B"],
                          "judge": ["r1", "r2", "r3"], "winner": ["model_a", "model_b", "tie"]})
    out = judgments_from_votes(votes)
    assert tuple(out.columns) == JUDGMENT_COLUMNS
    assert out["item"].unique().tolist() == ["q1: A vs B"] and out["label"].tolist() == ["A", "A", "tie"]
    assert out["row"].tolist() == [1, 2, 3] and not out[["flag", "skip", "qc"]].to_numpy().any()
