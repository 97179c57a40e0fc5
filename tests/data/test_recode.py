"""Likert and numeric ratings recoded into levels (issue 31): the merge and bin specs, their errors, and the
reading path of every command (the note, the table's recoding, the refusal of pairwise votes)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stableval.data import InputOptions, load
from stableval.data.recode import recoding
from stableval.errors import InputError


def test_merge_spec_maps_values_and_numbers() -> None:
    merge = recoding("1,2=low;3=mid 4,5=high")
    assert merge is not None and merge.levels == ("low", "mid", "high")
    values = pd.Series(["1", "2.0", " 5", "", None, "3"])
    assert merge.apply(values, source="x", column="label").tolist() == ["low", "low", "high", "", "", "mid"]
    assert merge.to_dict() == {"merge": {"low": ["1", "2"], "mid": ["3"], "high": ["4", "5"]}}
    same = recoding({"low": [1, 2], "mid": [3], "high": [4, 5]})
    assert same == merge


def test_bins_cut_right_open_intervals() -> None:
    """A value equal to a cut point falls in the bin above it: [c_i, c_{i+1})."""
    cut = recoding(bins=[0.5, 0.8], levels=["bad", "ok", "good"])
    assert cut is not None
    values = pd.Series([0.1, 0.5, 0.79, 0.8, 1.0])
    assert cut.apply(values, source="x", column="score").tolist() == ["bad", "ok", "ok", "good", "good"]
    assert cut.describe() == "labels binned: <0.5 → bad; [0.5,0.8) → ok; >=0.8 → good"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"merge_levels": "1,2=low 3"}, "merge group '3' has no '='"),
    ({"merge_levels": "1,2=low 2,3=high"}, "value '2' is merged into both 'low' and 'high'"),
    ({"merge_levels": "1,2=low 3=low"}, "a level is named twice"),
    ({"merge_levels": "1,2,3=all"}, "need at least 2 levels"),
    ({"merge_levels": "1,=low 2=high"}, "empty value or level name"),
    ({"merge_levels": "1=low 2=high", "levels": "a,b"}, "levels cannot be combined"),
    ({"bins": "2,1"}, "cut points are not increasing"),
    ({"bins": "a,b"}, "cut points are not numbers"),
    ({"bins": "1,2", "levels": "a,b"}, "2 cut point(s) make 3 bins, but 2 level name(s)"),
    ({"bins": "1", "merge_levels": "1=a 2=b"}, "either merged levels or bins"),
])
def test_bad_specs_are_refused(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        recoding(**kwargs)  # type: ignore[arg-type]


def test_reading_a_file_notes_and_keeps_the_mapping(tmp_path: Path) -> None:
    path = tmp_path / "likert.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,1\nq1,A,r2,5\nq2,A,r1,3\nq2,A,r2,4\n")
    table = load(path, InputOptions(merge_levels="1,2=low 3=mid 4,5=high")).table
    assert table.levels == ("low", "mid", "high") and table.label.tolist() == [0, 2, 1, 2]
    assert table.notes[0] == "levels merged: 1,2 → low; 3 → mid; 4,5 → high"
    assert table.summary()["recoding"] == {"merge": {"low": ["1", "2"], "mid": ["3"], "high": ["4", "5"]}}
    assert table.subset(table.rater == 0).recoding == table.recoding
    with pytest.raises(InputError, match=r"row 2 \(line 3\), column 'label': label not covered.*got '5'"):
        load(path, InputOptions(merge_levels="1,2=low 3,4=high"))
    binned = load(path, InputOptions(bins="2.5", levels="low,high")).table
    assert binned.label.tolist() == [0, 1, 1, 1]


def test_parquet_with_integer_ids_is_recoded_too(tmp_path: Path) -> None:
    """The integer-id Parquet fast path must not skip the recoding."""
    path = tmp_path / "likert.parquet"
    pd.DataFrame({"item": [1, 1, 2], "agent": [1, 1, 1], "rater": [1, 2, 1], "label": [1, 5, 3]}).to_parquet(path)
    table = load(path, InputOptions(merge_levels="1,2=low 3=mid 4,5=high")).table
    assert table.levels == ("low", "mid", "high") and sorted(table.label.tolist()) == [0, 1, 2]


def test_pairwise_votes_are_not_recoded(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    path.write_text("item,model_a,model_b,judge,winner\nq1,A,B,r1,tie\n")
    with pytest.raises(InputError, match="merge_levels cannot be set for pairwise votes"):
        load(path, InputOptions(merge_levels="a=x b=y"))


def test_the_dask_executor_refuses_a_recoding(tmp_path: Path) -> None:
    """Issue 31: the partitioned reader reads labels as stored, so --merge-levels / --bins with --executor dask are
    refused (before any cluster is used) instead of silently ignored."""
    import typer

    from stableval.commands.common import read_partitioned

    for options in (InputOptions(merge_levels="1=a 2=b"), InputOptions(bins="1.5")):
        with pytest.raises(typer.BadParameter, match="recode"):
            read_partitioned(tmp_path / "r.parquet", options, client=None)
