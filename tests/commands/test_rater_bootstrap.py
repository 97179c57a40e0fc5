"""``stableval rater-bootstrap`` on the command line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from stableval.cli import app

runner = CliRunner()


def test_cli_generic(tmp_path) -> None:
    counts = tmp_path / "counts.csv"
    counts.write_text("item,no,yes\ni1,3,0\ni2,1,2\ni3,0,1\n")
    preds = tmp_path / "preds.csv"
    preds.write_text("item,prediction\ni1,yes\ni2,yes\ni3,yes\n")
    result = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", f"yes={preds}", "-B", "3000",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["models"][0]["accuracy"] == pytest.approx((20 / 27 + 1) / 3, abs=0.01)
    table = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", f"yes={preds}", "-B", "50"])
    assert table.exit_code == 0 and "yes" in table.stdout and "Frozen key" in table.stdout
    preds.write_text("item,prediction\ni1,maybe\ni2,yes\ni3,yes\n")
    bad = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", f"yes={preds}"])
    assert bad.exit_code == 1 and "maybe" in bad.output
    usage = runner.invoke(app, ["rater-bootstrap", str(counts), "-p", "=x"])
    assert usage.exit_code == 2


def test_cli_ties_are_the_declared_tie_rules() -> None:
    """Issue 25: ``--ties`` is derived from the rater bootstrap's declaration (its choices, their words and the
    default), not written a second time in the command."""
    from stableval.aggregate.ties import TIE_RULES
    from stableval.commands.rater_bootstrap import GenericTies
    from stableval.evaluate import rater_bootstrap as rb

    assert [str(rule) for rule in GenericTies] == list(rb.TIES)
    help_text = runner.invoke(app, ["rater-bootstrap", "--help"], env={"COLUMNS": "400"}).stdout
    for rule in rb.TIES:
        assert f"{rule} ({TIE_RULES[rule]})" in " ".join(help_text.split())
