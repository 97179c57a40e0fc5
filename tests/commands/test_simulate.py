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


def test_simulate_refuses_an_unwritable_output_before_simulating(tmp_path: Path) -> None:
    """Issue 26 (E3, E4): an over-long name or a path under a file is a usage error naming --output."""
    from command_line import clean_failure

    blocker = tmp_path / "plain.txt"
    blocker.write_text("")
    for target, says in ((tmp_path / ("x" * 300 + ".csv"), "at most 255"), (blocker / "sim.csv", "is a file, not")):
        output = clean_failure(CliRunner().invoke(app, ["simulate", "-o", str(target)]), 2)
        assert "--output" in output and says in output
