"""``stableval serve`` (the evaluation portal web server) and ``stableval portal ...`` (its admin tasks).

The admin tasks work on the database directly, without the web server: migrate, create tracks, import
questions, create invites, export judgments as stableval annotation or pairwise tables.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from stableval.commands.common import OutputOpt, fail

DEFAULT_DB = "sqlite:///stableval-portal.db"

DatabaseOpt = Annotated[str, typer.Option(
    "--database-url", envvar="STABLEVAL_PORTAL_DATABASE_URL",
    help="SQLAlchemy URL: sqlite:///portal.db (default, one file) or "
         "postgresql+psycopg://user:password@host:5432/name.")]


class ExportKind(StrEnum):
    ANNOTATIONS = "annotations"
    PAIRWISE = "pairwise"


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"


portal_app = typer.Typer(help="Portal admin tasks without the web server: migrate, tracks, question import, "
                              "invites, export.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.add_typer(portal_app, name="portal")


def _database(url: str) -> object:
    try:
        from stableval.portal.db import Database
    except ModuleNotFoundError as error:
        raise fail(f"the portal needs the 'portal' extra ({error.name} is missing): "
                   "pip install 'stableval[portal]'") from None
    db = Database(url)
    try:
        db.upgrade()
    except Exception as error:  # connection refused, bad URL, permissions: say which
        raise fail(f"cannot open the database {url}: {error.__class__.__name__}: {error}") from None
    return db


def serve(
    database_url: DatabaseOpt = DEFAULT_DB,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (0.0.0.0 for all interfaces; put a "
                                                     "TLS proxy in front).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port.")] = 8000,
    admin_token: Annotated[str | None, typer.Option(
        "--admin-token", envvar="STABLEVAL_PORTAL_ADMIN_TOKEN",
        help="Admin credential (at least 12 characters); prefer the environment variable.")] = None,
    secure_cookies: Annotated[bool, typer.Option("--secure-cookies/--no-secure-cookies",
                                                 help="Mark cookies Secure (behind HTTPS).")] = False,
    invite_rate: Annotated[int, typer.Option("--invite-rate", min=1,
                                             help="Invite-link attempts allowed per client and minute.")] = 20,
) -> None:
    """Run the evaluation portal: experts compare and rate two models' answers per question."""
    if not admin_token or len(admin_token) < 12:
        raise typer.BadParameter("give an admin token of at least 12 characters (or set "
                                 "STABLEVAL_PORTAL_ADMIN_TOKEN)", param_hint="--admin-token")
    try:
        import uvicorn

        from stableval.portal.app import create_app
    except ModuleNotFoundError as error:
        raise fail(f"the portal needs the 'portal' extra ({error.name} is missing): "
                   "pip install 'stableval[portal]'") from None
    try:
        app = create_app(database_url, admin_token, secure_cookies=secure_cookies, invite_rate=invite_rate)
    except Exception as error:
        raise fail(f"cannot open the database {database_url}: {error.__class__.__name__}: {error}") from None
    typer.echo(f"stableval portal on http://{host}:{port}/ (admin: /admin/login), database {database_url}",
               err=True)
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=True)


@portal_app.command("migrate")
def migrate(database_url: DatabaseOpt = DEFAULT_DB) -> None:
    """Create or upgrade the portal's database schema (Alembic)."""
    _database(database_url)
    typer.echo(f"database {database_url} is up to date", err=True)


