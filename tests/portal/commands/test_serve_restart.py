"""Durability: a real server is killed (SIGKILL) mid-work and restarted on the same database; the acknowledged
submission, the half-filled draft and the rater's session all survive."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from portal_helpers import (
    PATIENCE,
    LiveServer,
    claim,
    csrf_of,
    fill_steps,
    pairwise_form,
    questions_frame,
    seed_and_invite,
    start_rater,
    submit_form,
)
from sqlalchemy import func, select

from stableval.portal.store.db import Database
from stableval.portal.store.models import Judgment, Submission

pytestmark = pytest.mark.slow  # a real server, killed with SIGKILL and restarted


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # PostgreSQL durability is the server's own
def test_crash_and_restart_lose_nothing(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    token = seed_and_invite(db, tmp_path, questions_frame(2))
    db.dispose()
    server = LiveServer(db_url).start()
    try:
        client = httpx.Client(base_url=server.base, follow_redirects=True, timeout=PATIENCE)
        start_rater(client, token)
        first, html = claim(client)
        done = client.post(f"/a/{first}/submit", data=submit_form(fill_steps(client, first, html).text))
        assert "Your evaluation was saved" in done.text  # acknowledged
        second, html = claim(client)
        assert first and second and second != first, html
        client.post(f"/a/{second}/pairwise", data={**pairwise_form(csrf_of(html), "tie"), "action": "save",
                                                   "why-accuracy": "half done"})
        server.kill()  # crash: no shutdown hooks run
        server.start()
        client = httpx.Client(base_url=server.base, follow_redirects=True, timeout=PATIENCE, cookies=client.cookies)
        progress = client.get("/progress")
        assert progress.status_code == 200 and "(1 done)" in progress.text  # the session survived too
        again = client.get(f"/a/{second}/pairwise").text
        assert 'value="tie" id="pw-accuracy-tie" checked' in again and "half done</textarea>" in again
    finally:
        server.kill()
    db = Database(db_url)
    with db.reading() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
        assert session.scalar(select(func.count()).select_from(Judgment)) == 5
    db.dispose()
