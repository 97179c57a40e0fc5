"""Durability: a real server is killed (SIGKILL) mid-work and restarted on the same database; the acknowledged
submission, the half-filled draft and the rater's session all survive."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from portal_helpers import (
    LiveServer,
    csrf_of,
    form_token_of,
    invite_tokens,
    pairwise_form,
    questions_frame,
    rating_form,
    seed_track,
)
from sqlalchemy import func, select

from stableval.portal.db import Database
from stableval.portal.models import Judgment, Submission


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # PostgreSQL durability is the server's own
def test_crash_and_restart_lose_nothing(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(2))
    token = invite_tokens(db, 1)[0]
    db.dispose()
    server = LiveServer(db_url).start()
    try:
        client = httpx.Client(base_url=server.base, follow_redirects=True, timeout=10)
        page = client.get(f"/i/{token}")
        client.post("/profile", data={"csrf": csrf_of(page.text), "name": "A", "email": "a@example.org",
                                      "specialty": "x", "years": "3"})
        html = client.post("/tracks/main/next", data={"csrf": csrf_of(client.get("/progress").text)})
        first = int(re.search(r"/a/(\d+)/pairwise", str(html.url)).group(1))
        step2 = client.post(f"/a/{first}/pairwise", data=pairwise_form(csrf_of(html.text)))
        confirm = client.post(f"/a/{first}/rating", data=rating_form(csrf_of(step2.text)))
        done = client.post(f"/a/{first}/submit", data={"csrf": csrf_of(confirm.text),
                                                        "form_token": form_token_of(confirm.text)})
        assert "Your evaluation was saved" in done.text  # acknowledged
        html = client.post("/tracks/main/next", data={"csrf": csrf_of(done.text)})
        second = int(re.search(r"/a/(\d+)/pairwise", str(html.url)).group(1))
        client.post(f"/a/{second}/pairwise", data={**pairwise_form(csrf_of(html.text), "tie"), "action": "save",
                                                   "why-accuracy": "half done"})
        server.kill()  # crash: no shutdown hooks run
        server.start()
        client = httpx.Client(base_url=server.base, follow_redirects=True, timeout=10, cookies=client.cookies)
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
