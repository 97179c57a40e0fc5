"""``stableval plot ddx-case``: one case's rankings and plausibility; ``--least-certain`` prints case ids."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from stableval.cli import app

from command_line import clean_failure

runner = CliRunner()


def selectors(tmp_path: Path) -> Path:
    """Case 0: all rankings agree on condition 0; case 1: two rankings disagree on the top; case 2: agreement."""
    path = tmp_path / "sel.json"
    path.write_text(json.dumps([[[[0]], [[0], [1]]], [[[1]], [[2], [1]], [[1, 2]]], [[[2]], [[2]]]]))
    (tmp_path / "dermatology_conditions.txt").write_text("a\nb\nc\n")
    return path


def test_draws_a_case_and_prints_the_least_certain_ids(tmp_path: Path) -> None:
    """Issue 29: the ids printed are the cases' ids (0-based 'case' of the ddx tables), not row numbers."""
    sel = selectors(tmp_path)
    out = runner.invoke(app, ["plot", "ddx-case", str(sel), "--case", "1", "--ranking-method", "pl", "-o",
                              str(tmp_path / "case.png")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "case.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ids = runner.invoke(app, ["plot", "ddx-case", str(sel), "--least-certain", "1", "-B", "50"])
    assert ids.exit_code == 0 and ids.stdout.split() == ["1"]


def test_an_unknown_case_or_no_choice_is_a_usage_error(tmp_path: Path) -> None:
    sel = selectors(tmp_path)
    assert "no case '9'" in clean_failure(runner.invoke(app, ["plot", "ddx-case", str(sel), "--case", "9", "-o",
                                                              str(tmp_path / "x.png")]), 2)
    clean_failure(runner.invoke(app, ["plot", "ddx-case", str(sel)]), 2)
