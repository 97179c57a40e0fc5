"""Shared helpers for the portal tests: databases (SQLite file, PostgreSQL when configured), clients, forms."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("fastapi", reason="the portal extra is not installed (pip install 'stableval[portal]')")

from fastapi.testclient import TestClient

from stableval.portal.admin.manage import create_invites, create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.web.app import create_app

ADMIN = "admin-token-for-tests"
#: Where .ci/portal-setup.sh writes the PostgreSQL test URL (the environment variable wins).
POSTGRES_URL_FILE = Path("/tmp/stableval_test_postgres_url")


def postgres_url() -> str | None:
    url = os.environ.get("STABLEVAL_TEST_POSTGRES_URL")
    if not url and POSTGRES_URL_FILE.exists():
        url = POSTGRES_URL_FILE.read_text().strip()
    return url or None


#: Schemas created by this test run (dropped at the end by the session fixture in conftest.py).
CREATED_SCHEMAS: list[str] = []


def fresh_postgres() -> str:
    """A PostgreSQL URL whose search_path is a new, empty schema of its own (so concurrent test runs on one
    server never collide), or skip with the reason."""
    import secrets

    url = postgres_url()
    if url is None:
        pytest.skip("PostgreSQL not configured: run .ci/portal-setup.sh or set STABLEVAL_TEST_POSTGRES_URL")
    from sqlalchemy import create_engine, text

    schema = f"test_{secrets.token_hex(6)}"
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text(f"CREATE SCHEMA {schema}"))
    except Exception as error:  # server down: say so
        pytest.skip(f"PostgreSQL at {url} not reachable: {error.__class__.__name__}")
    finally:
        engine.dispose()
    CREATED_SCHEMAS.append(schema)
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"


def drop_schemas() -> None:
    url = postgres_url()
    if not CREATED_SCHEMAS or url is None:
        return
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    for schema in CREATED_SCHEMAS:  # one transaction each: all at once runs out of max_locks_per_transaction
        with engine.begin() as connection:
            connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
    engine.dispose()
    CREATED_SCHEMAS.clear()


def database_url(kind: str, tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'portal.db'}" if kind == "sqlite" else fresh_postgres()


def questions_frame(n: int = 4, *, specialty: str = "", subspecialty: str = "", prefix: str = "q") -> pd.DataFrame:
    return pd.DataFrame({
        "id": [f"{prefix}{i}" for i in range(n)],
        "prompt": [f"Question **{i}**: which drug?" for i in range(n)],
        "model_a": ["TxAgent"] * n,
        "answer_a": [f"Answer A{i} with *markdown*" for i in range(n)],
        "model_b": ["GPT-4o"] * n,
        "answer_b": [f"Answer B{i}" for i in range(n)],
        "reference": [""] * n,
        "specialty": [specialty] * n,
        "subspecialty": [subspecialty] * n,
    })


def seed_track(db: Database, tmp_path: Path, slug: str = "main", *, frame: pd.DataFrame | None = None,
               **options: Any) -> None:
    create_track(db, slug, title=slug.title(), **options)
    path = tmp_path / f"{slug}-questions.csv"
    (questions_frame() if frame is None else frame).to_csv(path, index=False)
    import_questions(db, slug, path)


def invite_tokens(db: Database, n: int) -> list[str]:
    return [invite.token for invite in create_invites(db, [f"rater{i}@example.org" for i in range(n)])]


def profiled_raters(db: Database, n: int) -> list[int]:
    """``n`` new raters (invited, profile filled in as cardiologists), by id."""
    from sqlalchemy import select

    from stableval.portal.store.models import Rater, utcnow

    ids = [invite.rater_id for invite in create_invites(db, [f"r{i}" for i in range(n)])]
    with db.writing() as session:
        for rater in session.scalars(select(Rater).where(Rater.id.in_(ids))):
            rater.specialty, rater.profile_at = "cardiology", utcnow()
    return ids


def seed_and_invite(db: Database, tmp_path: Path, frame: pd.DataFrame | None = None) -> str:
    """Seed track 'main' (default questions: :func:`questions_frame`) and invite one rater; their invite token."""
    seed_track(db, tmp_path, frame=frame)
    return invite_tokens(db, 1)[0]


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "page has no CSRF field"
    return found.group(1)


def form_token_of(html: str) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', html)
    assert found, "page has no form token"
    return found.group(1)


def start_rater(client: TestClient, token: str, specialty: str = "cardiology", subspecialty: str = "") -> None:
    page = client.get(f"/i/{token}")
    assert page.status_code == 200 and "About you" in page.text
    answer = client.post("/profile", data={"csrf": csrf_of(page.text), "name": "Dr Test", "email": "t@example.org",
                                           "specialty": specialty, "subspecialty": subspecialty, "years": "7"})
    assert answer.status_code == 200, answer.text


def signed_in_rater(portal: tuple[Any, Database], tmp_path: Path, frame: pd.DataFrame | None = None, *,
                    specialty: str = "cardiology") -> tuple[TestClient, Database]:
    """The usual start of a flow test: track 'main' seeded on the ``portal`` fixture's app, one invited rater
    signed in with their profile filled in; returns that rater's client and the database."""
    app, db = portal
    token = seed_and_invite(db, tmp_path, frame)
    client = TestClient(app)
    start_rater(client, token, specialty=specialty)
    return client, db


