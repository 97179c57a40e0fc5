"""The command layer: every command that reads ratings takes the same input flags from one declaration, every
command that writes a result takes --format/--output, and `report`/`plot` read what `score` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from stableval.cli import app
from stableval.commands.common import INPUT_FLAGS, INPUT_PROFILES

runner = CliRunner()
RATINGS_COMMANDS = (("score",), ("stability",), ("diagnose",), ("agreement",), ("report",), ("plot",))
RESULT_COMMANDS = (("score",), ("stability",), ("diagnose",), ("agreement",), ("reliability",), ("pairwise",),
                   ("rater-bootstrap",), ("medqa",), ("ddx",), ("nrp", "score"), ("nrp", "agree"),
                   ("nrp", "evaluate-rankers"))


def options_of(path: tuple[str, ...]) -> set[str]:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {opt for parameter in command.params for opt in [*parameter.opts, *parameter.secondary_opts]}


def flags(profile: str) -> set[str]:
    out: set[str] = set()
    for name in INPUT_PROFILES[profile]:
        out.update(INPUT_FLAGS[name][0].__metadata__[0].param_decls)
    return out


@pytest.mark.parametrize("path", RATINGS_COMMANDS, ids=" ".join)
def test_every_ratings_command_takes_the_shared_input_flags(path: tuple[str, ...]) -> None:
    assert flags("ratings") <= options_of(path)


@pytest.mark.parametrize("path", RESULT_COMMANDS, ids=" ".join)
def test_every_result_command_writes_table_json_or_csv(path: tuple[str, ...]) -> None:
    assert {"--format", "-f", "--output", "-o"} <= options_of(path)


def test_votes_and_judgments_profiles() -> None:
    assert flags("votes") <= options_of(("pairwise",))
    assert flags("judgments") <= options_of(("reliability",))


def renamed_pairwise(folder: Path) -> tuple[Path, list[str]]:
    """Pairwise votes whose columns no alias matches, and the flags that name them."""
    path = folder / "votes.csv"
    pd.DataFrame({"q": ["q1", "q1", "q2", "q2", "q3", "q3"], "left": ["A", "B", "A", "C", "B", "C"],
                  "right": ["B", "C", "C", "B", "A", "A"], "judge": ["r1", "r2", "r1", "r2", "r1", "r2"],
                  "pick": ["a", "a", "tie", "a", "b", "a"]}).to_csv(path, index=False)
    return path, ["--pairwise", "--item-col", "q", "--agent-a-col", "left", "--agent-b-col", "right",
                  "--rater-col", "judge", "--winner-col", "pick"]


def test_report_reads_a_renamed_pairwise_file_that_score_reads(tmp_path: Path) -> None:
    """Regression: `report` rebuilt the reader by hand and had no pairwise column flags, so this file could be
    scored but not reported."""
    path, columns = renamed_pairwise(tmp_path)
    scored = runner.invoke(app, ["score", str(path), *columns, "-B", "0"])
    assert scored.exit_code == 0, scored.output
    out = tmp_path / "report.html"
    reported = runner.invoke(app, ["report", str(path), *columns, "--quick", "-B", "10", "-o", str(out)])
    assert reported.exit_code == 0, reported.output
    html = out.read_text()
    assert '<section id="pairwise">' in html and "Bradley" in html
    plotted = runner.invoke(app, ["plot", "ratings", str(path), *columns, "-B", "10", "-o", str(tmp_path / "r.png")])
    assert plotted.exit_code == 0 and (tmp_path / "r.png").stat().st_size > 1000, plotted.output


def test_json_output_is_strict_json_with_command_and_version(tmp_path: Path) -> None:
    path, columns = renamed_pairwise(tmp_path)
    result = runner.invoke(app, ["score", str(path), *columns, "-B", "0", "-f", "json"])  # no CIs: NaN inside
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))
    assert payload["command"].startswith("stableval") and payload["version"]
    assert payload["scores"][0]["ci_low"] is None


def test_output_into_a_missing_folder_is_created(tmp_path: Path) -> None:
    path, columns = renamed_pairwise(tmp_path)
    out = tmp_path / "new" / "folder" / "scores.csv"
    result = runner.invoke(app, ["score", str(path), *columns, "-B", "0", "-f", "csv", "-o", str(out)])
    assert result.exit_code == 0 and out.read_text().startswith("method,agent,score"), result.output


def test_plot_needs_pairwise_votes_for_the_ratings_figure(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"item": ["q1", "q1"], "agent": ["A", "B"], "rater": ["r", "r"], "label": [1, 0]}).to_csv(path)
    result = runner.invoke(app, ["plot", "ratings", str(path), "-o", str(tmp_path / "x.png")])
    assert result.exit_code == 1 and "needs pairwise votes" in result.output
