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
