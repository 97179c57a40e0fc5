"""Portal test fixtures. The helpers live in portal_helpers.py beside this file; its folder is put on sys.path so
the test modules (in the sub-folders that mirror ``stableval.portal``) can import it.

The Playwright preamble every browser test shares lives here: ``browser`` (Debian's headless chromium, one per test
module; the test is skipped, with the install command, where chromium is missing) and ``live_portal`` (starts
``stableval serve`` on a seeded SQLite database, killed after the module). Tests that use either, like the restart,
``kill -9`` and multi-process tests marked in their modules, are ``slow``: ``pytest -m "not slow"`` runs the rest.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from portal_helpers import (  # noqa: F401
    CHROMIUM,
    LiveServer,
    db_url,
    drop_schemas,
    launched_chromium,
    portal,
)

from stableval.portal.store.db import Database


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that drives a browser or a live server is ``slow``."""
    for item in items:
        if {"browser", "live_portal"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def _drop_test_schemas() -> Iterator[None]:
    yield
    drop_schemas()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Debian chromium driven by Playwright, one per test module."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium not installed (apt-get install -y chromium; .ci/portal-setup.sh does it)")
    yield from launched_chromium()


@pytest.fixture(scope="module")
def live_portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., tuple[LiveServer, str, Any]]]:
    """``start(seed, cli=False)``: a live server (``stableval serve`` with ``cli``, else uvicorn on the app, which
    starts faster) on a new SQLite database that ``seed(db, folder)`` filled; returns the server, the database URL
    and what ``seed`` returned. Every server started is killed after the module (starting one costs seconds)."""
    started: list[LiveServer] = []

    def start(seed: Callable[[Database, Path], Any] | None = None, *, cli: bool = False
              ) -> tuple[LiveServer, str, Any]:
        folder = tmp_path_factory.mktemp("live")
        url = f"sqlite:///{folder / 'portal.db'}"
        db = Database(url)
        db.upgrade()
        seeded = seed(db, folder) if seed is not None else None
        db.dispose()
        started.append(LiveServer(url, cli=cli).start())
        return started[-1], url, seeded

    yield start
    for live in started:
        live.kill()
