"""Editing a track's routing after creation — its specialty list and fallback — from Python, the command line
(``stableval portal routing``) and the admin's routing page; a list that would strand questions is refused, and
raters off a new list choose again."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of, profiled_raters, questions_frame, seed_track
from sqlalchemy import select, update
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.errors import InputError
from stableval.portal.admin.manage import create_track
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Rater, Track
from stableval.portal.web.app import create_app
from stableval.portal.work.assignment import Claim, claim_next
from stableval.portal.work.question_queue import propose
from stableval.portal.work.scope import routing_of, set_routing


@pytest.fixture
def db(tmp_path: Path) -> Any:
    database = Database(f"sqlite:///{tmp_path / 'p.db'}")
    database.upgrade()
    yield database
    database.dispose()


def _seed(db: Database, tmp_path: Path, **options: Any) -> None:
    """Track 'main': two cardiology, two untagged and two oncology questions."""
    frame = pd.concat([questions_frame(2, specialty="cardiology", prefix="c"), questions_frame(2, prefix="g"),
                       questions_frame(2, specialty="oncology", prefix="o")], ignore_index=True)
    seed_track(db, tmp_path, frame=frame, **options)


def _claimed(db: Database, rater: int, slug: str = "main") -> str:
    """Claim the rater's next question, release it, and return its id ('' when nothing is offered)."""
    claim = claim_next(db, rater, slug)
    if claim.assignment_id is None:
        return ""
    with db.writing() as session:
        assignment = session.get_one(Assignment, claim.assignment_id)
        assignment.status = "released"
        return session.get_one(Question, assignment.question_id).external_id


def test_list_may_grow_or_go_but_not_strand_questions(db: Database, tmp_path: Path) -> None:
    _seed(db, tmp_path, specialties="cardiology,oncology,neurology")
    grown = set_routing(db, "main", specialties="Cardiology, oncology, neurology, Dermatology", fallback="general")
    assert grown.specialties == ["cardiology", "oncology", "neurology", "dermatology"]
    assert set_routing(db, "main", specialties="cardiology,oncology", fallback="general").specialties == \
        ["cardiology", "oncology"]  # neurology and dermatology were unused
    with pytest.raises(InputError, match=r"column 'specialties': specialty 'oncology' is still used in track "
                                         r"'main': 2 questions \(e\.g\. o0\).*got 'oncology'; allowed: a list that "
                                         r"keeps every specialty in use, e\.g\. cardiology, oncology"):
        set_routing(db, "main", specialties="cardiology", fallback="any")
    assert routing_of(db, "main").fallback == "general"  # a refused change changes nothing
    with db.writing() as session:  # a retired question counts: it may be restored
        for question in session.scalars(select(Question).where(Question.specialty == "oncology")):
            question.retired = True
    with pytest.raises(InputError, match="'oncology' is still used"):
        set_routing(db, "main", specialties="cardiology", fallback="general")
    dropped = set_routing(db, "main", specialties=None, fallback="specialty")  # free text again: always fine
    assert (dropped.specialties, dropped.fallback) == (None, "specialty")
    with pytest.raises(InputError, match=r"specialty 'cardiology' is still used.*\(and 1 more specialty in use: "
                                         r"oncology\)"):  # introducing a list must cover what is there
        set_routing(db, "main", specialties="neurology", fallback="general")
    with pytest.raises(InputError, match=r"unknown fallback.*got 'nearby'"):
        set_routing(db, "main", specialties=None, fallback="nearby")
    with pytest.raises(InputError, match=r"no such track.*got 'nope'; allowed: main"):
        set_routing(db, "nope", specialties=None, fallback="any")


def test_raters_and_proposals_off_a_new_list_do_not_block_it(db: Database, tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F17): a list leaving out a specialty typed by a rater who worked in
    the track, or by a pending proposal, was refused, so one rater's "Cardiologist" (the very variant a list
    exists to remove), or a proposal with the specialty "my own", kept the admin from introducing a list. Now only
    the track's questions hold a specialty (they would be stranded); a rater whose specialty is off the lists of
    their tracks is asked to choose again at their next claim (their open question stays theirs), and a pending
    proposal's specialty is checked when it is imported. (Until this change both were refused: a rater's and a
    proposal's specialty counted as in use.)"""
    seed_track(db, tmp_path, frame=pd.concat([questions_frame(2), questions_frame(1, specialty="cardiology",
                                                                                  prefix="c")], ignore_index=True))
    create_track(db, "other")
    idle, worker = profiled_raters(db, 2)  # both cardiologists
    with db.writing() as session:
        session.execute(update(Rater).where(Rater.id == worker).values(specialty="cardiologist"))
    held = claim_next(db, worker, "main").assignment_id
    assert held is not None
    assert routing_of(db, "main").in_use == {"cardiologist": "1 rater (rater-2)", "cardiology": "1 question (c0)"}
    assert set_routing(db, "main", specialties="cardiology", fallback="general").specialties == ["cardiology"]
    assert claim_next(db, worker, "main").assignment_id == held  # the open question stays theirs
    with db.writing() as session:
        session.get_one(Assignment, held).status = "done"
    assert claim_next(db, worker, "main") == Claim(None, "profile")  # then: choose again from the list
    with db.writing() as session:
        session.execute(update(Rater).where(Rater.id == worker).values(specialty="cardiology"))
    assert claim_next(db, worker, "main").assignment_id not in (None, held)
    proposal = propose(db, idle, "other", prompt="A new question?", specialty="my own")
    assert routing_of(db, "other").in_use == {"my own": f"1 pending proposal (proposal {proposal})"}
    assert set_routing(db, "other", specialties="neurology", fallback="general").specialties == ["neurology"]
    with pytest.raises(InputError, match=r"'cardiology' is still used in track 'main': 1 question \(c0\)"):
        set_routing(db, "main", specialties="oncology", fallback="general")  # questions still hold theirs


