"""The "submit a question" channel: a rater proposes, the admin accepts or rejects (with a reason); CSRF, size
limits, escaping, scope; the accepted proposals export in the import format and import as questions."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of, seed_track, start_rater
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.errors import InputError
from stableval.portal.admin.manage import create_invites, create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.work.question_queue import MAX_PENDING, MAX_PROMPT, decide, list_proposals, propose

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>'


def _admin(app: Any) -> TestClient:
    admin = TestClient(app)
    login = admin.get("/admin/login")
    admin.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    return admin


def test_rater_proposes_and_admin_reviews(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path)
    (invite,) = create_invites(db, ["dr"])
    rater = TestClient(app)
    start_rater(rater, invite.token)
    assert 'href="/propose"' in rater.get("/progress").text
    form = rater.get("/propose")
    assert form.status_code == 200 and '<option value="main" selected>' in form.text
    fields = {"csrf": csrf_of(form.text), "track": "main", "prompt": f"Dose of {HOSTILE}?", "reference": "5 mg",
              "specialty": "Cardiology"}
    assert rater.post("/propose", data={**fields, "csrf": "forged"}).status_code == 403  # CSRF
    sent = rater.post("/propose", data=fields)
    assert sent.status_code == 200 and "sent to the study team" in sent.text
    too_long = rater.post("/propose", data={**fields, "prompt": "x" * (MAX_PROMPT + 1)})
    assert too_long.status_code == 422 and "text too long (20,001 characters)" in too_long.text
    assert 'aria-invalid="true"' in too_long.text and "x" * 50 in too_long.text  # kept, not cut
    empty = rater.post("/propose", data={**fields, "prompt": "  "})
    assert empty.status_code == 422 and "Prompt: empty value" in empty.text
    assert rater.get("/admin/proposals").status_code == 401  # raters are not admins

    admin = _admin(app)
    queue = admin.get("/admin/proposals")
    assert queue.status_code == 200 and "Waiting for review (1)" in queue.text
    assert "<script>alert(1)" not in queue.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in queue.text
    (pending,) = list_proposals(db)
    assert pending.prompt == f"Dose of {HOSTILE}?" and pending.specialty == "cardiology"  # stored as typed
    no_reason = admin.post(f"/admin/proposals/{pending.id}/reject", data={"csrf": csrf_of(queue.text)})
    assert no_reason.status_code == 422 and "reason" in no_reason.text
    assert admin.post(f"/admin/proposals/{pending.id}/accept", data={"csrf": "forged"}).status_code == 403
    accepted = admin.post(f"/admin/proposals/{pending.id}/accept", data={"csrf": csrf_of(queue.text)})
    assert accepted.status_code == 200 and f"Proposal {pending.id} accepted" in accepted.text
    again = admin.post(f"/admin/proposals/{pending.id}/reject", data={"csrf": csrf_of(queue.text), "reason": "no"})
    assert again.status_code == 422 and "already decided" in again.text
    assert list_proposals(db) == [] and list_proposals(db, status="accepted")[0].id == pending.id


def test_reject_with_reason_scope_and_limits(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "open")
    create_track(db, "cardio", specialties="cardiology")
    (scoped,) = create_invites(db, ["scoped"], tracks=["open"])
    with pytest.raises(InputError, match=r"no such track.*one of your tracks"):
        propose(db, scoped.rater_id, "cardio", prompt="Q?")  # outside the invite's scope
    (free,) = create_invites(db, ["free"])
    with pytest.raises(InputError, match=r"specialty not on the track's list.*got 'neurology'"):
        propose(db, free.rater_id, "cardio", prompt="Q?", specialty="Neurology")
    first = propose(db, free.rater_id, "cardio", prompt="Q?", specialty="cardiology")
    assert decide(db, first, accept=False, reason="Already covered by q12") == "cardio"
    (rejected,) = list_proposals(db, "cardio", status="rejected")
    assert rejected.reason == "Already covered by q12"
    with pytest.raises(InputError, match="empty value"):
        decide(db, propose(db, free.rater_id, "open", prompt="Q2?"), accept=False, reason=" ")
    for number in range(MAX_PENDING - 1):
        propose(db, free.rater_id, "open", prompt=f"Q{number}?")
    with pytest.raises(InputError, match="too many proposals waiting"):
        propose(db, free.rater_id, "open", prompt="one more?")
    with pytest.raises(InputError, match="unknown status"):
        list_proposals(db, status="maybe")
    db.dispose()


def test_accepted_proposals_export_for_import_and_cli(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "main")
    (invite,) = create_invites(db, ["dr"])
    keep = propose(db, invite.rater_id, "main", prompt="=1+1 is a formula?", reference="No")
    drop = propose(db, invite.rater_id, "main", prompt="Off topic")
    runner = CliRunner()
    listed = runner.invoke(cli_app, ["portal", "proposals", "main", "--database-url", db.url])
    assert listed.exit_code == 0 and listed.stdout.count("proposed-") == 2
    assert runner.invoke(cli_app, ["portal", "proposal", str(keep), "accept", "--database-url", db.url]).exit_code \
        == 0
    refused = runner.invoke(cli_app, ["portal", "proposal", str(drop), "reject", "--database-url", db.url])
    assert refused.exit_code == 2 and "reason" in refused.output  # usage error: no reason
    assert runner.invoke(cli_app, ["portal", "proposal", str(drop), "reject", "--reason", "off topic",
                                   "--database-url", db.url]).exit_code == 0
    again = runner.invoke(cli_app, ["portal", "proposal", str(drop), "accept", "--database-url", db.url])
    assert again.exit_code == 1 and "already decided" in again.output
    path = tmp_path / "accepted.csv"
    done = runner.invoke(cli_app, ["portal", "proposals", "main", "--status", "accepted", "-o", str(path),
                                   "--database-url", db.url])
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(path, keep_default_na=False)
    assert frame["id"].tolist() == [f"proposed-{keep}"] and frame["prompt"].tolist() == ["'=1+1 is a formula?"]
    frame["prompt"] = frame["prompt"].str.removeprefix("'")
    frame[["model_a", "answer_a", "model_b", "answer_b"]] = ["TxAgent", "No.", "GPT-4o", "Yes."]
    frame.to_csv(path, index=False)
    assert import_questions(db, "main", path) == 1  # the proposal is now a question of the track
    bad = runner.invoke(cli_app, ["portal", "proposals", "--status", "maybe", "--database-url", db.url])
    assert bad.exit_code == 2
    assert io.StringIO(runner.invoke(cli_app, ["portal", "proposals", "--status", "all", "--database-url",
                                               db.url]).stdout).read().count("proposed-") == 2
    db.dispose()
