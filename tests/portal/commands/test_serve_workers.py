"""``stableval serve --workers N``: on PostgreSQL or a SQLite file (refused on an in-memory database with a clear
message, exit 2); each worker builds its app from the parent's settings without migrating."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.commands.serve import WORKER_SETTINGS, worker_app


def test_workers_need_a_database_the_processes_share(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli_app, ["serve", "--workers", "2", "--database-url", "sqlite://",
                                          "--admin-token", "x" * 16])
    assert result.exit_code == 2
    words = " ".join(result.output.replace("│", " ").split())  # the message as one line, without its box
    assert "--workers 2 needs a database the processes share" in words and "in-memory SQLite" in words


def test_workers_on_a_sqlite_file_run_n_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite files may have several workers (their writers queue on a shared lock file): uvicorn is asked for
    them, and each worker gets the parent's settings (regression: this was refused with "needs PostgreSQL")."""
    import uvicorn

    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append((app, kwargs)))
    monkeypatch.delenv(WORKER_SETTINGS, raising=False)
    url = f"sqlite:///{tmp_path / 'p.db'}"
    result = CliRunner().invoke(cli_app, ["serve", "--workers", "2", "--database-url", url,
                                          "--admin-token", "x" * 16])
    assert result.exit_code == 0, result.output
    [(app, kwargs)] = calls
    assert app == "stableval.commands.serve:worker_app" and kwargs["workers"] == 2 and kwargs["factory"]
    assert json.loads(os.environ[WORKER_SETTINGS])["database_url"] == url
    assert (tmp_path / "p.db").exists()  # migrated once by the parent


def test_worker_app_uses_the_parent_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from stableval.portal.store.db import Database

    url = f"sqlite:///{tmp_path / 'p.db'}"
    Database(url).upgrade()  # the parent migrates once, before the workers start
    monkeypatch.setenv(WORKER_SETTINGS, json.dumps({"database_url": url, "admin_token": "worker-admin-token",
                                                    "secure_cookies": True, "invite_rate": 7}))
    app = worker_app()
    portal = app.state.portal
    assert portal.admin_token == "worker-admin-token" and portal.secure_cookies and portal.db.url == url
    assert TestClient(app).get("/admin", headers={"Authorization": "Bearer worker-admin-token"}).status_code == 200
    portal.db.dispose()


def test_the_shared_limits_file_is_one_per_database_and_cleared_at_start(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (issue 26, security review 3, F20): ``serve --workers N`` kept its rate-limit file in a new
    folder of the system's temporary folder and removed it only on a clean exit, so every ``kill -9`` left one
    behind, holding the last minute's client addresses. Now the file has one place per database (beside a SQLite
    file), a file left by a crash is cleared when the server starts, and it holds hashed keys, not addresses."""
    import sqlite3

    import uvicorn

    from stableval.commands.serve import rate_limit_file
    from stableval.portal.store.security import RateLimiter

    url = f"sqlite:///{tmp_path / 'p.db'}"
    path = rate_limit_file(url)
    assert path == tmp_path / "p.db.rate-limits"
    other = rate_limit_file("postgresql+psycopg://u:p@127.0.0.1:5432/portal")
    assert other == rate_limit_file("postgresql+psycopg://u:p@127.0.0.1:5432/portal") != path
    assert "p@127" not in other.name  # no credential in the name
    crashed = RateLimiter(limit=5, window=600.0, shared=path, name="invite")
    crashed.allow("203.0.113.77")  # what a killed server left behind
    seen: list[int] = []

    def run(app: object, **kwargs: object) -> None:
        limiter = RateLimiter(limit=5, window=600.0, shared=path, name="invite")
        limiter.allow("198.51.100.5")
        with sqlite3.connect(path) as connection:
            keys = [key for (key,) in connection.execute("SELECT key FROM rate_events")]
        seen.append(len(keys))
        assert not any("203.0.113" in key or "198.51.100" in key for key in keys)  # hashed

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.delenv(WORKER_SETTINGS, raising=False)
    result = CliRunner().invoke(cli_app, ["serve", "--workers", "2", "--database-url", url,
                                          "--admin-token", "x" * 16])
    assert result.exit_code == 0, result.output
    assert json.loads(os.environ[WORKER_SETTINGS])["rate_limit_file"] == str(path)
    assert seen == [1] and not path.exists()  # the crashed run's event was cleared; the file removed at the end
