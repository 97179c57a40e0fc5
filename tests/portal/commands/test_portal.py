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


def test_track_study_text_flags_and_change(tmp_path: Path) -> None:
    """Issue 31: ``portal track`` takes the study texts as files and ``--public`` (flags derived from the settings'
    declarations); ``--change`` changes only the flags given, among the changeable settings, of an existing
    track."""
    from sqlalchemy import select

    from stableval.portal.store.models import Track

    url = f"sqlite:///{tmp_path / 'p.db'}"
    (tmp_path / "overview.md").write_text("# Aims\n", encoding="utf-8")
    (tmp_path / "steps.md").write_text("1. Read.\n", encoding="utf-8")
    runner = CliRunner()

    def run(*args: str) -> object:
        return runner.invoke(cli_app, ["portal", "track", *args, "--database-url", url])

    created = run("main", "--overview", str(tmp_path / "overview.md"), "--public")
    assert created.exit_code == 0 and "created track main" in created.output  # type: ignore[attr-defined]
    changed = run("main", "--change", "--instructions", str(tmp_path / "steps.md"), "--title", "Main study")
    assert changed.exit_code == 0 and "changed track main" in changed.output  # type: ignore[attr-defined]
    private = run("main", "--change", "--no-public")
    assert private.exit_code == 0, private.output  # type: ignore[attr-defined]
    db = Database(url)
    with db.reading() as session:
        track = session.scalars(select(Track)).one()
        assert (track.overview, track.instructions, track.title, track.public) == ("# Aims", "1. Read.",
                                                                                   "Main study", False)
    db.dispose()
    fixed = run("main", "--change", "--k", "5")
    assert fixed.exit_code == 2 and "fixed once the track exists" in fixed.output  # type: ignore[attr-defined]
    nothing = run("main", "--change")
    assert nothing.exit_code == 2 and "nothing to change" in nothing.output  # type: ignore[attr-defined]
    missing = run("main", "--change", "--overview", str(tmp_path / "missing.md"))
    assert missing.exit_code == 1 and "cannot read the file" in missing.output  # type: ignore[attr-defined]
    unknown = run("nope", "--change", "--public")
    assert unknown.exit_code == 1 and "no such track" in unknown.output  # type: ignore[attr-defined]


def test_written_paths_are_shown_escaped(tmp_path: Path) -> None:
    """Issue 26 (E13): ``portal invites -o`` and ``portal proposals -o`` printed the path they wrote raw (a bell or
    an escape sequence in the file name reached the terminal); now control characters are escaped and brackets
    shown as written."""
    url = f"sqlite:///{tmp_path / 'p.db'}"
    Database(url).upgrade()
    people = tmp_path / "people.csv"
    people.write_text("name\nDr Plain\n")
    invites, proposals = tmp_path / "links[bold]\a.csv", tmp_path / "ideas[bold]\x1b.csv"
    runner = CliRunner()
    for args, path, escaped in (
            (["invites", "--base-url", "https://p.example", "--from", str(people)], invites, "links[bold]\\x07.csv"),
            (["proposals"], proposals, "ideas[bold]\\x1b.csv")):
        result = runner.invoke(cli_app, ["portal", *args, "-o", str(path), "--database-url", url])
        assert result.exit_code == 0, result.output
        assert path.exists() and "\a" not in result.stderr and "\x1b" not in result.stderr
        assert f"to {tmp_path}/{escaped}" in result.stderr, result.stderr
