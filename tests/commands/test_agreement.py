"""``stableval agreement``: table, JSON and CSV output, bad input and usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app

from command_line import LEVEL_FLAGS, clean_failure
from synthetic import varying_frame

runner = CliRunner()


# ------------------------------------------------------------------ CLI
def write(path: Path) -> Path:
    varying_frame().to_csv(path, index=False)
    return path


def test_cli_table(tmp_path: Path) -> None:
    path = write(tmp_path / "ratings.csv")
    result = runner.invoke(app, ["agreement", str(path), "--quick", "--min-shared", "5", "--pairs", "3"])
    assert result.exit_code == 0, result.output
    for text in ("Krippendorff's alpha (ordinal)", "Fleiss' kappa", "Gwet's AC1", "Cohen's kappa per rater pair",
                 "B=200", "judgments per response vary", "95% CI"):
        assert text in result.output


def test_cli_json_and_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "ratings.csv")
    out = tmp_path / "agreement.json"
    result = runner.invoke(app, ["agreement", str(path), "-B", "50", "--min-shared", "5", "-f", "json", "-o",
                                 str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert {row["statistic"] for row in payload["statistics"]} >= {"gwet_ac1", "fleiss_kappa"}
    assert len(payload["pairs"]) == 28 and payload["settings"]["bootstrap"] == 50
    result = runner.invoke(app, ["agreement", str(path), "-B", "0", "-f", "csv"])
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == "statistic,value,ci_low,ci_high,units,note"


def test_cli_bad_input_and_usage(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,good\nq1,A,r2,meh\n")
    result = runner.invoke(app, ["agreement", str(path), "--levels", "bad,good"])
    assert result.exit_code == 1
    assert "row 2" in result.output and "'meh'" in result.output and "bad, good" in result.output
    result = runner.invoke(app, ["agreement", str(path), "--cohen-weights", "cubic"])
    assert result.exit_code == 2


def test_csv_bad_byte_names_the_line(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "bad.csv"
    path.write_bytes(b"item,agent,rater,label\nq1,m1,r1,good\nq1,m1,caf\xe9,bad\n")
    assert "line 3 is not UTF-8" in clean_failure(runner.invoke(app, ["agreement", str(path), *LEVEL_FLAGS]), 1)


@pytest.mark.parametrize("column", ["item", "rater", "label"])
def test_parquet_binary_column_not_utf8_names_the_row(tmp_path: Path, column: str) -> None:
    """Issue 16: bad input."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    values = {"item": ["q1"] * 4, "agent": ["m1", "m1", "m2", "m2"], "rater": ["r1", "r2", "r1", "r2"],
              "label": ["good", "bad", "bad", "bad"]}
    data: dict[str, object] = dict(values)
    raw = [v.encode() for v in values[column]]
    raw[1] = raw[1] + b"\xff"
    data[column] = pa.array(raw, pa.binary())
    path = tmp_path / "binary.parquet"
    pq.write_table(pa.table(data), path)
    output = clean_failure(runner.invoke(app, ["agreement", str(path), *LEVEL_FLAGS, "-B", "5"]), 1)
    assert f"row 2, column '{column}'" in output and "not UTF-8" in output
    data[column] = pa.array([v.encode() for v in values[column]], pa.binary())  # valid UTF-8 binary is read
    pq.write_table(pa.table(data), path)
    assert runner.invoke(app, ["agreement", str(path), *LEVEL_FLAGS, "-B", "5"]).exit_code == 0


def test_intervals_do_not_change_when_item_ids_are_renamed(tmp_path: Path) -> None:
    """Issue 26 (E12): same data, same seed, only the item ids renamed: the same intervals (also per rater pair)."""
    from stableval.data import example_path

    votes = pd.read_csv(example_path("mt_bench"), dtype=str)
    renamed = votes.assign(**{votes.columns[0]: "x" + votes[votes.columns[0]].str[::-1]})
    results = []
    for name, frame in (("votes.csv", votes), ("renamed.csv", renamed)):
        frame.to_csv(tmp_path / name, index=False)
        result = CliRunner().invoke(app, ["agreement", str(tmp_path / name), "--duplicates", "keep", "-B", "100",
                                          "-f", "json"])
        assert result.exit_code == 0, result.output
        results.append(json.loads(result.stdout))
    for key in ("statistics", "pairs"):
        before, after = (pd.DataFrame(r[key]) for r in results)
        pd.testing.assert_frame_equal(before, after, rtol=1e-9)