def claim(client: TestClient, slug: str = "main") -> tuple[int, str]:
    """Press 'Next question'; returns (assignment id, pairwise page html) or (0, page) when nothing is left."""
    page = client.get("/progress")
    answer = client.post(f"/tracks/{slug}/next", data={"csrf": csrf_of(page.text)})
    found = re.search(r"/a/(\d+)/pairwise", str(answer.url))
    return (int(found.group(1)), answer.text) if found else (0, answer.text)


CRITERIA = ("problem_resolution", "helpfulness", "scientific_consensus", "accuracy", "completeness")


def pairwise_form(csrf: str, choice: str = "a", **extra: str) -> dict[str, str]:
    return {"csrf": csrf, "action": "next", **{f"pw-{c}": choice for c in CRITERIA}, **extra}


def rating_form(csrf: str, a: str = "4", b: str = "3", **extra: str) -> dict[str, str]:
    return {"csrf": csrf, "action": "next", **{f"ra-{c}": a for c in CRITERIA},
            **{f"rb-{c}": b for c in CRITERIA}, **extra}


def submit_form(html: str) -> dict[str, str]:
    """The submit button's form on a confirm page: its CSRF and one-time form token."""
    return {"csrf": csrf_of(html), "form_token": form_token_of(html)}


def fill_steps(client: Any, assignment: int, html: str, choice: str = "a", a: str = "4", b: str = "3",
               **pairwise_extra: str) -> Any:
    """Post the pairwise step (``choice`` on every criterion) and the rating step (A ``a``, B ``b``) of a
    claimed question from its pairwise page ``html``; returns the confirm page (a TestClient or httpx client)."""
    answer = client.post(f"/a/{assignment}/pairwise", data=pairwise_form(csrf_of(html), choice, **pairwise_extra))
    assert answer.status_code == 200 and "Step 2 of 2" in answer.text, answer.text
    answer = client.post(f"/a/{assignment}/rating", data=rating_form(csrf_of(answer.text), a, b))
    assert answer.status_code == 200 and "Check and submit" in answer.text, answer.text
    return answer


def complete_one(client: TestClient, slug: str = "main", choice: str = "a", a: str = "4", b: str = "3") -> int:
    """Claim, fill both steps and submit one question; returns the assignment id."""
    assignment, html = claim(client, slug)
    assert assignment, html
    confirm = fill_steps(client, assignment, html, choice, a, b)
    answer = client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text))
    assert answer.status_code == 200, answer.text
    return assignment


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url(request.param, tmp_path)


