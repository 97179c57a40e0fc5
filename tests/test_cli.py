"""The ``stableval`` command as a whole: the console script and version, and property-based fuzzing of every
command: bad input never gives a traceback or a wrong answer.

Invariant for every run: exit 0 with finite, in-range JSON (scores and credits in [0, 1]; no row dropped without
a note), or exit 1 (bad input) with an ``error:`` line, or exit 2 (usage error) naming the option — never a
traceback. Inputs: arbitrary bytes, mutated copies of a valid file in each of the four formats, adversarial names
(markup, control codes, HTML, right-to-left text, 100,000 characters) and extreme numeric flags. Bounded: a few
dozen examples per property."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data.files import read_table_file, write_frame
from stableval.errors import InputError


@pytest.mark.slow
def test_console_script_and_version() -> None:
    done = subprocess.run([sys.executable, "-m", "stableval", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("stableval ")
    done = subprocess.run([sys.executable, "-m", "stableval", "score", "/no/such/file.csv"], capture_output=True,
                          text=True)
    assert done.returncode == 1 and "/no/such/file.csv" in done.stderr


runner = CliRunner()


FORMATS = (".csv", ".tsv", ".jsonl", ".parquet")


FUZZ = settings(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


#: Reading commands and the flags that keep one run fast; methods come from the registry's defaults.
COMMANDS: dict[str, list[str]] = {
    "score": ["-B", "3"],
    "diagnose": [],
    "agreement": ["-B", "3"],
    "stability": ["-R", "2", "-s", "1"],
}


ADVERSARIAL_NAMES = [
    "[/]", "[b]x1[/b]", "[link=https://evil.example]x[/link]", "[bold red]", ":smile:", "\\", "x\\",
    "\x1b[31mRED\x1b[0m", "\x1b]0;pwned\x07", "a\x00b", "\x9b2J", "<script>alert(1)</script>", "&amp;<b>",
    "\u202eevil\u202c", "\u05e9\u05dc\u05d5\u05dd", "e\u0301", "😀", " lead", "tab\there",
    "new\nline", "x" * 100_000, "0", "-1", "nan", "inf", "tie", "a", "b",
]


def base_frame(rows: int = 12) -> pd.DataFrame:
    """A valid table: 3 items × 2 agents × 2 raters (the first ``rows`` rows), labels bad/good."""
    records = [(f"q{i}", agent, rater) for i in range(3) for agent in ("m1", "m2") for rater in ("r1", "r2")]
    frame = pd.DataFrame(records[:rows], columns=["item", "agent", "rater"])
    frame["label"] = ["good", "bad", "good", "good", "bad", "bad", "good", "bad", "bad", "good", "good", "bad"][:rows]
    return frame


def check_run(result: Any, *, rows: int | None = None) -> dict[str, Any] | None:
    """The invariant; returns the JSON payload of a successful run with ``-f json``."""
    exception = result.exception
    assert exception is None or isinstance(exception, SystemExit), (
        f"traceback: {exception!r}\n{result.output[-2000:]}")
    output = result.output
    assert "Traceback" not in output
    if result.exit_code == 1:
        assert "error:" in output, output[-2000:]
        return None
    if result.exit_code == 2:
        assert "Invalid value" in output or "Error" in output or "error" in output, output[-2000:]
        return None
    assert result.exit_code == 0, (result.exit_code, output[-2000:])
    assert "\x1b" not in result.stdout
    try:
        payload = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    except json.JSONDecodeError:
        return None  # a table (no -f json)
    check_finite(payload)
    dataset = payload.get("dataset", {})
    if rows is not None and isinstance(dataset, dict) and "judgments" in dataset:
        if dataset["judgments"] < rows:
            assert dataset.get("notes"), f"{rows - dataset['judgments']} row(s) dropped without a note"
    for row in payload.get("scores", []) if isinstance(payload.get("scores"), list) else []:
        for key in ("score", "ci_low", "ci_high"):
            if row.get(key) is not None:
                assert -1e-9 <= row[key] <= 1 + 1e-9, row
    return payload


def check_finite(value: Any) -> None:
    if isinstance(value, float):
        assert math.isfinite(value)
    elif isinstance(value, dict):
        for item in value.values():
            check_finite(item)
    elif isinstance(value, list):
        for item in value:
            check_finite(item)


# ====================================================================================== arbitrary bytes
@FUZZ
@given(data=st.binary(max_size=400), suffix=st.sampled_from(FORMATS))
def test_arbitrary_bytes_never_give_a_traceback(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"noise{suffix}"
    path.write_bytes(data)
    try:
        read_table_file(path)
    except InputError:
        pass
    check_run(runner.invoke(app, ["score", str(path), "-B", "0", "-f", "json"]))


# ====================================================================================== mutated real files
@FUZZ
@given(suffix=st.sampled_from(FORMATS), position=st.floats(0, 1), width=st.integers(1, 6),
       replacement=st.binary(min_size=0, max_size=6), command=st.sampled_from(sorted(COMMANDS)))
def test_mutated_files_never_give_a_traceback(tmp_path: Path, suffix: str, position: float, width: int,
                                               replacement: bytes, command: str) -> None:
    path = write_frame(base_frame(), tmp_path / f"ratings{suffix}")
    data = path.read_bytes()
    start = int(position * len(data))
    path.write_bytes(data[:start] + replacement + data[start + width:])
    check_run(runner.invoke(app, [command, str(path), "--levels", "bad,good", *COMMANDS[command], "-f", "json"]))


@pytest.mark.slow
@FUZZ
@given(suffix=st.sampled_from(FORMATS), row=st.integers(0, 11), column=st.sampled_from(["item", "agent", "rater",
       "label"]), value=st.one_of(st.sampled_from(ADVERSARIAL_NAMES), st.text(max_size=30)),
       command=st.sampled_from(sorted(COMMANDS)))
def test_adversarial_cells(tmp_path: Path, suffix: str, row: int, column: str, value: str, command: str) -> None:
    frame = base_frame()
    frame.loc[row, column] = value
    try:
        path = write_frame(frame, tmp_path / f"ratings{suffix}")
    except (UnicodeEncodeError, ValueError):  # e.g. a lone surrogate cannot be written at all
        return
    payload = check_run(runner.invoke(app, [command, str(path), "--levels", "bad,good", *COMMANDS[command],
                                            "-f", "json"]), rows=len(frame))
    if payload is not None and column == "agent" and command == "score" and value.strip() and "\n" not in value:
        assert value.strip() in {row["agent"] for row in payload["scores"]}  # shown as written, never renamed


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ADVERSARIAL_NAMES if n.strip() and "\x00" not in n and len(n) < 1000])
def test_adversarial_names_in_tables(tmp_path: Path, name: str) -> None:
    frame = base_frame()
    frame.loc[frame["agent"] == "m1", "agent"] = name
    frame.loc[frame["rater"] == "r1", "rater"] = name + "-rater"
    path = write_frame(frame, tmp_path / "ratings.csv")
    for command in ("score", "diagnose", "agreement"):  # stability's table is the score table's names again
        result = runner.invoke(app, [command, str(path), "--levels", "bad,good", *COMMANDS[command]])
        check_run(result)
        if result.exit_code == 0:
            assert "\x1b" not in result.output and "\x07" not in result.output


# ====================================================================================== extreme numeric flags
EXTREMES = ["nan", "inf", "-inf", "1e308", "-1e308", "1e-308", "-1", "0", "0.5", "1", "2", "99999999999999999999"]


NUMERIC_FLAGS = {
    "score": ["--alpha-pi", "--alpha-mu", "--epsilon", "--tol", "--max-iter", "-B", "--seed", "--confidence"],
    "diagnose": ["--alpha-pi", "--alpha-mu", "--max-iter"],
    "agreement": ["-B", "--seed", "--confidence", "--min-shared"],
    "stability": ["-R", "--seed", "--confidence", "-s"],
    "pairwise": ["--prior", "-B", "--seed", "--confidence"],
}


@FUZZ
@given(command=st.sampled_from(sorted(NUMERIC_FLAGS)), data=st.data(), value=st.sampled_from(EXTREMES))
def test_extreme_numeric_flags(tmp_path: Path, command: str, data: st.DataObject, value: str) -> None:
    flag = data.draw(st.sampled_from(NUMERIC_FLAGS[command]))
    if command == "pairwise":
        path = tmp_path / "votes.csv"
        pd.DataFrame({"item": ["q1", "q2", "q3", "q4"], "model_a": ["A", "B", "A", "C"],
                      "model_b": ["B", "C", "C", "B"], "judge": "r1", "winner": ["a", "b", "tie", "a"]}
                     ).to_csv(path, index=False)
        argv = ["pairwise", str(path), "-B", "3", "--prior", "0.5"]
    else:
        path = write_frame(base_frame(), tmp_path / "ratings.csv")
        argv = [command, str(path), "--levels", "bad,good", *COMMANDS[command]]
    if flag in ("-B", "-R") and value in ("1e308", "99999999999999999999", "inf"):
        return  # a valid but enormous count would only run long
    check_run(runner.invoke(app, [*argv, flag, value, "-f", "json"]))


def test_fuzz_invariant_catches_a_traceback() -> None:
    """The checker itself fails on a traceback (so the properties above can fail)."""
    class Crashed:
        exception = ValueError("boom")
        output = ""
        stdout = ""
        exit_code = 1

    with pytest.raises(AssertionError, match="traceback"):
        check_run(Crashed())
