"""``stableval portal`` (:mod:`stableval.commands.portal`): the admin's command line (each regression of the
security reviews says so in its docstring)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.portal.store.db import Database


def test_invite_csv_defuses_formulas(tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F23): ``stableval portal invites`` wrote the invitees' notes as
    they were, so a name such as ``=HYPERLINK("…")`` ran as a formula when the file was opened in a spreadsheet;
    every other CSV the portal writes prefixes such cells with ``'``. Now this one does too, in the file and on
    standard output."""
    url = f"sqlite:///{tmp_path / 'p.db'}"
    Database(url).upgrade()
    people = tmp_path / "people.csv"
    pd.DataFrame({"name": ['=HYPERLINK("https://evil.example","x")', "@SUM(1)", "Dr Plain"]}).to_csv(people,
                                                                                                  index=False)
    out = tmp_path / "links.csv"
    written = CliRunner().invoke(cli_app, ["portal", "invites", "--base-url", "https://p.example", "--from",
                                           str(people), "-o", str(out), "--database-url", url])
    assert written.exit_code == 0, written.output
    notes = pd.read_csv(out)["note"].tolist()
    assert notes == ['\'=HYPERLINK("https://evil.example","x")', "'@SUM(1)", "Dr Plain"]
    shown = CliRunner().invoke(cli_app, ["portal", "invites", "--base-url", "https://p.example", "--from",
                                         str(people), "--database-url", url])
    assert pd.read_csv(io.StringIO(shown.stdout))["note"].tolist() == notes
