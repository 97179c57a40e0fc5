"""``stableval simulate``: a table every command can read, and bad settings refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from stableval.cli import app


# ---------------------------------------------------------------------- CLI
def test_simulate_command_writes_a_table_every_command_can_read(tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "study.csv"
    result = runner.invoke(app, ["simulate", "-o", str(out), "--items", "20", "--raters", "8", "-L", "3",
                                 "--levels", "bad,ok,good", "--qualities", "0.9,0.5,0.2", "--seed", "3"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["item", "agent", "rater", "label"] and len(frame) == 180
    agents = pd.read_csv(tmp_path / "study.agents.csv")
    np.testing.assert_allclose(agents["true_score"], [0.9, 0.5, 0.2])
    assert len(pd.read_csv(tmp_path / "study.responses.csv")) == 60
    assert len(pd.read_csv(tmp_path / "study.raters.csv")) == 8
    scored = runner.invoke(app, ["score", str(out), "--levels", "bad,ok,good", "-B", "0", "-f", "csv"])
    assert scored.exit_code == 0, scored.output
    # same seed, same file
    again = tmp_path / "again.csv"
    runner.invoke(app, ["simulate", "-o", str(again), "--items", "20", "--raters", "8", "-L", "3",
                        "--levels", "bad,ok,good", "--qualities", "0.9,0.5,0.2", "--seed", "3"])
    assert again.read_text() == out.read_text()


def test_simulate_command_rejects_bad_settings(tmp_path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.csv"), "--strict", "0.6", "--lenient", "0.6"])
    assert result.exit_code == 1
    assert "add up to more than 1" in result.output
    result = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.csv"), "--raters", "4", "-L", "6"])
    assert result.exit_code == 1 and "option '--labels-per-response'" in result.output
    result = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.xlsx")])
    assert result.exit_code == 2


def test_simulate_with_llm_judges(tmp_path: Path) -> None:
    """Issue 30: --judges adds LLM judges on every response and --human-share keeps people on a share; the table
    then scores with --combine ppi; --human-share alone is refused."""
    out = tmp_path / "study.csv"
    args = ["simulate", "-o", str(out), "--qualities", "0.7,0.5", "--agents", "gpt-a,llama-b", "--items", "200",
            "--judges", "2", "--judge-leniency", "0.2", "--judge-family", "gpt-a", "--judge-self-preference", "0.3",
            "--judge-length-bias", "0.1", "--judge-noise", "0.05", "--judge-accuracy", "0.8,0.9",
            "--human-share", "0.3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert set(frame["rater_kind"]) == {"human", "llm"} and (frame["rater_kind"] == "llm").sum() == 2 * 400
    assert frame.loc[frame["rater_kind"] == "human", ["item", "agent"]].drop_duplicates().shape[0] < 200
    scored = CliRunner().invoke(app, ["score", str(out), "--combine", "ppi", "-m", "mv", "-B", "0", "-f", "json"])
    assert scored.exit_code == 0, scored.output
    refused = CliRunner().invoke(app, ["simulate", "-o", str(out), "--human-share", "0.5"])
    assert refused.exit_code == 2


def test_another_runs_truth_is_not_overwritten_without_force(tmp_path: Path) -> None:
    """Issue 27: ``simulate -o X.parquet`` overwrote the truth of an earlier ``-o X.csv`` (X.agents.csv, ...),
    leaving X.csv beside another run's truth."""
    runner = CliRunner()
    small = ["--items", "10", "--raters", "6", "-L", "3"]
    first = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.csv"), *small, "--seed", "1"])
    assert first.exit_code == 0, first.output
    truth = (tmp_path / "x.agents.csv").read_text()
    again = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.csv"), *small, "--seed", "2"])  # its own run
    assert again.exit_code == 0, again.output
    truth = (tmp_path / "x.agents.csv").read_text()
    refused = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.parquet"), *small, "--seed", "3"])
    assert refused.exit_code == 2 and "--force" in refused.output and "x.csv" in refused.output
    assert (tmp_path / "x.agents.csv").read_text() == truth and not (tmp_path / "x.parquet").exists()
    forced = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.parquet"), *small, "--seed", "3", "--force"])
    assert forced.exit_code == 0 and (tmp_path / "x.parquet").exists()


def test_simulate_refuses_an_unwritable_output_before_simulating(tmp_path: Path) -> None:
    """Issue 26 (E3, E4): an over-long name or a path under a file is a usage error naming --output."""
    from command_line import clean_failure

    blocker = tmp_path / "plain.txt"
    blocker.write_text("")
    for target, says in ((tmp_path / ("x" * 300 + ".csv"), "at most 255"), (blocker / "sim.csv", "is a file, not")):
        output = clean_failure(CliRunner().invoke(app, ["simulate", "-o", str(target)]), 2)
        assert "--output" in output and says in output
