"""Issue 15, performance: statements per page, statements built once per shape (bind parameters, not baked-in
values), the cheap session check, escaping, the plain-ASGI session middleware, the in-process CPU benchmark."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from markupsafe import Markup
from portal_helpers import (
    claim,
    csrf_of,
    fill_steps,
    invite_tokens,
    pairwise_form,
    questions_frame,
    seed_track,
    start_rater,
    submit_form,
)
from sqlalchemy import event, select

from stableval.portal.admin.manage import create_invites, end_rater_sessions, save_profile
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question, Rater, utcnow
from stableval.portal.tasks.render import escape_text
from stableval.portal.work import assignment
from stableval.portal.work.access import access_state, session_access
from stableval.portal.work.assignment import claim_next, progress_for

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@contextmanager
def statements(db: Database) -> Iterator[list[str]]:
    """The SQL statements run on ``db`` inside the block (transaction control left out)."""
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, sql: str, *_: Any) -> None:
        if not sql.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA")):
            seen.append(sql)

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", note)


def test_statements_per_rater_page(portal: tuple[Any, Database], tmp_path: Path) -> None:
    """Each rater page runs a fixed, small number of statements (before: 5 for a question page, 3 per track plus 2
    on the progress page); the session check (disabled? signed out?) stays on every one."""
    app, db = portal
    seed_track(db, tmp_path)
    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    assignment_id, html = claim(client)
    assert assignment_id
    counts = {}
    for name, path in (("progress", "/progress"), ("pairwise", f"/a/{assignment_id}/pairwise"),
                       ("confirm-redirect", f"/a/{assignment_id}/confirm")):
        with statements(db) as seen:
            assert client.get(path).status_code == 200
        counts[name] = len(seen)
    with statements(db) as seen:
        saved = client.post(f"/a/{assignment_id}/draft", data={"csrf": csrf_of(html), "step": "pairwise",
                                                                 "rev": "0", "pw-accuracy": "a"})
    assert saved.status_code == 204
    counts["autosave"] = len(seen)
    # progress: session check, rater, tracks, one statement per track; a question page (seen before): session
    # check and one query for assignment + question + track + draft; autosave: those two, draft read and write
    # (PostgreSQL also locks the assignment row)
    extra_lock = 0 if db.is_sqlite else 1
    assert counts == {"progress": 4, "pairwise": 2, "confirm-redirect": 2 + 2, "autosave": 4 + extra_lock}, counts


def test_question_pages_only_read(portal: tuple[Any, Database], tmp_path: Path) -> None:
    """The first view of step 1 and of step 2 writes nothing: the claim and the accepted step 1 form already
    marked the step as shown (regression: each first view wrote the draft, a third of the writes under load)."""
    app, db = portal
    seed_track(db, tmp_path)
    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    progress = client.get("/progress")
    claimed = client.post("/tracks/main/next", data={"csrf": csrf_of(progress.text)}, follow_redirects=False)
    assert claimed.status_code == 303
    pages = {}
    with statements(db) as seen:
        step1 = client.get(claimed.headers["location"])
    assert step1.status_code == 200 and "Step 1 of 2" in step1.text
    pages["pairwise"] = seen[:]
    assignment_id = int(claimed.headers["location"].split("/")[2])
    posted = client.post(f"/a/{assignment_id}/pairwise", data=pairwise_form(csrf_of(step1.text)),
                         follow_redirects=False)
    assert posted.status_code == 303 and posted.headers["location"] == f"/a/{assignment_id}/rating"
    with statements(db) as seen:
        step2 = client.get(posted.headers["location"])
    assert step2.status_code == 200 and "Step 2 of 2" in step2.text
    pages["rating"] = seen[:]
    writes = {page: [sql.split()[0] for sql in found if sql.split()[0] in ("INSERT", "UPDATE", "DELETE")]
              for page, found in pages.items()}
    assert writes == {"pairwise": [], "rating": []}, writes


def test_submit_statements_sqlite(tmp_path: Path) -> None:
    """On SQLite a submit reads assignment, question, track and draft in one query under the write lock (no
    re-read, no per-judgment inserts), and schedules no adaptive refresh on a track without adaptive assignment."""
    from stableval.portal.web.app import create_app

    app = create_app(f"sqlite:///{tmp_path / 'portal.db'}", admin_token="admin-token-for-tests")
    db = app.state.portal.db
    seed_track(db, tmp_path)
    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    assignment_id, html = claim(client)
    confirm = fill_steps(client, assignment_id, html)
    with statements(db) as seen:
        answer = client.post(f"/a/{assignment_id}/submit", data=submit_form(confirm.text), follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/progress?saved=1"
    # session check, load, confirmed count, quota, submission insert, judgments (one executemany), assignment
    # update, draft delete; no background refresh on a track without adaptive assignment (before: 2 more reads)
    kinds = [" ".join(sql.split()[:3]) for sql in seen]
    assert kinds == ["SELECT raters.disabled_at, raters.sessions_after",
                         "SELECT assignments.id, assignments.question_id,", "SELECT count(submissions.id) AS",
                         "SELECT question_quotas.extra FROM", "INSERT INTO submissions", "INSERT INTO judgments",
                         "UPDATE assignments SET", "DELETE FROM drafts"], kinds
    db.dispose()


def _rater(db: Database, note: str, specialty: str) -> int:
    rater_id = create_invites(db, [note])[0].rater_id
    assert save_profile(db, rater_id, name=note, email=f"{note}@example.org", specialty=specialty, subspecialty="",
                        years=3)
    return rater_id


def test_routing_statements_are_shared_but_bound_per_rater(portal: tuple[Any, Database], tmp_path: Path) -> None:
    """The availability and candidate statements are built once per shape (has subspecialty, has specialty,
    fallback) and cached; the rater's specialty and the track's k are bind parameters, so two cardiologist- and
    oncologist-shaped raters share one statement yet each is routed to their own specialty first."""
    _, db = portal
    frame = pd.concat([questions_frame(2, specialty="cardiology", prefix="c"),
                       questions_frame(2, specialty="oncology", prefix="o")], ignore_index=True)
    seed_track(db, tmp_path, frame=frame, k=1, fallback="specialty")
    cardiologist, oncologist = _rater(db, "card", "cardiology"), _rater(db, "onc", "oncology")
    assignment._candidate.cache_clear()
    assignment._progress_counts.cache_clear()
    claimed = {}
    for rater_id in (cardiologist, oncologist):
        found = claim_next(db, rater_id, "main")
        assert found.assignment_id is not None
        with db.reading() as session:
            claimed[rater_id] = session.scalar(select(Question.external_id).join(
                assignment.Assignment, assignment.Assignment.question_id == Question.id)
                .where(assignment.Assignment.id == found.assignment_id))
    assert claimed == {cardiologist: "c0", oncologist: "o0"}
    assert assignment._candidate.cache_info().currsize == 1  # one shape, two raters
    lines = {}
    with db.reading() as session:
        for rater_id in (cardiologist, oncologist):
            rater = session.get(Rater, rater_id)
            assert rater is not None
            lines[rater_id] = [(p.slug, p.remaining, p.submitted) for p in progress_for(session, rater)]
    # own open lease + the one other question of their specialty (k = 1: the other rater's lease fills theirs)
    assert lines == {cardiologist: [("main", 2, 0)], oncologist: [("main", 2, 0)]}
    assert assignment._progress_counts.cache_info().currsize == 1


def test_session_access_rule(portal: tuple[Any, Database]) -> None:
    """The per-request check reads two columns but applies the whole rule: unknown, disabled, signed out."""
    _, db = portal
    rater_id = _rater(db, "r", "cardiology")
    now_ms = int((utcnow() - timedelta(days=1)).timestamp() * 1000)
    assert session_access(db, rater_id, now_ms) == "ok"
    assert session_access(db, rater_id + 999, now_ms) == "unknown"
    end_rater_sessions(db, rater_id)
    assert session_access(db, rater_id, now_ms) == "ended"
    with db.writing() as session:
        found = session.get(Rater, rater_id)
        assert found is not None
        found.disabled_at = utcnow()
    assert session_access(db, rater_id, 2**62) == "disabled"
    assert access_state(None, None, 0) == "ok"


def test_escape_text_tells_markup_from_text() -> None:
    """The ``finalize`` hook escapes and defangs plain strings (short and long), passes an equal Markup and numbers
    unchanged."""
    assert escape_text("<b>x</b>") == Markup("&lt;b&gt;x&lt;/b&gt;")
    assert escape_text(Markup("<b>x</b>")) == Markup("<b>x</b>")
    assert escape_text("<b>x</b>") == Markup("&lt;b&gt;x&lt;/b&gt;")
    long = "<i>" + "a" * 1000 + " onload=1"
    assert escape_text(long) == Markup("&lt;i&gt;" + "a" * 1000 + " onload&#61;1")
    assert escape_text(7) == 7


def test_session_middleware_headers_and_cookie(portal: tuple[Any, Database]) -> None:
    """The plain-ASGI session middleware: security headers on every response (a 404 and a static file included),
    the cookie only when the session is new or changed, HttpOnly and SameSite=Lax."""
    app, _ = portal
    client = TestClient(app)
    first = client.get("/")
    cookie = first.headers["set-cookie"]
    assert "stableval_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Max-Age=7776000" in cookie
    again = client.get("/")
    assert "set-cookie" not in again.headers  # same session: not re-sent
    for response in (first, client.get("/no/such/page"), client.get("/static/portal.css")):
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert response.headers.get_list("x-frame-options") == ["DENY"]  # never twice
        assert response.headers["server-timing"].startswith("app;dur=")  # the app's own time (bench_portal.py)
    forged = TestClient(app)
    forged.cookies.set("stableval_session", cookie.split(";")[0].split("=", 1)[1][:-2] + "00")
    assert "set-cookie" in forged.get("/").headers  # a forged cookie gets a new session


def test_cpu_benchmark_in_process() -> None:
    """benchmarks/bench_portal.py --cpu: every rater page of the path is measured, with positive CPU times."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    try:
        import bench_portal  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    table = bench_portal.cpu_in_process(raters=2, items=1, k=2, admin_pages=1)
    pages = set(table["page"])
    for page in ("GET /progress", "POST /tracks/main/next", "GET /a/{id}/pairwise", "POST /a/{id}/pairwise",
                 "GET /a/{id}/rating", "POST /a/{id}/rating", "GET /a/{id}/confirm", "POST /a/{id}/submit",
                 "GET /admin/tracks/main", "ALL rater pages"):
        assert page in pages, pages
    assert (table["cpu_mean_ms"] > 0).all()
    assert int(table.loc[table["page"] == "POST /a/{id}/submit", "requests"].iloc[0]) == 2


def test_radio_options_are_escaped_checked_and_cached() -> None:
    """Step 1 and 2 print their radio groups from one cached, escaped fragment each (the rating page rendered
    ~1,100 template fragments, each escaped on its own: 9.4-9.5 ms in process before, 2.8-3.7 ms after)."""
    from stableval.portal.tasks.render import radio_options

    hostile = radio_options('x" onclick="alert(1)', (("1", "<b>1</b>"), ("na", "javascript:x")), "na")
    assert 'onclick="' not in hostile and "<b>" not in hostile and "javascript:" not in hostile
    assert 'value="na" id="x&#34; onclick&#61;&#34;alert(1)-na" checked>' in hostile
    assert hostile.count("checked") == 1
    options = (("a", "A is better"), ("b", "B is better"))
    assert radio_options("pw-k", options, None) is radio_options("pw-k", options, None)
    assert "checked" not in radio_options("pw-k", options, None)