@pytest.fixture
def portal(db_url: str) -> Iterator[tuple[Any, Database]]:
    app = create_app(db_url, admin_token=ADMIN)
    yield app, app.state.portal.db
    app.state.portal.db.dispose()


#: the longest a test waits for something that will happen (a server starting, a page loading): generous, so the
#: suite passes on a machine busy with other work; every wait ends as soon as its condition holds
PATIENCE = 180.0


def wait_until(condition: Callable[[], bool], what: str, *, ceiling: float = PATIENCE, poll: float = 0.1) -> None:
    """Return as soon as ``condition()`` is true; fail the test after ``ceiling`` seconds, naming ``what``."""
    deadline = time.monotonic() + ceiling
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {ceiling:.0f} s for {what}")
        time.sleep(poll)


class LiveServer:
    """``stableval serve`` in a child process on a free loopback port (killed with SIGKILL to simulate a crash)."""

    def __init__(self, db_url: str, *, cli: bool = False) -> None:
        self.db_url = db_url
        self.cli = cli  # True: through `stableval serve`; False: uvicorn on create_app (starts faster)
        self.process: Any = None
        self.port = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LiveServer:
        import socket
        import subprocess
        import sys

        import httpx

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        env = {**os.environ, "STABLEVAL_PORTAL_ADMIN_TOKEN": ADMIN}
        if self.cli:
            command = [sys.executable, "-m", "stableval", "serve", "--database-url", self.db_url,
                       "--port", str(self.port)]
        else:
            command = [sys.executable, "-c", "import sys, uvicorn; from stableval.portal.web.app import create_app; "
                       "uvicorn.run(create_app(sys.argv[1], sys.argv[2]), host='127.0.0.1', port=int(sys.argv[3]), "
                       "log_level='warning')", self.db_url, ADMIN, str(self.port)]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        process = self.process

        def answers() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"server exited: {process.stderr.read().decode()[-2000:]}")
            try:
                return bool(httpx.get(self.base + "/", timeout=5).status_code == 200)
            except httpx.HTTPError:
                return False

        try:
            wait_until(answers, "the server to answer")
        except BaseException:
            self.kill()
            raise
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=PATIENCE)
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
        self.process = None


# ------------------------------------------------------------------ browser (Playwright)
#: Debian's chromium (the Playwright browser download does not work here) and its flags for headless tests
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def launched_chromium() -> Iterator[Any]:
    """Headless chromium through Playwright for one test module (the ``browser`` fixture of conftest.py)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield PatientBrowser(launched)
        launched.close()


class PatientBrowser:
    """A Playwright browser whose pages wait up to :data:`PATIENCE` for navigation, selectors and actions (their
    default, 30 s, fails on a busy machine); everything else is the browser's."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)

    def new_page(self, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        page.set_default_timeout(PATIENCE * 1000)
        page.set_default_navigation_timeout(PATIENCE * 1000)
        return page

    def new_context(self, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        context.set_default_timeout(PATIENCE * 1000)
        context.set_default_navigation_timeout(PATIENCE * 1000)
        return context


def focused(page: Any) -> dict[str, Any]:
    """What has the keyboard focus in the page: tag, name, type, value, checked, id, text and aria-label."""
    return page.evaluate("() => { const e = document.activeElement; return {tag: e.tagName, name: e.name || '', "
                         "type: e.type || '', value: e.value || '', checked: !!e.checked, id: e.id || '', "
                         "text: (e.innerText || '').trim(), label: e.getAttribute('aria-label') || ''}; }")


def tab_to(page: Any, match: Any, limit: int = 400) -> dict[str, Any]:
    """Press Tab until ``match(focused(page))``; fails the test when the focus never gets there."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = focused(page)
        if match(now):
            return now
    raise AssertionError("keyboard focus never reached the control")


def row_count(db: Database, table: Any) -> int:
    """Rows of one table (a model class)."""
    from sqlalchemy import func, select

    with db.reading() as session:
        return int(session.scalar(select(func.count()).select_from(table)) or 0)
