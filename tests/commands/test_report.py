"""``stableval report`` and ``stableval plot``: the HTML report and figures from the command line, renamed pairwise
columns, tie rules and rater kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import stableval
from stableval.cli import app

from command_line import clean_failure, renamed_pairwise, ties_file

runner = CliRunner()


@pytest.mark.slow
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


def test_plot_needs_pairwise_votes_for_the_ratings_figure(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"item": ["q1", "q1"], "agent": ["A", "B"], "rater": ["r", "r"], "label": [1, 0]}).to_csv(path)
    result = runner.invoke(app, ["plot", "ratings", str(path), "-o", str(tmp_path / "x.png")])
    assert result.exit_code == 1 and "needs pairwise votes" in result.output


@pytest.mark.slow
def test_report_honours_the_tie_rule(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    path = ties_file(tmp_path)
    pages = {}
    for rule in ("first", "lowest"):
        out = tmp_path / f"{rule}.html"
        result = runner.invoke(app, ["report", str(path), "-m", "mv", "--ties", rule, "-B", "0", "--quick",
                                     "-o", str(out), "-j", "1"])
        assert result.exit_code == 0, result.output
        pages[rule] = out.read_text(encoding="utf-8")
    leaderboard = {rule: page.split('<section id="leaderboard">')[1].split("</section>")[0]
                   for rule, page in pages.items()}
    assert "<td>1.000</td>" in leaderboard["first"] and "<td>1.000</td>" not in leaderboard["lowest"]


@pytest.mark.slow
def test_cli_report_shows_the_kinds_side_by_side(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    ratings, agents = judge_files
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(ratings), "--rater-info", str(agents), "--quick", "-B", "0",
                                 "-m", "mv", "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert "People and LLM judges" in html and "rank change (people − judges)" in html
    assert "judge-gpt" in html
    ppi = html.split('<section id="ppi">')[1].split("</section>")[0]  # issue 30: the people/judge/PPI++ table
    assert "PPI++ [95% CI]" in ppi and "Width ratio" in ppi and "Angelopoulos" in ppi
    # the report's footnotes say what the bracketed intervals are, not where the CLI's JSON/CSV puts them
    assert "JSON/CSV" not in ppi and "The intervals in brackets are the 95% intervals" in ppi
    assert "Student-t intervals" in ppi and "no rank intervals" in ppi


EXAMPLE = stableval.example_path()


@pytest.mark.slow
def test_plot_command_writes_images(tmp_path: Path) -> None:
    runner = CliRunner()
    for kind, suffix in (("forest", ".png"), ("ratings", ".svg"), ("win-rate", ".png"), ("raters", ".png"),
                         ("confusion", ".svg"), ("win-probability", ".pdf")):
        out = tmp_path / f"fig{suffix}"
        result = runner.invoke(app, ["plot", kind, str(EXAMPLE), "--duplicates", "keep", "-B", "20", "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert out.stat().st_size > 1000
    assert runner.invoke(app, ["plot", "pie", str(EXAMPLE)]).exit_code == 2
    assert runner.invoke(app, ["plot", "forest", str(EXAMPLE), "-o", str(tmp_path / "x.gif")]).exit_code == 2


@pytest.mark.slow
def test_report_command(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(EXAMPLE), "--duplicates", "keep", "--quick", "-B", "20",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!DOCTYPE html>")
    bad = CliRunner().invoke(app, ["report", str(tmp_path / "missing.csv")])
    assert bad.exit_code == 1 and "missing.csv" in bad.output


# ====================================================================================== plot ddx-case
def ddx_selectors(tmp_path: Path) -> Path:
    """Case 0: all rankings agree on condition 0; case 1: two rankings disagree on the top; case 2: agreement."""
    path = tmp_path / "sel.json"
    path.write_text(json.dumps([[[[0]], [[0], [1]]], [[[1]], [[2], [1]], [[1, 2]]], [[[2]], [[2]]]]))
    (tmp_path / "dermatology_conditions.txt").write_text("a\nb\nc\n")
    return path


def test_plot_ddx_case_draws_a_case_and_prints_the_least_certain_ids(tmp_path: Path) -> None:
    """Issue 29: the ids printed are the cases' ids (0-based 'case' of the ddx tables), not row numbers."""
    sel = ddx_selectors(tmp_path)
    out = runner.invoke(app, ["plot", "ddx-case", str(sel), "--case", "1", "--ranking-method", "pl", "-o",
                              str(tmp_path / "case.png")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "case.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ids = runner.invoke(app, ["plot", "ddx-case", str(sel), "--least-certain", "1", "-B", "50"])
    assert ids.exit_code == 0 and ids.stdout.split() == ["1"]


def test_plot_ddx_case_takes_the_ranking_methods_parameters(tmp_path: Path) -> None:
    """Issue 29: ``--ranking-param`` reaches the ddx-case fit; one of another method is refused."""
    sel = ddx_selectors(tmp_path)
    out = runner.invoke(app, ["plot", "ddx-case", str(sel), "--case", "1", "--ranking-method", "pl",
                              "--ranking-param", "pl.prior_shape=1", "-o", str(tmp_path / "case.png")])
    assert out.exit_code == 0, out.output
    refused = clean_failure(runner.invoke(app, ["plot", "ddx-case", str(sel), "--case", "1", "--ranking-param",
                                                "pl.prior_shape=1", "-o", str(tmp_path / "x.png")]), 2)
    assert "not among the chosen ranking methods (irn)" in " ".join(refused.split())


def test_plot_ddx_case_refuses_an_unknown_case_or_no_choice(tmp_path: Path) -> None:
    sel = ddx_selectors(tmp_path)
    assert "no case '9'" in clean_failure(runner.invoke(app, ["plot", "ddx-case", str(sel), "--case", "9", "-o",
                                                              str(tmp_path / "x.png")]), 2)
    clean_failure(runner.invoke(app, ["plot", "ddx-case", str(sel)]), 2)
