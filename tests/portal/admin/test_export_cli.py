"""``stableval export`` (top level) is the same command as ``stableval portal export``."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
from portal_helpers import complete_one, signed_in_rater
from typer.testing import CliRunner

from stableval.cli import app
from stableval.commands.export import export as portal_export
from stableval.portal.admin.export import export
from stableval.portal.web.app import create_app

runner = CliRunner()


def test_top_level_export_is_the_portal_export(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    portal = create_app(url, admin_token="admin-token-for-tests")
    client, db = signed_in_rater((portal, portal.state.portal.db), tmp_path)
    complete_one(client, a="5", b="2")
    import inspect

    from stableval.commands import load_command  # the commands are registered lazily, by name

    assert inspect.unwrap(load_command("export").callback) is portal_export  # reused, not copied
    nested_command = load_command("portal").commands["export"]  # type: ignore[attr-defined]
    assert inspect.unwrap(nested_command.callback) is portal_export

    top = runner.invoke(app, ["export", "main", "--criterion", "accuracy", "--database-url", url])
    nested = runner.invoke(app, ["portal", "export", "main", "--criterion", "accuracy", "--database-url", url])
    assert top.exit_code == 0, top.output
    assert top.stdout == nested.stdout
    frame = pd.read_csv(io.StringIO(top.stdout), dtype=str)
    expected = export(db, "annotations", track="main", criterion="accuracy").frame
    pd.testing.assert_frame_equal(frame, expected.astype(str))
    assert sorted(frame["label"]) == ["2", "5"]

    out = tmp_path / "votes.jsonl"
    written = runner.invoke(app, ["export", "main", "--kind", "pairwise", "-f", "jsonl", "-o", str(out),
                                  "--database-url", url])
    assert written.exit_code == 0, written.output
    assert "wrote 5 rows" in written.stderr
    assert len(pd.read_json(out, lines=True)) == 5
    db.dispose()


def test_top_level_export_rejects_unknown_track_and_parquet_to_stdout(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    assert runner.invoke(app, ["portal", "migrate", "--database-url", url]).exit_code == 0  # an empty portal
    bad = runner.invoke(app, ["export", "nope", "--database-url", url])
    assert bad.exit_code == 1 and "no such track" in bad.stderr and "nope" in bad.stderr
    parquet = runner.invoke(app, ["export", "--format", "parquet", "--database-url", url])
    assert parquet.exit_code == 2 and "Parquet needs --output" in parquet.stderr
    assert "without the web server" in " ".join(runner.invoke(app, ["export", "--help"]).stdout.split())
