"""``stableval serve``: the evaluation portal's web server (its admin tasks without the server:
:mod:`stableval.commands.portal`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import fail
from stableval.commands.portal import DEFAULT_DB, DatabaseOpt

__all__ = [
    "KEEP_ALIVE_SECONDS",
    "WORKER_HEALTHCHECK_SECONDS",
    "WORKER_SETTINGS",
    "access_log_config",
    "rate_limit_file",
    "refuse_shared_sqlite",
    "register",
    "serve",
    "worker_app",
]


def register(app: typer.Typer) -> None:
    """``stableval serve``."""
    app.command()(serve)


def refuse_shared_sqlite(url: str, workers: int) -> None:
    """Usage error (exit 2) when ``--workers N`` cannot share the database: an in-memory SQLite database (each
    process would have its own), or a SQLite file on a platform without ``flock`` (the writers of several
    processes could not be queued, see :mod:`stableval.portal.store.write_lock`)."""
    from sqlalchemy.engine import make_url

    from stableval.portal.store.db import sqlite_file
    from stableval.portal.store.write_lock import CROSS_PROCESS

    try:
        if make_url(url).get_backend_name() != "sqlite":
            return
    except Exception:
        return  # the database open reports a bad URL with its own message
    if sqlite_file(url) is None:
        raise typer.BadParameter(f"--workers {workers} needs a database the processes share: give a SQLite file "
                                 "(sqlite:///portal.db) or PostgreSQL, not an in-memory SQLite database",
                                 param_hint="--workers")
    if not CROSS_PROCESS:
        raise typer.BadParameter(f"--workers {workers} on SQLite needs flock(2), which this platform lacks: run "
                                 "one worker or use --database-url postgresql+psycopg://...", param_hint="--workers")


def access_log_config() -> dict[str, Any]:
    """uvicorn's logging configuration with the access log passed through
    :class:`stableval.portal.store.security.RedactTokens` (invite tokens never reach the log)."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_tokens"] = {"()": "stableval.portal.store.security.RedactTokens"}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("redact_tokens")
    return config


#: Idle keep-alive seconds (nginx's default client keep-alive; longer than the idle reuse of common clients and
#: proxies, so the client, not the server, closes an idle connection and no request meets a closing socket)
KEEP_ALIVE_SECONDS = 75


