"""``stableval serve`` (the evaluation portal web server) and ``stableval portal ...`` (its admin tasks).

The admin tasks work on the database directly, without the web server: migrate, create tracks, import
questions, create invites. Exporting judgments (``stableval portal export``, also ``stableval export``) lives in
:mod:`stableval.commands.export`, which adds itself to the :data:`portal_app` group declared here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stableval.commands.common import OutputOpt, bad_input_exits, fail

if TYPE_CHECKING:  # pragma: no cover
    from stableval.portal.db import Database

__all__ = ["DEFAULT_DB", "DatabaseOpt", "open_database", "portal_app", "register", "serve"]

DEFAULT_DB = "sqlite:///stableval-portal.db"

DatabaseOpt = Annotated[str, typer.Option(
    "--database-url", envvar="STABLEVAL_PORTAL_DATABASE_URL",
    help="SQLAlchemy URL: sqlite:///portal.db (default, one file) or "
         "postgresql+psycopg://user:password@host:5432/name.")]


portal_app = typer.Typer(help="Portal admin tasks without the web server: migrate, tracks, question import, "
                              "invites, export.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """``stableval serve`` and the ``stableval portal`` group (its ``export`` is added by
    :func:`stableval.commands.export.register`)."""
    app.command()(serve)
    app.add_typer(portal_app, name="portal")


def open_database(url: str) -> Database:
    """The portal database at ``url``, its schema created or upgraded; a clear error exit when the portal extra
    is missing or the database cannot be opened."""
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
    open_database(database_url)
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
    from stableval.portal.manage import create_track

    db = open_database(database_url)
    names = [c for c in criteria.split(",") if c.strip()] if criteria else None
    with bad_input_exits():
        create_track(db, slug, title, criteria=names, k=k, flag_limit=flag_limit, lease_hours=lease_hours)
    typer.echo(f"created track {slug}", err=True)


@portal_app.command("import")
def import_(
    slug: Annotated[str, typer.Argument(help="Track name.")],
    file: Annotated[Path, typer.Argument(help="CSV, TSV, JSONL or Parquet with columns id, prompt, model_a, "
                                              "answer_a, model_b, answer_b [, reference, specialty, subspecialty].")],
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Import questions and model answers into a track (all rows or none)."""
    from stableval.portal.manage import import_questions

    db = open_database(database_url)
    with bad_input_exits():
        count = import_questions(db, slug, file)
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
    from stableval.portal.manage import create_invites, read_invite_notes

    notes = [""] * count
    if from_file is not None:
        with bad_input_exits():
            notes += read_invite_notes(from_file)
    if not notes:
        raise typer.BadParameter("give --count N or --from FILE", param_hint="--count")
    db = open_database(database_url)
    created = create_invites(db, notes)
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
