"""``stableval stability``: table, JSON, CSV and plot output, trivial results flagged, rater kinds and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stableval.cli import app

from command_line import LEVEL_FLAGS, clean_failure, ties_file, two_item_ratings
from synthetic import LOW_MID_HIGH, stability_hand_table

runner = CliRunner()


def test_stability_plot_onto_a_folder_is_refused(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv")
    folder = tmp_path / "fig.png"
    folder.mkdir()
    output = clean_failure(runner.invoke(app, ["stability", str(path), *LEVEL_FLAGS, "--plot", str(folder)]), 2)
    assert "--plot" in output


def test_stability_flags_trivial_results(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv")  # 2 agents, 2 raters
    result = runner.invoke(app, ["stability", str(path), *LEVEL_FLAGS, "-R", "3", "-s", "1,2", "-m", "mv", "-f",
                                 "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    trivial = payload["settings"]["trivial"]
    assert trivial[0].startswith("only 2 agents: tau-b can only be +1") and "takes all 2 raters" in trivial[1]
    assert [row["trivial"] for row in payload["summary"]] == [True, True]
    assert [row["fraction"] for row in payload["summary"]] == [0.5, 1.0]
    table = runner.invoke(app, ["stability", str(path), *LEVEL_FLAGS, "-R", "3", "-s", "1", "-m", "mv"])
    assert "trivial: only 2 agents" in table.output and "1 rater)" not in table.output.replace("(1 rater)", "")


def test_stability_honours_the_tie_rule(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    path = ties_file(tmp_path)
    full = {}
    for rule in ("first", "lowest"):
        result = runner.invoke(app, ["stability", str(path), "-m", "mv", "--ties", rule, "--sizes", "2",
                                     "--repetitions", "3", "-f", "json"])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        full[rule] = {row["agent"]: row["score"] for row in payload["full_scores"]}
    assert full["first"] == {"A": 1.0, "B": 0.0} and full["lowest"] == {"A": 0.0, "B": 0.0}


def test_cli_stability_by_rater_kind(judge_files: tuple[Path, Path]) -> None:
    ratings, _ = judge_files
    result = runner.invoke(app, ["stability", str(ratings), "--raters", "human", "-m", "mv", "-s", "4", "-R", "5",
                                 "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["dataset"]["raters"] == 8  # the 2 LLM judges are left out
    everyone = json.loads(runner.invoke(app, ["stability", str(ratings), "-m", "mv", "-s", "4", "-R", "5",
                                              "-f", "json"]).stdout)
    assert everyone["dataset"]["raters"] == 10


# ---------------------------------------------------------------------------------------------- CLI
def write_hand_csv(path: Path) -> Path:
    frame = stability_hand_table().to_frame()
    frame.to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_cli_table_json_csv_and_plot(tmp_path: Path) -> None:
    path = write_hand_csv(tmp_path / "ratings.csv")
    args = ["stability", str(path), "--levels", ",".join(LOW_MID_HIGH), "-m", "mv,ds", "--sizes", "1,2", "-R", "6"]
    result = runner.invoke(app, [*args, "--plot", str(tmp_path / "tau.png")])
    assert result.exit_code == 0, result.output
    for text in ("Ranking stability", "tau-b [95% CI]", "mean rank SD", "P(top agent changes)", "1 rater", "MV",
                 "DS"):
        assert text in result.output
    assert (tmp_path / "tau.png").stat().st_size > 1000
    out = tmp_path / "stability.json"
    result = runner.invoke(app, [*args, "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["settings"]["sizes"] == [{"size": "1", "raters": 1}, {"size": "2", "raters": 2}]
    assert len(payload["repetitions"]) == 2 * 2 * 6 and "command" in payload
    result = runner.invoke(app, [*args, "-f", "csv"])
    assert result.exit_code == 0
    lines = result.stdout.strip().splitlines()  # progress lines go to stderr
    assert lines[0].startswith("method,size,raters,fraction,repetitions,tau_mean,tau_ci_low,tau_ci_high")
    assert len(lines) == 5


def test_cli_errors(tmp_path: Path) -> None:
    path = write_hand_csv(tmp_path / "ratings.csv")
    result = runner.invoke(app, ["stability", str(path), "--levels", ",".join(LOW_MID_HIGH), "--sizes", "0.5,x"])
    assert result.exit_code == 2 and "--sizes" in result.output
    result = runner.invoke(app, ["stability", str(path), "--levels", ",".join(LOW_MID_HIGH), "--sizes", "7"])
    assert result.exit_code == 2 and "more than the 3 raters" in result.output
    result = runner.invoke(app, ["stability", str(path), "--levels", "low,high"])
    assert result.exit_code == 1 and "ratings.csv" in result.output and "'mid'" in result.output
    result = runner.invoke(app, ["stability", str(path), "--levels", ",".join(LOW_MID_HIGH), "--plot", "x.gif"])
    assert result.exit_code == 2


def test_a_seed_above_the_range_names_seed(tmp_path: Path) -> None:
    """Issue 26 (E5): the usage error names --seed and its bound, not "Seed must be between 0 and 2**32 - 1"."""
    path = two_item_ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, ["stability", str(path), *LEVEL_FLAGS, "-m", "mace", "-R", "2",
                                               "--seed", "4294967296"]), 2)
    assert "--seed" in output and "4294967295" in output


def test_stability_notes_rater_info_names_that_rate_nothing(tmp_path: Path) -> None:
    """Issue 26 (E8): as diagnose notes them."""
    path = two_item_ratings(tmp_path / "r.csv")
    info = tmp_path / "raters.csv"
    info.write_text("name,kind,family\nr1,human,\nr2,human,\nghost,human,\n")
    result = runner.invoke(app, ["stability", str(path), *LEVEL_FLAGS, "-R", "2", "--rater-info", str(info),
                                 "--raters", "human", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert any("ghost" in note for note in json.loads(result.stdout)["dataset"]["notes"])