def test_a_rater_off_the_list_is_asked_to_choose_again(db: Database, tmp_path: Path) -> None:
    """Issue 26 (security review 3, F17): the claim of a rater whose specialty is off the lists of their tracks
    leads to the profile form, which says why and offers the list."""
    seed_track(db, tmp_path, frame=questions_frame(2))
    app = create_app(db.url, admin_token=ADMIN, migrate=False)
    from portal_helpers import invite_tokens, start_rater

    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0], specialty="Cardiologist")
    set_routing(db, "main", specialties="cardiology", fallback="general")
    asked = client.post("/tracks/main/next", data={"csrf": csrf_of(client.get("/progress").text)})
    assert str(asked.url).endswith("/profile?choose=1") and "choose your specialty from it" in asked.text
    assert '<option value="cardiology"' in asked.text
    app.state.portal.db.dispose()


def test_a_new_fallback_applies_from_the_next_claim(db: Database, tmp_path: Path) -> None:
    _seed(db, tmp_path, fallback="specialty")
    (cardiologist,) = profiled_raters(db, 1)
    assert [_claimed(db, cardiologist) for _ in range(2)] == ["c0", "c1"]
    with db.writing() as session:  # both cardiology questions have their k ratings: the specialty is used up
        session.execute(update(Question).where(Question.specialty == "cardiology").values(retired=True))
    assert _claimed(db, cardiologist) == ""  # fallback 'specialty': nothing else
    set_routing(db, "main", specialties=None, fallback="any")
    assert _claimed(db, cardiologist) == "g0"


def test_cli_shows_changes_and_refuses(db: Database, tmp_path: Path) -> None:
    _seed(db, tmp_path, specialties="cardiology,oncology")
    url = db.url
    shown = CliRunner().invoke(cli_app, ["portal", "routing", "main", "--database-url", url])
    assert shown.exit_code == 0 and shown.stdout == "specialties: cardiology, oncology\nfallback: general\n"
    changed = CliRunner().invoke(cli_app, ["portal", "routing", "main", "--fallback", "any", "--database-url", url])
    assert changed.exit_code == 0 and changed.stdout.endswith("fallback: any\n"), changed.output
    assert routing_of(db, "main").specialties == ["cardiology", "oncology"]  # only the fallback changed
    refused = CliRunner().invoke(cli_app, ["portal", "routing", "main", "--specialties", "cardiology",
                                           "--database-url", url])
    assert refused.exit_code == 1 and "specialty 'oncology' is still used in track 'main'" in refused.output
    both = CliRunner().invoke(cli_app, ["portal", "routing", "main", "--specialties", "x", "--no-specialty-list",
                                        "--database-url", url])
    assert both.exit_code == 2 and "not both" in both.output
    free = CliRunner().invoke(cli_app, ["portal", "routing", "main", "--no-specialty-list", "--database-url", url])
    assert free.exit_code == 0 and "specialties: (no list: free text)" in free.stdout
    missing = CliRunner().invoke(cli_app, ["portal", "routing", "nope", "--database-url", url])
    assert missing.exit_code == 1 and "no such track" in missing.output


def test_admin_routing_page(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    _seed(db, tmp_path, specialties="cardiology,oncology")
    admin = TestClient(app)
    admin.post("/admin/login", data={"csrf": csrf_of(admin.get("/admin/login").text), "token": ADMIN})
    assert 'href="/admin/tracks/main/routing"' in admin.get("/admin/tracks/main").text
    page = admin.get("/admin/tracks/main/routing")
    assert page.status_code == 200 and "2 questions (e.g. c0)" in page.text and "cardiology, oncology</textarea>" \
        in page.text
    csrf = csrf_of(page.text)
    refused = admin.post("/admin/tracks/main/routing", data={"csrf": csrf, "specialties": "oncology",
                                                             "fallback": "any"})
    assert refused.status_code == 422 and '<a href="#specialties">' in refused.text
    assert re.search(r'id="specialties"[^>]*aria-invalid="true" aria-describedby="err-specialties"', refused.text)
    assert "Specialty list: specialty &#39;cardiology&#39; is still used" in refused.text
    assert ">oncology</textarea>" in refused.text  # what was typed is kept
    saved = admin.post("/admin/tracks/main/routing", data={"csrf": csrf, "specialties": "oncology, cardiology, ENT",
                                                           "fallback": "any"}, follow_redirects=False)
    assert saved.status_code == 303
    with db.reading() as session:
        track = session.scalars(select(Track)).one()
        assert (track.specialties, track.fallback) == (["oncology", "cardiology", "ent"], "any")
    assert admin.post("/admin/tracks/main/routing", data={"specialties": "", "fallback": "any"}).status_code == 403
    assert TestClient(app).get("/admin/tracks/main/routing").status_code == 401
    assert admin.get("/admin/tracks/nope/routing").status_code == 404
    assert admin.post("/admin/tracks/nope/routing", data={"csrf": csrf, "fallback": "any"}).status_code == 404
