"""What the routes share (:mod:`stableval.portal.web.common`): forms read with their text made storable (each
regression of the security reviews says so in its docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from portal_helpers import (
    claim,
    csrf_of,
    fill_steps,
    invite_tokens,
    pairwise_form,
    row_count,
    seed_track,
    start_rater,
    submit_form,
)
from sqlalchemy import select

from stableval.portal.store.models import Judgment, QuestionProposal, Rater


def test_control_characters_in_typed_text_never_reach_the_database(portal: tuple[Any, Any], tmp_path: Path
                                                                    ) -> None:
    """Regression (issue 26, security review 3, F11): PostgreSQL cannot store NUL, so a NUL in a profile, a proposal
    or a reason answered 500 (a reason's was saved in the draft, and then every submit of the question failed).
    Now every form's text loses its control characters (not tab and line breaks) before anything reads it."""
    app, db = portal
    seed_track(db, tmp_path)
    client = TestClient(app, raise_server_exceptions=False)
    page = client.get(f"/i/{invite_tokens(db, 1)[0]}")
    profile = client.post("/profile", data={"csrf": csrf_of(page.text), "name": "Dr\x00 Nul\x07", "email":
                                            "n@example.org", "specialty": "cardio\x00logy", "subspecialty": "",
                                            "years": "3"})
    assert profile.status_code == 200, profile.text
    proposal = client.post("/propose", data={"csrf": csrf_of(profile.text), "track": "main",
                                             "prompt": "why\x00?\tnow\r\nthen\x1b"})
    assert proposal.status_code == 200, proposal.text
    assignment, html = claim(client)
    confirm = fill_steps(client, assignment, html, **{"why-accuracy": "x\x00y\x0b"})
    assert client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text)).status_code == 200
    with db.reading() as session:
        assert session.scalars(select(Rater.name)).all() == ["Dr Nul"]
        assert session.scalars(select(Rater.specialty)).all() == ["cardiology"]
        assert session.scalars(select(QuestionProposal.prompt)).all() == ["why?\tnow\r\nthen"]
        assert "xy" in session.scalars(select(Judgment.reason)).all()
    assert row_count(db, Judgment) == 5
    assert client.post(f"/a/{assignment}/draft", data={**pairwise_form(csrf_of(confirm.text)), "step": "pairwise",
                                                       "flag_reason": "\x00"}).status_code == 409  # done: refused


def _cookie(app: Any, **session: Any) -> dict[str, str]:
    from stableval.portal.web.common import COOKIE

    return {COOKIE: app.state.portal.signer.dumps({"nonce": "n" * 32, **session})}


def test_sessions_expire_on_the_server(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F21): sessions never expired on the server (90-day cookies; an admin
    session's issue time was never checked), so a copied admin cookie stayed valid for 90 days. Now an admin
    session ends 12 hours after sign-in, and a rater session after 30 days without use (each use renews it at
    most once a day, keeping its CSRF token)."""
    import time

    from stableval.portal.web.common import ADMIN_SESSION_HOURS, RATER_IDLE_DAYS

    app, db = portal
    seed_track(db, tmp_path)
    now = int(time.time() * 1000)
    hour, day = 3600 * 1000, 24 * 3600 * 1000
    tag = app.state.portal.admin_tag
    fresh = TestClient(app, cookies=_cookie(app, admin=tag, sid="s" * 22, iat=now - (ADMIN_SESSION_HOURS - 1) * hour))
    assert fresh.get("/admin").status_code == 200
    stale = TestClient(app, cookies=_cookie(app, admin=tag, sid="s" * 22, iat=now - (ADMIN_SESSION_HOURS + 1) * hour))
    assert stale.get("/admin").status_code == 401
    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    with db.reading() as session:
        rater = session.scalars(select(Rater.id)).one()
    idle = TestClient(app, cookies=_cookie(app, rater=rater, iat=now - (RATER_IDLE_DAYS + 1) * day))
    assert idle.get("/progress").status_code == 401 and "expired" in idle.get("/progress").text
    used = TestClient(app, cookies=_cookie(app, rater=rater, iat=now - 2 * day))
    page = used.get("/progress")
    assert page.status_code == 200 and "set-cookie" in page.headers  # renewed
    value = page.headers["set-cookie"].split("stableval_session=", 1)[1].split(";", 1)[0].strip('"')
    renewed = app.state.portal.signer.loads(value)
    assert renewed["nonce"] == "n" * 32 and renewed["iat"] >= now  # same CSRF token, new time
    assert "set-cookie" not in used.get("/progress").headers  # at most once a day
