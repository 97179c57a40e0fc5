"""The invite and sign-in rate limits under ``stableval serve --workers N``: kept in one SQLite file that every
worker process counts against (in memory, each of N processes allowed the whole limit, so a client got N times
the sign-in guesses)."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from portal_helpers import PATIENCE
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.commands.serve import WORKER_SETTINGS, worker_app
from stableval.portal.store.security import RateLimiter


def test_limiters_on_one_file_share_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "limits.sqlite"
    first, second = (RateLimiter(limit=3, window=60.0, shared=path, name="login") for _ in range(2))
    other = RateLimiter(limit=3, window=60.0, shared=path, name="invite")
    assert [first.allow("10.0.0.1", now=t) for t in (0.0, 1.0)] == [True, True]
    assert second.allow("10.0.0.1", now=2.0) is True
    assert first.allow("10.0.0.1", now=3.0) is False and second.allow("10.0.0.1", now=3.0) is False
    assert second.allow("10.0.0.2", now=3.0) is True  # another client
    assert other.allow("10.0.0.1", now=3.0) is True  # another limiter in the same file
    assert second.allow("10.0.0.1", now=60.5) is True  # the first event left the window


def test_failed_credentials_on_one_file_share_both_limits(tmp_path: Path) -> None:
    """Issue 26 (security review 3, F6): the admin-credential limiter counts failures only, per client and for
    everyone together (trusted clients exempt from the latter), in the same shared file as the other limits."""
    path = tmp_path / "limits.sqlite"
    first, second = (RateLimiter(limit=2, window=60.0, total=3, shared=path, name="login") for _ in range(2))
    assert [first.attempt("a", lambda: False, now=0.0), second.attempt("a", lambda: True, now=0.0)] == [False, True]
    assert second.attempt("a", lambda: False, now=1.0) is False and first.attempt("a", lambda: True, now=1.0) is None
    assert first.attempt("b", lambda: False, now=2.0) is False  # the third failure of all: the cap is reached
    assert second.attempt("c", lambda: True, now=2.0) is None  # refused unchecked
    assert second.attempt("device:x", lambda: True, trusted=True, now=2.0) is True
    assert first.attempt("c", lambda: True, now=61.0) is True  # the window moved on


def test_in_memory_limiters_do_not_share() -> None:
    """What each worker process had before: its own count."""
    first, second = RateLimiter(limit=1, window=60.0), RateLimiter(limit=1, window=60.0)
    assert first.allow("a", now=0.0) and second.allow("a", now=0.0)


def _guesses(path: str, n: int, queue: Any) -> None:
    limiter = RateLimiter(limit=10, window=60.0, shared=path, name="login")
    queue.put(sum(limiter.allow("203.0.113.9") for _ in range(n)))


@pytest.mark.slow  # a real server or several processes
def test_processes_count_against_one_limit(tmp_path: Path) -> None:
    path = str(tmp_path / "limits.sqlite")
    RateLimiter(limit=10, window=60.0, shared=path, name="login")  # the table, made once before the processes
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=_guesses, args=(path, 8, queue)) for _ in range(3)]
    for process in processes:
        process.start()
    allowed = [queue.get(timeout=PATIENCE) for _ in processes]
    for process in processes:
        process.join(timeout=PATIENCE)
    assert sum(allowed) == 10  # 24 guesses from three processes, 10 allowed in all


def test_serve_with_workers_gives_every_worker_one_limits_file(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    seen: list[dict[str, Any]] = []

    def run(app: object, **kwargs: object) -> None:
        settings = json.loads(os.environ[WORKER_SETTINGS])
        seen.append(settings)
        assert Path(settings["rate_limit_file"]).parent.is_dir()  # its folder exists while the workers run

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.delenv(WORKER_SETTINGS, raising=False)
    url = f"sqlite:///{tmp_path / 'p.db'}"
    result = CliRunner().invoke(cli_app, ["serve", "--workers", "2", "--database-url", url,
                                          "--admin-token", "x" * 16])
    assert result.exit_code == 0, result.output
    [settings] = seen
    assert not Path(settings["rate_limit_file"]).exists()  # removed when the server stops (beside the database)


def test_worker_apps_share_the_sign_in_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from stableval.portal.store.db import Database
    from stableval.portal.web.common import LOGIN_RATE

    url = f"sqlite:///{tmp_path / 'p.db'}"
    Database(url).upgrade()
    monkeypatch.setenv(WORKER_SETTINGS, json.dumps({
        "database_url": url, "admin_token": "worker-admin-token", "secure_cookies": False, "invite_rate": 20,
        "rate_limit_file": str(tmp_path / "limits.sqlite")}))
    apps = [worker_app(), worker_app()]  # two workers' apps, as two processes build them
    clients = [TestClient(app) for app in apps]
    statuses = []
    for attempt in range(LOGIN_RATE + 2):
        client = clients[attempt % 2]
        form = client.get("/admin/login").text
        csrf = form.split('name="csrf" value="')[1].split('"')[0]
        statuses.append(client.post("/admin/login", data={"token": "wrong-token-guess", "csrf": csrf}).status_code)
    assert statuses.count(429) == 2, statuses  # the 11th and 12th guesses, whichever worker got them
    for app in apps:
        app.state.portal.db.dispose()