def serve(
    database_url: DatabaseOpt = DEFAULT_DB,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (0.0.0.0 for all interfaces; put a "
                                                     "TLS proxy in front).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port.")] = 8000,
    admin_token: Annotated[str | None, typer.Option(
        "--admin-token", envvar="STABLEVAL_PORTAL_ADMIN_TOKEN",
        help="Admin credential (at least 12 characters); prefer the environment variable. Without one, a random "
             "token is made and printed once (it changes on every restart, which signs admins out).")] = None,
    secure_cookies: Annotated[bool, typer.Option("--secure-cookies/--no-secure-cookies",
                                                 help="Mark cookies Secure (behind HTTPS).")] = False,
    invite_rate: Annotated[int, typer.Option("--invite-rate", min=1,
                                             help="Invite-link attempts allowed per client and minute.")] = 20,
    forwarded_allow_ips: Annotated[str | None, typer.Option(
        "--forwarded-allow-ips", envvar="STABLEVAL_PORTAL_FORWARDED_ALLOW_IPS",
        help="Comma-separated addresses of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto headers "
             "are trusted (e.g. 127.0.0.1 when nginx runs on this host). Default: none, the headers are "
             "ignored and the connecting address is the client (rate limits key on it).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="Server processes (uvicorn workers), "
                                         "on PostgreSQL or a SQLite file (its writers queue on a shared lock "
                                         "file, one at a time). 2 on a 2-core machine; see docs/portal.md.")] = 1,
    keep_alive: Annotated[int, typer.Option(
        "--timeout-keep-alive", min=1, max=3600,
        help="Seconds an idle keep-alive connection stays open. Keep it longer than the idle timeout of the "
             "clients or proxy in front (uvicorn's 5 s made requests sent just as the server closed an idle "
             "connection fail with a reset; see docs/portal.md).")] = KEEP_ALIVE_SECONDS,
) -> None:
    """Run the evaluation portal: experts compare and rate two models' answers per question."""
    generated = not admin_token
    if workers > 1:
        refuse_shared_sqlite(database_url, workers)
    if admin_token and len(admin_token) < 12:
        raise typer.BadParameter("give an admin token of at least 12 characters (or set "
                                 "STABLEVAL_PORTAL_ADMIN_TOKEN), or none to get a random one",
                                 param_hint="--admin-token")
    try:
        import uvicorn

        from stableval.portal.web.app import create_app
    except ModuleNotFoundError as error:
        raise fail(f"the portal needs the 'portal' extra ({error.name} is missing): "
                   "pip install 'stableval[portal]'") from None
    if not admin_token:
        from stableval.portal.store.security import new_token

        admin_token = new_token()
    try:
        app = create_app(database_url, admin_token, secure_cookies=secure_cookies, invite_rate=invite_rate)
    except Exception as error:
        raise fail(f"cannot open the database {database_url}: {error.__class__.__name__}: {error}") from None
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    typer.echo(f"stableval portal on http://{host}:{port}/ (admin: /admin/login), database {database_url}",
               err=True)
    if generated:
        typer.echo(f"No admin token given, so this one was made for this run (shown once; set "
                   f"STABLEVAL_PORTAL_ADMIN_TOKEN to choose your own):\n    {admin_token}\n"
                   f"Sign in at http://{shown}:{port}/admin/login with it.", err=True)
    common: dict[str, Any] = dict(host=host, port=port, log_level="info", log_config=access_log_config(),
                                  proxy_headers=forwarded_allow_ips is not None,
                                  forwarded_allow_ips=forwarded_allow_ips, timeout_keep_alive=keep_alive)
    if workers == 1:
        uvicorn.run(app, **common)
        return
    # several processes: each builds its app from these settings (the schema is already upgraded, above); the
    # invite and sign-in rate limits live in one file for all of them (else each process allowed its own limit),
    # one per database, emptied at start (a killed server's file is not left to pile up) and removed at the end
    shared = rate_limit_file(database_url)
    _remove_limits(shared)
    os.environ.update({WORKER_SETTINGS: json.dumps({
        "database_url": database_url, "admin_token": admin_token, "secure_cookies": secure_cookies,
        "invite_rate": invite_rate, "rate_limit_file": str(shared)})})
    app.state.portal.db.dispose()
    try:
        uvicorn.run("stableval.commands.serve:worker_app", factory=True, workers=workers,
                    timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS, **common)
    finally:
        _remove_limits(shared)


def rate_limit_file(database_url: str) -> Path:
    """Where ``stableval serve --workers N`` keeps the rate limits its workers share: beside a SQLite database file
    (``portal.db.rate-limits``), else in the system's temporary folder under a name made from a hash of the URL
    (never the URL: it may hold a password). One place per database, so a server killed before it could remove
    the file leaves no new one behind: the next start empties it.

    >>> rate_limit_file("sqlite:///data/portal.db").as_posix()
    'data/portal.db.rate-limits'
    """
    import hashlib
    import tempfile

    from stableval.portal.store.db import sqlite_file

    found = sqlite_file(database_url)
    if found is not None:
        return Path(f"{found}.rate-limits")
    digest = hashlib.sha256(database_url.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"stableval-serve-{digest}.rate-limits"


def _remove_limits(path: Path) -> None:
    """The shared rate-limit file and SQLite's companions of it, gone."""
    for leftover in (path, Path(f"{path}-journal"), Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)


#: How long a busy worker may take to answer uvicorn's health check before it is killed and restarted (uvicorn's
#: default, 5 s, killed workers, and dropped their open requests, on a saturated 2-core machine)
WORKER_HEALTHCHECK_SECONDS = 60
#: Environment variable through which ``stableval serve --workers N`` hands its settings to each worker process.
WORKER_SETTINGS = "STABLEVAL_PORTAL_WORKER_SETTINGS"


def worker_app() -> Any:
    """One worker's app (``stableval serve --workers N``): the settings of the parent, no migration."""
    from stableval.portal.web.app import create_app

    settings = json.loads(os.environ[WORKER_SETTINGS])
    return create_app(settings["database_url"], settings["admin_token"], migrate=False,
                      secure_cookies=settings["secure_cookies"], invite_rate=settings["invite_rate"],
                      rate_limit_file=settings.get("rate_limit_file"))
