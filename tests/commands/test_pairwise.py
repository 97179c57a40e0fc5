"""``stableval pairwise``: the leaderboard, names from the data, and the checks on its flags and votes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data import example_path

from command_line import clean_failure

runner = CliRunner()


def test_markup_names_in_pairwise_table(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "votes.csv"
    pd.DataFrame({"item": ["q1", "q2", "q3"], "model_a": ["[/]", "[b]x1[/b]", "[/]"],
                  "model_b": ["[b]x1[/b]", "m2", "m2"], "judge": "r1", "winner": ["a", "b", "tie"]}
                 ).to_csv(path, index=False)
    result = runner.invoke(app, ["pairwise", str(path), "-B", "5", "--prior", "1"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "[/]" in result.output and "[b]x1[/b]" in result.output


def test_negative_seed_pairwise() -> None:
    """Issue 16: bad input."""
    output = clean_failure(runner.invoke(app, ["pairwise", str(example_path("mt_bench")), "--duplicates", "keep",
                                               "-B", "5", "--seed", "-1"]), 2)
    assert "--seed" in output


@pytest.mark.parametrize(("agents", "winner"), [(("b", "a"), "a"), (("x", "tie"), "tie"),
                                                (("model_b", "y"), "model_b")])
def test_agents_named_like_winner_values_are_refused(tmp_path: Path, agents: tuple[str, str], winner: str) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "votes.csv"
    pd.DataFrame({"item": ["q1", "q2"], "model_a": [agents[0], "m1"], "model_b": [agents[1], "m2"], "judge": "r1",
                  "winner": [winner, "a"]}).to_csv(path, index=False)
    output = clean_failure(runner.invoke(app, ["pairwise", str(path), "-B", "0"]), 1)
    assert f"winner '{winner}' is ambiguous" in output and "row 1 (line 2)" in output


@pytest.mark.parametrize("value", ["inf", "nan", "1e308"])
def test_pairwise_prior_must_be_finite(value: str) -> None:
    """Issue 16: bad input."""
    output = clean_failure(runner.invoke(app, ["pairwise", str(example_path("mt_bench")), "--duplicates", "keep",
                                               "-B", "0", "--prior", value]), 2)
    assert "--prior" in output and ("finite" in output or value == "nan")  # nan: typer's own range check


def test_pairwise_win_rate_headers_are_not_cut() -> None:
    """Issue 16: bad input."""
    result = runner.invoke(app, ["pairwise", str(example_path("mt_bench")), "--duplicates", "keep", "-B", "0"])
    assert result.exit_code == 0
    header = next(line for line in result.output.splitlines() if "gpt-4" in line and "claude-v1" in line)
    assert "vicuna-13b-v1.2" in header


def test_pairwise_command(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["pairwise", str(example_path()), "--duplicates", "keep", "-B", "50"])
    assert result.exit_code == 0, result.output
    assert "gpt-4" in result.output and "Position bias" in result.output and "Win rate" in result.output
    out = tmp_path / "bt.json"
    result = runner.invoke(app, ["pairwise", str(example_path()), "--duplicates", "keep", "-B", "20",
                                 "--ties", "davidson", "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["settings"]["ties"] == "davidson" and payload["tie_parameter"]["all"] > 0
    assert runner.invoke(app, ["pairwise", str(example_path()), "--ties", "coin"]).exit_code == 2
    assert runner.invoke(app, ["pairwise", str(example_path())]).exit_code == 1  # duplicate vote -> error


def test_pairwise_combine_ppi(tmp_path: Path) -> None:
    """Issue 30: prediction-powered Bradley–Terry from the command line, kinds from a rater_kind column; the
    minimum of comparisons both kinds voted on is stated."""
    import numpy as np

    rng = np.random.default_rng(0)
    strength = {"A": 1.0, "B": 0.0, "C": -1.0}
    rows = []
    for i in range(400):
        a, b = rng.choice(list(strength), 2, replace=False)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        rows.append((f"q{i}", a, b, "judge", "llm", "a" if rng.random() < p else "b"))
        if i < 100:
            rows.append((f"q{i}", a, b, "ann", "human", "a" if rng.random() < p else "b"))
    path = tmp_path / "votes.csv"
    pd.DataFrame(rows, columns=["item", "agent_a", "agent_b", "rater", "rater_kind", "winner"]).to_csv(path,
                                                                                                      index=False)
    result = runner.invoke(app, ["pairwise", str(path), "--combine", "ppi", "-B", "200", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [row["agent"] for row in payload["ppi_ratings"]] == ["A", "B", "C"]
    few = tmp_path / "few.csv"
    pd.read_csv(path).pipe(lambda f: f[(f["rater_kind"] == "llm") | (f["item"].str[1:].astype(int) < 5)]).to_csv(
        few, index=False)
    output = clean_failure(runner.invoke(app, ["pairwise", str(few), "--combine", "ppi"]), 1)
    assert "the minimum is 10" in output
    for extra in (["--ties", "davidson"], ["--prior", "1"]):
        assert "--combine ppi" in clean_failure(runner.invoke(app, ["pairwise", str(path), "--combine", "ppi",
                                                                    *extra]), 2)
