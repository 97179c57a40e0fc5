"""Invites scoped to tracks, a controlled specialty list per track (profile select, import check), and the
track's routing fallback (specialty / general / any)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of, profiled_raters, questions_frame, seed_track, start_rater
from sqlalchemy import select
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.errors import InputError
from stableval.portal.admin.manage import create_invites, create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Rater
from stableval.portal.work.assignment import claim_next


def _admin(app: Any) -> TestClient:
    admin = TestClient(app)
    login = admin.get("/admin/login")
    admin.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    return admin


def test_scoped_invite_sees_and_claims_only_its_tracks(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path, "alpha")
    seed_track(db, tmp_path, "beta", frame=questions_frame(2, prefix="b"))
    (scoped,) = create_invites(db, ["scoped"], tracks=["beta"])
    (everywhere,) = create_invites(db, ["all"])
    client = TestClient(app)
    start_rater(client, scoped.token)
    progress = client.get("/progress").text
    assert "/tracks/beta/next" in progress and "/tracks/alpha/next" not in progress
    refused = client.post("/tracks/alpha/next", data={"csrf": csrf_of(progress)})
    assert refused.status_code == 404  # out of the invite's scope: as if the track did not exist
    assert claim_next(db, scoped.rater_id, "alpha").reason == "unknown-track"
    assert claim_next(db, scoped.rater_id, "beta").assignment_id is not None
    other = TestClient(app)
    start_rater(other, everywhere.token)
    assert {"/tracks/alpha/next", "/tracks/beta/next"} <= set(re.findall(r"/tracks/\w+/next", other.get(
        "/progress").text))
    with pytest.raises(InputError, match=r"no such track.*got 'gamma'.*allowed: alpha, beta"):
        create_invites(db, ["x"], tracks=["beta", "gamma"])


def test_admin_and_cli_create_scoped_invites(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path, "alpha")
    seed_track(db, tmp_path, "beta", frame=questions_frame(2, prefix="b"))
    admin = _admin(app)
    index = admin.get("/admin")
    assert 'name="tracks" value="alpha"' in index.text
    made = admin.post("/admin/invites", data={"csrf": csrf_of(index.text), "notes": "dr-x\ndr-y",
                                              "tracks": ["alpha"]})
    assert made.status_code == 200 and made.text.count("/i/") == 2
    with db.reading() as session:
        scopes = {r.note: r.tracks for r in session.scalars(select(Rater))}
    alpha_id = 1
    assert scopes == {"dr-x": [alpha_id], "dr-y": [alpha_id]}
    assert "<td>alpha</td>" in admin.get("/admin").text  # the raters table shows the scope
    bad = admin.post("/admin/invites", data={"csrf": csrf_of(index.text), "notes": "z", "tracks": ["nope"]})
    assert bad.status_code == 422 and "no such track" in bad.text

    result = CliRunner().invoke(cli_app, ["portal", "invites", "--base-url", "https://p.example", "--count", "1",
                                          "--track", "beta", "--database-url", db.url])
    assert result.exit_code == 0, result.output
    with db.reading() as session:
        assert session.scalars(select(Rater.tracks).order_by(Rater.id.desc())).first() == [2]
    wrong = CliRunner().invoke(cli_app, ["portal", "invites", "--base-url", "https://p.example", "--count", "1",
                                         "--track", "nope", "--database-url", db.url])
    assert wrong.exit_code == 1 and "no such track" in wrong.output


def test_specialty_list_drives_the_profile_form_and_the_import(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    create_track(db, "cardio", specialties=" Cardiology, oncology ,cardiology")
    (invite,) = create_invites(db, ["x"])
    client = TestClient(app)
    form = client.get(f"/i/{invite.token}")
    assert '<select id="specialty" name="specialty"' in form.text
    assert re.findall(r'<option value="(\w+)"', form.text) == ["cardiology", "oncology"]
    fields = {"csrf": csrf_of(form.text), "name": "Dr A", "email": "a@example.org", "subspecialty": "", "years": "3"}
    free_text = client.post("/profile", data={**fields, "specialty": "Cardiologist"})
    assert free_text.status_code == 422 and "Choose your specialty from the list" in free_text.text
    assert 'aria-invalid="true"' in free_text.text
    assert client.post("/profile", data={**fields, "specialty": "Cardiology"}).status_code == 200
    with db.reading() as session:
        assert session.get(Rater, invite.rater_id).specialty == "cardiology"

    path = tmp_path / "q.csv"
    frame = questions_frame(3, specialty="CARDIOLOGY")
    frame.loc[2, "specialty"] = "Neurology"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"q\.csv, row 3, column 'specialty'.*not on track 'cardio'.*got "
                                         r"'neurology'.*allowed: cardiology, oncology or empty"):
        import_questions(db, "cardio", path)
    frame.loc[2, "specialty"] = ""
    frame.to_csv(path, index=False)
    assert import_questions(db, "cardio", path) == 3  # case and spaces do not matter; empty = general pool

    create_track(db, "free")  # no list anywhere in scope: free text
    (second,) = create_invites(db, ["y"], tracks=["free"])
    assert '<input id="specialty" name="specialty"' in TestClient(app).get(f"/i/{second.token}").text


def _order(db: Database, rater: int, slug: str) -> list[str]:
    """Every question the rater is offered, in order (each claim is released, so the next claim moves on)."""
    seen = []
    for _ in range(20):
        claim = claim_next(db, rater, slug)
        if claim.assignment_id is None:
            return seen
        with db.writing() as session:
            assignment = session.get(Assignment, claim.assignment_id)
            assignment.status = "released"
            seen.append(session.get(Question, assignment.question_id).external_id)
    raise AssertionError("more claims than questions")


def test_every_task_type_import_keeps_to_the_specialty_list(tmp_path: Path) -> None:
    """Regression (issue 25): only pairwise imports checked a track's specialty list; a single, mcq, ddx or
    rank-documents file could bring specialties no rater can pick (failed on main at ab34b89: imported 1)."""
    from stableval.portal.tasks.registry import TASKS

    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    for number, (name, task) in enumerate(TASKS.items()):
        slug = f"t{number}"
        create_track(db, slug, task=name, specialties="cardiology", **task.example_settings)
        path = tmp_path / f"{slug}.jsonl"
        path.write_text(json.dumps({**task.example_question(0), "specialty": "Oncology"}) + "\n")
        with pytest.raises(InputError, match=rf"row 1, column 'specialty'.*not on track '{slug}'.*got 'oncology'"):
            import_questions(db, slug, path)
        path.write_text(json.dumps({**task.example_question(0), "specialty": " Cardiology"}) + "\n")
        assert import_questions(db, slug, path) == 1, name
    db.dispose()


@pytest.mark.parametrize(("fallback", "expected"), [
    ("specialty", ["c0", "c1"]),
    ("general", ["c0", "c1", "g0", "g1"]),
    ("any", ["c0", "c1", "g0", "g1", "o0", "o1"]),
])
def test_fallback_when_no_question_fits_the_profile(tmp_path: Path, fallback: str, expected: list[str]) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    frame = pd.concat([questions_frame(2, specialty="oncology", prefix="o"), questions_frame(2, prefix="g"),
                       questions_frame(2, specialty="cardiology", prefix="c")], ignore_index=True)
    seed_track(db, tmp_path, frame=frame, fallback=fallback)
    (cardiologist,) = profiled_raters(db, 1)
    assert _order(db, cardiologist, "main") == expected
    with pytest.raises(InputError, match=r"unknown fallback.*allowed: specialty, general, any"):
        create_track(db, "other", fallback="nearby")
    db.dispose()
