"""Issue 31: the landing page's public tracks and anyone's "Submit a question" (CSRF, rate limit, body-size cap,
sizes, the moderation queue, a contact only the study team sees), and the study texts on the rater's pages (the
overview on the progress page, the instructions before the first question and on every question page), rendered
as safe Markdown (:mod:`stableval.portal.web.rater_routes`)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of, invite_tokens, seed_track, start_rater

from stableval.errors import InputError
from stableval.portal.admin.manage import create_track
from stableval.portal.store.db import Database
from stableval.portal.web.common import MAX_FORM_BYTES, PROPOSE_RATE
from stableval.portal.work import question_queue
from stableval.portal.work.question_queue import MAX_CONTACT, MAX_PROMPT, list_proposals

HOSTILE = ('<script>alert(1)</script><img src=x onerror=alert(2)> [click](javascript:alert(3)) '
           '[ok](https://example.org/aims)')


def _no_active_markup(page: str) -> None:
    assert "<script>alert" not in page and "<img" not in page and 'href="javascript' not in page
    assert "onerror=alert" not in page


def test_anyone_submits_a_question_for_a_public_track(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    anyone = TestClient(app)
    assert "Submit a question" not in anyone.get("/").text and anyone.get("/submit").status_code == 404
    seed_track(db, tmp_path, "open", public=True, overview=f"## Aims\n\nCompare **two** models. {HOSTILE}",
               specialties="cardiology,neurology")
    create_track(db, "hidden", title="Hidden study", overview="Secret aims")
    home = anyone.get("/")
    assert home.status_code == 200 and "<h2>Aims</h2>" in home.text and "<strong>two</strong>" in home.text
    _no_active_markup(home.text)
    assert '<a href="https://example.org/aims" rel="noopener noreferrer nofollow">ok</a>' in home.text
    assert "Hidden study" not in home.text and "Secret aims" not in home.text  # not public: not listed
    form = anyone.get("/submit?track=open")
    assert form.status_code == 200 and '<option value="open" selected>' in form.text and "Hidden study" not in form.text
    fields = {"csrf": csrf_of(form.text), "track": "open", "prompt": f"Dose of {HOSTILE}?", "reference": "",
              "specialty": "Cardiology", "contact": "curious@example.org"}
    assert anyone.post("/submit", data={**fields, "csrf": "forged"}).status_code == 403  # CSRF
    assert anyone.post("/submit", data={k: v for k, v in fields.items() if k != "csrf"}).status_code == 403
    sent = anyone.post("/submit", data=fields)
    assert sent.status_code == 200 and "sent to the study team for review" in sent.text
    for changes, problem in (({"track": "hidden"}, "Track: no such track"),
                             ({"prompt": "x" * (MAX_PROMPT + 1)}, "text too long (20,001 characters)"),
                             ({"contact": "c" * (MAX_CONTACT + 1)}, "Contact: text too long"),
                             ({"specialty": "dermatology"}, "specialty not on the track's list")):
        refused = anyone.post("/submit", data={**fields, **changes})
        assert refused.status_code == 422 and problem in html.unescape(refused.text), changes
    (proposal,) = list_proposals(db)
    assert (proposal.rater_id, proposal.proposer, proposal.contact, proposal.specialty) == \
        (None, "public", "curious@example.org", "cardiology")
    admin = TestClient(app, headers={"Authorization": f"Bearer {ADMIN}"})
    queue = admin.get("/admin/proposals").text
    assert "by public" in queue and "curious@example.org" in queue
    _no_active_markup(queue)
    assert anyone.get("/admin/proposals").status_code == 401

    # raters never see the contact (nor anyone's proposals): their pages after the proposal is a question
    (token,) = invite_tokens(db, 1)
    rater = TestClient(app)
    start_rater(rater, token)
    for url in ("/progress", "/propose"):
        assert "curious@example.org" not in rater.get(url).text


def test_submitting_is_rate_limited_and_size_capped(portal: tuple[Any, Database], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    app, db = portal
    create_track(db, "open", public=True)
    anyone = TestClient(app)
    csrf = csrf_of(anyone.get("/submit").text)
    huge = anyone.post("/submit", content=b"csrf=" + b"x" * (MAX_FORM_BYTES + 1),
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert huge.status_code == 413
    upload = anyone.post("/submit", data={"csrf": csrf, "track": "open"}, files={"f": ("a.txt", b"x")})
    assert upload.status_code == 415
    answers = [anyone.post("/submit", data={"csrf": csrf, "track": "open", "prompt": f"Q{i}?"}).status_code
               for i in range(PROPOSE_RATE + 1)]
    assert answers == [200] * PROPOSE_RATE + [429]
    assert len(list_proposals(db)) == PROPOSE_RATE
    monkeypatch.setattr(question_queue, "MAX_PUBLIC_PENDING", PROPOSE_RATE)  # the queue's own cap per track
    with pytest.raises(InputError, match="too many proposals waiting for review"):
        question_queue.propose_public(db, "open", prompt="one more?")


def test_study_texts_on_the_raters_pages(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path, overview=f"Why: **safety**. {HOSTILE}", instructions=f"1. Read both.\n2. Rate. {HOSTILE}")
    (token,) = invite_tokens(db, 1)
    rater = TestClient(app)
    start_rater(rater, token)
    progress = rater.get("/progress")
    assert "About this study" in progress.text and "<strong>safety</strong>" in progress.text
    _no_active_markup(progress.text)
    assert 'href="/tracks/main/start"' in progress.text and 'action="/tracks/main/next"' not in progress.text
    start = rater.get("/tracks/main/start")
    assert start.status_code == 200 and "<li>Read both.</li>" in start.text and 'action="/tracks/main/next"' in \
        start.text
    _no_active_markup(start.text)
    question = rater.post("/tracks/main/next", data={"csrf": csrf_of(start.text)})
    assert "Step 1 of 2" in question.text and "Instructions for raters" in question.text
    _no_active_markup(question.text)
    again = rater.get("/progress")  # started: the button claims directly
    assert 'action="/tracks/main/next"' in again.text and 'href="/tracks/main/start"' not in again.text
    assert rater.get("/tracks/nope/start").status_code == 404
    assert TestClient(app).get("/tracks/main/start").status_code == 401


def test_the_admin_edits_the_study_texts(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    create_track(db, "main")
    admin = TestClient(app)
    admin.post("/admin/login", data={"csrf": csrf_of(admin.get("/admin/login").text), "token": ADMIN})
    assert 'href="/admin/tracks/main/about"' in admin.get("/admin/tracks/main").text
    form = admin.get("/admin/tracks/main/about")
    assert form.status_code == 200 and 'id="overview"' in form.text and 'type="checkbox" id="public"' in form.text
    fields = {"csrf": csrf_of(form.text), "title": "Main study", "overview": f"**Aims** {HOSTILE}",
              "instructions": "Be brief.", "public": "on"}
    assert admin.post("/admin/tracks/main/about", data={**fields, "csrf": "forged"}).status_code == 403
    saved = admin.post("/admin/tracks/main/about", data=fields)
    assert saved.status_code == 200 and "Study text saved" in saved.text and "<strong>Aims</strong>" in saved.text
    _no_active_markup(saved.text)
    assert "Main study" in TestClient(app).get("/").text  # public now: on the landing page
    too_long = admin.post("/admin/tracks/main/about", data={**fields, "instructions": "x" * 20_001})
    assert too_long.status_code == 422 and "text too long" in too_long.text and 'aria-invalid="true"' in too_long.text
    private = admin.post("/admin/tracks/main/about", data={k: v for k, v in fields.items() if k != "public"})
    assert private.status_code == 200 and "Main study" not in TestClient(app).get("/").text
    assert admin.get("/admin/tracks/nope/about").status_code == 404
    assert admin.post("/admin/tracks/nope/about", data=fields).status_code == 404
    created = admin.post("/admin/tracks", data={"csrf": fields["csrf"], "slug": "second", "overview": "# Second",
                                                "instructions": "Be kind.", "public": "on"},
                         files={"conditions_file": ("", b"")})  # the "New track" form takes them too
    assert created.status_code == 200 and "Track created" in created.text
    assert "<h1>Second</h1>" in TestClient(app).get("/").text
    outsider = TestClient(app)
    assert outsider.get("/admin/tracks/main/about").status_code == 401
    assert outsider.post("/admin/tracks/main/about", data=fields).status_code in (401, 403)
