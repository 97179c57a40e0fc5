"""``stableval ablate``: end to end, its errors and its tie rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app


@pytest.mark.slow
def test_ablate_command_end_to_end(tmp_path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(
        "trials = 3\nseed = 2\nsubsamples = 2\n[options]\nmax_iter = 60\n"
        "[base]\nqualities = [0.8, 0.5, 0.3]\nitems = 15\nraters = 6\nlabels_per_response = 3\n"
        "[[sweep]]\nname = 'hard'\nvalues = [0.0, 0.2]\n"
        "[[sweep]]\nname = 'gap'\nparameter = 'qualities'\nvalues = [[0.8, 0.5, 0.3], [0.6, 0.55, 0.5]]\n"
        "labels = ['wide', 'narrow']\n")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(app, ["ablate", "--config", str(config), "-o", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "## Sweep `gap`" in result.output and "computed 4 settings" in result.output
    for name in ("trials.csv", "summary.csv", "summary.md", "hard.csv", "hard.md", "hard.png", "gap.png"):
        assert (out / name).stat().st_size > 0, name
    trials = pd.read_csv(out / "trials.csv")
    assert set(trials["value"]) == {"0", "0.2", "wide", "narrow"} and len(trials) == 4 * 3 * 3
    summary = pd.read_csv(out / "gap.csv")
    assert set(summary["metric"]) == {"mse", "rank_accuracy", "kendall_tau", "stability"}
    assert summary.groupby(["index", "metric"])["best"].any().all()
    rerun = runner.invoke(app, ["ablate", "--config", str(config), "-o", str(out), "-j", "1", "--sweep", "gap",
                                "--no-plots"])
    assert rerun.exit_code == 0 and "computed 0 settings, skipped 2" in rerun.output


def test_ablate_command_errors(tmp_path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["ablate", "--config", str(tmp_path / "none.toml"), "-o", str(tmp_path / "o")])
    assert missing.exit_code == 1 and "config file not found" in missing.output
    sweep = runner.invoke(app, ["ablate", "-o", str(tmp_path / "o"), "--sweep", "nope", "-j", "1"])
    assert sweep.exit_code == 1 and "no such sweep" in sweep.output
    usage = runner.invoke(app, ["ablate", "-o", str(tmp_path / "o"), "--trials", "1"])
    assert usage.exit_code == 2


runner = CliRunner()


def test_ablate_honours_the_tie_rule(tmp_path: Path) -> None:
    """The simulator has no file order, so ``first`` breaks ties as ``random`` does with the same seed — and
    differs from ``split``. Issue 12: exact conventions."""
    runs = {}
    for rule in ("first", "random", "split"):
        config = tmp_path / f"{rule}.toml"
        config.write_text(
            f"trials = 4\nseed = 3\nsubsamples = 2\nmethods = ['mv']\n[params.mv]\nties = '{rule}'\n"
            "[base]\nqualities = [0.8, 0.5, 0.3]\nitems = 15\nraters = 6\nlabels_per_response = 2\nlevels = 2\n"
            "[[sweep]]\nname = 'hard'\nvalues = [0.0]\n")
        out = tmp_path / rule
        result = runner.invoke(app, ["ablate", "--config", str(config), "-o", str(out), "-j", "1", "--no-plots"])
        assert result.exit_code == 0, result.output
        runs[rule] = pd.read_csv(out / "trials.csv")
    np.testing.assert_allclose(runs["first"]["mse"], runs["random"]["mse"])
    assert not np.allclose(runs["first"]["mse"], runs["split"]["mse"])


def test_ablate_metric_coverage(tmp_path: Path) -> None:
    """Issue 30: ``ablate --metric coverage`` writes the coverage table; the ranking grid's flags are refused."""
    result = CliRunner().invoke(app, ["ablate", "--metric", "coverage", "-o", str(tmp_path), "-n", "2",
                                          "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "PPI++ coverage" in result.stdout and (tmp_path / "coverage.csv").exists()
    refused = CliRunner().invoke(app, ["ablate", "--metric", "coverage", "-o", str(tmp_path), "-s", "gap"])
    assert refused.exit_code == 2


@pytest.mark.parametrize("target", ["out.txt", "/dev/null"])
def test_ablate_output_onto_a_file_is_refused_before_the_work(tmp_path: Path, target: str) -> None:
    """Issue 26 (E4): ``-o`` naming a file is a usage error naming --output, not NotADirectoryError after the run."""
    from command_line import clean_failure

    path = tmp_path / target if target == "out.txt" else Path(target)
    if target == "out.txt":
        path.write_text("")
    config = Path(__file__).parents[2] / "examples" / "ablation" / "quick.toml"
    output = clean_failure(CliRunner().invoke(app, ["ablate", "-c", str(config), "-o", str(path)]), 2)
    assert "--output" in output and "is a file, not a folder" in output


def test_ablate_trials_flag_has_the_configs_bound(tmp_path: Path) -> None:
    """Issue 26 (E6): ``--trials`` overrides the config within the same bound."""
    from command_line import clean_failure

    output = clean_failure(CliRunner().invoke(app, ["ablate", "--trials", "1000000000", "-o", str(tmp_path / "o")]), 2)
    assert "--trials" in output and "100,000" in output


def test_ablate_metric_ranking_recovery(tmp_path: Path) -> None:
    """Issue 29: ``ablate --metric ranking-recovery`` writes the recovery table (every ranking method at every
    budget); the ranking grid's flags are refused."""
    result = CliRunner().invoke(app, ["ablate", "--metric", "ranking-recovery", "-o", str(tmp_path), "-n", "2",
                                      "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "| rankings per item | IRN τ |" in result.stdout and "Rater-PL top-1" in result.stdout
    summary = pd.read_csv(tmp_path / "ranking_recovery.csv")
    assert len(summary) == 5 * 5 and set(summary["trials"]) == {2}
    refused = CliRunner().invoke(app, ["ablate", "--metric", "ranking-recovery", "-o", str(tmp_path), "-s", "gap"])
    assert refused.exit_code == 2 and "ranking-recovery" in refused.output


def test_ablate_metric_coverage_of_score_intervals(tmp_path: Path) -> None:
    """Issue 30: ``--sweep score`` writes only the table of ``score``'s intervals, one row per default method."""
    result = CliRunner().invoke(app, ["ablate", "--metric", "coverage", "--sweep", "score", "-o", str(tmp_path),
                                      "-n", "2", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "score-CI coverage" in result.stdout and "PPI++ coverage" not in result.stdout
    assert (tmp_path / "score_coverage.csv").exists() and not (tmp_path / "coverage.csv").exists()
