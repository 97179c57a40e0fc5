"""``stableval serve`` and the portal CLI: a generated admin token when none is given, invite tokens kept out of
the access log (F4), X-Forwarded-For trusted only when configured (F15), the real default database in the help
and no empty database created by ``stableval export`` (issue 16), rater revocation from the CLI (F3)."""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from portal_helpers import PATIENCE, invite_tokens, seed_track, start_rater, wait_until
from typer.testing import CliRunner

from stableval.cli import app as cli
from stableval.portal.store.db import Database

runner = CliRunner()


def _plain(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """uvicorn.run replaced by a recorder: serve builds its app and returns at once."""
    import uvicorn

    calls: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.update(app=app, **options))
    return calls


def test_serve_without_a_token_generates_one_and_prints_it_once(captured: dict[str, Any], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    result = runner.invoke(cli, ["serve", "--database-url", url, "--port", "8123"],
                           env={"STABLEVAL_PORTAL_ADMIN_TOKEN": ""})
    assert result.exit_code == 0, result.output
    token = captured["app"].state.portal.admin_token
    assert len(token) >= 32 and result.stderr.count(token) == 1
    assert "http://127.0.0.1:8123/admin/login" in result.stderr
    client = TestClient(captured["app"])
    assert client.get("/admin", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    captured["app"].state.portal.db.dispose()


def test_serve_trusts_forwarded_headers_only_when_told(captured: dict[str, Any], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    env = {"STABLEVAL_PORTAL_ADMIN_TOKEN": "admin-token-for-tests"}
    assert runner.invoke(cli, ["serve", "--database-url", url], env=env).exit_code == 0
    assert captured["proxy_headers"] is False  # X-Forwarded-For from loopback is not trusted by default
    captured["app"].state.portal.db.dispose()
    result = runner.invoke(cli, ["serve", "--database-url", url, "--forwarded-allow-ips", "10.0.0.5"], env=env)
    assert result.exit_code == 0, result.output
    assert captured["proxy_headers"] is True and captured["forwarded_allow_ips"] == "10.0.0.5"
    captured["app"].state.portal.db.dispose()


def test_serve_keeps_idle_connections_longer_than_clients(captured: dict[str, Any], tmp_path: Path) -> None:
    """uvicorn's 5 s keep-alive reset requests sent just as it closed an idle connection (the dropped connections
    of the 2-worker benchmark): serve keeps idle connections 75 s unless told otherwise."""
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    env = {"STABLEVAL_PORTAL_ADMIN_TOKEN": "admin-token-for-tests"}
    assert runner.invoke(cli, ["serve", "--database-url", url], env=env).exit_code == 0
    assert captured["timeout_keep_alive"] == 75
    captured["app"].state.portal.db.dispose()
    result = runner.invoke(cli, ["serve", "--database-url", url, "--timeout-keep-alive", "20"], env=env)
    assert result.exit_code == 0, result.output
    assert captured["timeout_keep_alive"] == 20
    captured["app"].state.portal.db.dispose()


def test_access_log_config_redacts_invite_tokens() -> None:
    from stableval.commands.serve import access_log_config

    config = access_log_config()
    assert all("redact_tokens" in handler["filters"] for handler in config["handlers"].values())
    logging.config.dictConfig(config)
    record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:1", "GET", "/i/SeCrEt-token_123?a=b", "1.1", 303), None)
    for item in logging.getLogger("uvicorn.access").handlers[0].filters:
        assert item.filter(record)  # type: ignore[union-attr]
    assert "SeCrEt" not in record.getMessage() and "/i/<redacted>?a=b" in record.getMessage()


@pytest.mark.slow  # a real server or several processes
def test_serve_access_log_never_shows_an_invite_token(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db = Database(url)
    db.upgrade()
    seed_track(db, tmp_path)
    token = invite_tokens(db, 1)[0]
    db.dispose()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "serve.log"
    with log.open("wb") as handle:
        process = subprocess.Popen([sys.executable, "-m", "stableval", "serve", "--database-url", url, "--port",
                                    str(port)], env={**os.environ, "STABLEVAL_PORTAL_ADMIN_TOKEN": "admin-token-tests"},
                                   stdout=handle, stderr=subprocess.STDOUT)
        try:
            def answers() -> bool:
                assert process.poll() is None, log.read_text()
                try:
                    httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                    return True
                except httpx.HTTPError:
                    return False

            wait_until(answers, "stableval serve to answer")
            answer = httpx.get(f"http://127.0.0.1:{port}/i/{token}", timeout=PATIENCE)
            assert answer.status_code == 303
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=PATIENCE)
    text = log.read_text()
    assert "GET /i/<redacted> HTTP/1.1" in text and token not in text


def test_help_states_the_real_default_database() -> None:
    for command in (["serve", "--help"], ["portal", "import", "--help"], ["export", "--help"]):
        text = _plain(runner.invoke(cli, command, env={"COLUMNS": "240"}).stdout)
        assert "stableval-portal.db" in text and "sqlite:///portal.db (default" not in text, command


def test_export_refuses_a_database_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    for command in (["export"], ["portal", "export", "main"]):
        result = runner.invoke(cli, [*command, "--database-url", f"sqlite:///{missing}"])
        assert result.exit_code == 1 and "no portal database at" in _plain(result.stderr), result.output
        assert str(missing.name) in result.stderr and not missing.exists()


def test_cli_revokes_and_reissues_rater_access(tmp_path: Path) -> None:
    from stableval.portal.web.app import create_app

    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token="admin-token-for-tests")
    db = app.state.portal.db
    seed_track(db, tmp_path)
    token = invite_tokens(db, 1)[0]
    browser = TestClient(app)
    start_rater(browser, token)
    assert runner.invoke(cli, ["portal", "rater", "rater-1", "disable", "--database-url", url]).exit_code == 0
    assert browser.get("/progress").status_code == 403
    assert runner.invoke(cli, ["portal", "rater", "1", "enable", "--database-url", url]).exit_code == 0
    assert runner.invoke(cli, ["portal", "rater", "1", "end-sessions", "--database-url", url]).exit_code == 0
    assert browser.get("/progress").status_code == 401
    fresh = runner.invoke(cli, ["portal", "rater", "1", "new-invite", "--base-url", "http://portal.example",
                                "--database-url", url])
    assert fresh.exit_code == 0 and re.fullmatch(r"http://portal\.example/i/\S{32,}\n", fresh.stdout)
    assert TestClient(app).get(f"/i/{token}").status_code == 404  # the old link stopped working
    assert TestClient(app).get(fresh.stdout.strip().replace("http://portal.example", "")).status_code == 200
    unknown = runner.invoke(cli, ["portal", "rater", "rater-9", "disable", "--database-url", url])
    assert unknown.exit_code == 1 and "no such rater" in unknown.stderr
    usage = runner.invoke(cli, ["portal", "rater", "bob", "disable", "--database-url", url])
    assert usage.exit_code == 2
    db.dispose()
