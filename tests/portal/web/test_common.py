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
