"""JSON Lines files: records, blank lines, errors naming the file and line, text that is not UTF-8, and the scale
record that keeps levels and credit."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data.files import iter_jsonl
from stableval.errors import InputError

from command_line import clean_failure

runner = CliRunner()


def test_jsonl_keeps_its_levels_and_credit(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    from stableval.data import read_any
    from stableval.data.files import SCALE_KEY, read_table_file, write_frame

    frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "agent": "A", "rater": ["r1", "r2", "r1"],
                          "label": ["ok", "good", "ok"]})
    scale = {"column": "label", "levels": ["bad", "ok", "good"], "credit": [0, 0.25, 1]}
    path = write_frame(frame, tmp_path / "t.jsonl", scale=scale)
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first) == {SCALE_KEY: scale}  # the scale record comes first, then one object per judgment
    table = read_any(path)
    assert table.levels == ("bad", "ok", "good") and table.credit.tolist() == [0.0, 0.25, 1.0]
    assert table.label.tolist() == [1, 2, 1] and table.n_judgments == 3
    assert read_any(path, levels="ok,good").levels == ("ok", "good")  # explicit levels still win
    assert len(read_table_file(path)) == 3


def test_jsonl_scale_record_keeps_line_numbers(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    from stableval.data.files import write_frame

    frame = pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "rater": ["r1", "r1"], "label": ["ok", "okay"]})
    path = write_frame(frame, tmp_path / "t.jsonl",
                       scale={"column": "label", "levels": ["bad", "ok"], "credit": [0, 1]})
    result = runner.invoke(app, ["score", str(path)])
    output = clean_failure(result, 1)
    assert "line 3" in output and "okay" in output  # data row 2 is line 3: line 1 holds the scale


# ====================================================================================== JSON Lines records
def test_iter_jsonl_skips_blank_lines_and_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n  \n[1, 2]\n{"b": {"c": null}}\n')
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (4, [1, 2]), (5, {"b": {"c": None}})]


def test_iter_jsonl_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n{broken\n')
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(path, allowed="one JSON object per line (a review)"))
    error = caught.value
    assert (error.file, error.row) == (str(path), 3)
    assert str(error) == (f"{path}, row 3: line 3 is not valid JSON (Expecting property name enclosed in double "
                          "quotes); allowed: one JSON object per line (a review)")


def test_iter_jsonl_rejects_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(InputError, match="file is not UTF-8 text"):
        list(iter_jsonl(path))
