"""``stableval export`` / ``stableval portal export`` (:mod:`stableval.commands.export`): what it says on stderr.
The exports themselves are tested in tests/portal/admin/test_export.py."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.portal.store.db import Database


def test_the_written_path_is_shown_escaped(tmp_path: Path) -> None:
    """Issue 26 (E13): ``wrote 0 rows to a[bold]<BEL>.csv`` reached the terminal with the bell raw; the path is
    now shown as every other command shows it (control characters escaped, brackets as written)."""
    url = f"sqlite:///{tmp_path / 'p.db'}"
    Database(url).upgrade()
    out = tmp_path / "a[bold]\a.csv"
    result = CliRunner().invoke(cli_app, ["portal", "export", "--kind", "pairwise", "-o", str(out),
                                          "--database-url", url])
    assert result.exit_code == 0, result.output
    assert out.exists()
    assert "\a" not in result.stderr and f"wrote 0 rows to {tmp_path}/a[bold]\\x07.csv" in result.stderr
