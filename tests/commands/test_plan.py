"""``stableval plan`` (issue 30): the table, JSON/CSV, the plot, the list of responses to rate, and the checks on
its flags."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from stableval.cli import app

from command_line import clean_failure

runner = CliRunner()


def _pilot(ratings: Path, folder: Path, items: int = 60) -> Path:
    frame = pd.read_csv(ratings)
    path = folder / "pilot.csv"
    frame[(frame["rater_kind"] == "llm") | (frame["item"].str[1:].astype(int) < items)].to_csv(path, index=False)
    return path


def test_plan_command(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    pilot = _pilot(judge_files[0], tmp_path)
    plot, items = tmp_path / "width.png", tmp_path / "items.csv"
    args = ["plan", str(pilot), "--target-width", "0.12", "-m", "mv"]
    result = runner.invoke(app, [*args, "--plot", str(plot), "--items-out", str(items)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Human budget plan" in result.stdout and "PPI++ random" in result.stdout
    assert "More people-rated responses" in result.stdout
    assert plot.stat().st_size > 1000
    listed = pd.read_csv(items)
    assert {"item", "agent", "p_random", "p_active", "draw_active"} <= set(listed.columns) and len(listed) == 960
    payload = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    rows = {row["agent"]: row for row in payload["plan"]}
    assert all(row["more_ppi"] <= row["more_people_only"] for row in rows.values())
    assert payload["curve"][0]["extra"] == 0
    csv = pd.read_csv(io.StringIO(runner.invoke(app, [*args, "-f", "csv"]).stdout))
    assert list(csv["agent"]) == list(rows)
    ranking = json.loads(runner.invoke(app, ["plan", str(pilot), "--target-correct", "0.7", "-m", "mv", "-f",
                                             "json"]).stdout)
    assert ranking["settings"]["target_correct"] == 0.7


def test_plan_usage_and_input_errors(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    pilot = _pilot(judge_files[0], tmp_path)
    assert "one target" in clean_failure(runner.invoke(app, ["plan", str(pilot)]), 2)
    assert "--target-correct" in clean_failure(runner.invoke(app, ["plan", str(pilot), "--target-correct", "1"]), 2)
    assert "--target-width" in clean_failure(runner.invoke(app, ["plan", str(pilot), "--target-width", "0"]), 2)
    few = _pilot(judge_files[0], tmp_path, items=5)
    assert "the minimum is 10 per agent" in clean_failure(
        runner.invoke(app, ["plan", str(few), "--target-width", "0.1"]), 1)
    assert "plot" in clean_failure(runner.invoke(app, ["plan", str(pilot), "--target-width", "0.1", "--plot",
                                                       str(tmp_path / "x.gif")]), 1)