@portal_app.command("track")
def track(
    slug: Annotated[str, typer.Argument(help="Short name: lower-case letters, digits, '-' or '_'.")],
    title: Annotated[str, typer.Option("--title", help="Title shown to raters (default: the name).")] = "",
    criteria: Annotated[str | None, typer.Option(
        "--criteria", help="Comma-separated criteria (default: problem resolution, helpfulness, scientific "
                           "consensus, accuracy, completeness).")] = None,
    k: Annotated[int, typer.Option("--k", min=1, help="Confirmed ratings needed per question.")] = 3,
    flag_limit: Annotated[int, typer.Option("--flag-limit", min=1, help="'Does not make sense' flags that "
                                                                       "retire a question.")] = 2,
    lease_hours: Annotated[float, typer.Option("--lease-hours", min=0.001, help="How long a claimed question "
                                                                                "stays reserved.")] = 24.0,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Create an evaluation track."""
    from stableval.errors import StableValError
    from stableval.portal.manage import create_track

    db = _database(database_url)
    names = [c for c in criteria.split(",") if c.strip()] if criteria else None
    try:
        create_track(db, slug, title, criteria=names, k=k, flag_limit=flag_limit,  # type: ignore[arg-type]
                     lease_hours=lease_hours)
    except StableValError as error:
        raise fail(str(error)) from None
    typer.echo(f"created track {slug}", err=True)


@portal_app.command("import")
def import_(
    slug: Annotated[str, typer.Argument(help="Track name.")],
    file: Annotated[Path, typer.Argument(help="CSV, TSV, JSONL or Parquet with columns id, prompt, model_a, "
                                              "answer_a, model_b, answer_b [, reference, specialty, subspecialty].")],
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Import questions and model answers into a track (all rows or none)."""
    from stableval.errors import StableValError
    from stableval.portal.manage import import_questions

    db = _database(database_url)
    try:
        count = import_questions(db, slug, file)  # type: ignore[arg-type]
    except StableValError as error:
        raise fail(str(error)) from None
    typer.echo(f"imported {count} questions into {slug}", err=True)


@portal_app.command("invites")
def invites(
    base_url: Annotated[str, typer.Option("--base-url", help="Public address of the portal, for the links.")],
    count: Annotated[int, typer.Option("--count", min=0, help="Invites without a note.")] = 0,
    from_file: Annotated[Path | None, typer.Option("--from", help="CSV/JSONL of invitees (column note, email or "
                                                                  "name): one invite each.")] = None,
    output: OutputOpt = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Create invite links (CSV: rater, note, link). The links are shown once; only their hashes are stored."""
    from stableval.errors import StableValError
    from stableval.portal.manage import create_invites, read_invite_notes

    notes = [""] * count
    if from_file is not None:
        try:
            notes += read_invite_notes(from_file)
        except StableValError as error:
            raise fail(str(error)) from None
    if not notes:
        raise typer.BadParameter("give --count N or --from FILE", param_hint="--count")
    db = _database(database_url)
    created = create_invites(db, notes)  # type: ignore[arg-type]
    import pandas as pd

    frame = pd.DataFrame({"rater": [f"rater-{i.rater_id}" for i in created], "note": [i.note for i in created],
                          "link": [i.link(base_url) for i in created]})
    text = frame.to_csv(index=False)
    if output is None:
        sys.stdout.write(text)
    else:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # links are secrets
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        typer.echo(f"wrote {len(created)} invite links to {output}", err=True)


@portal_app.command("export")
def export(
    slug: Annotated[str | None, typer.Argument(help="Track name (default: every track).")] = None,
    kind: Annotated[ExportKind, typer.Option("--kind", help="annotations (item, agent, rater, label 1-5) or "
                                                            "pairwise (item, agent_a, agent_b, rater, winner).")
                    ] = ExportKind.ANNOTATIONS,
    output_format: Annotated[ExportFormat, typer.Option("--format", "-f", help="csv, jsonl or parquet.")
                             ] = ExportFormat.CSV,
    criterion: Annotated[str | None, typer.Option("--criterion", help="Only this criterion (needed to score "
                                                                      "ratings with stableval score).")] = None,
    output: OutputOpt = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Export confirmed judgments (one row per rater × item × criterion) for stableval score and friends."""
    from stableval.errors import StableValError
    from stableval.portal.export import export as run_export
    from stableval.portal.export import write

    db = _database(database_url)
    try:
        result = run_export(db, kind.value, track=slug, criterion=criterion)  # type: ignore[arg-type]
    except StableValError as error:
        raise fail(str(error)) from None
    if output is None:
        if output_format is ExportFormat.PARQUET:
            raise typer.BadParameter("Parquet needs --output FILE", param_hint="--format")
        write(result.frame, sys.stdout.buffer, output_format.value)
        sys.stdout.flush()
    else:
        write(result.frame, output, output_format.value)
        typer.echo(f"wrote {len(result.frame):,} rows to {output}", err=True)
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
