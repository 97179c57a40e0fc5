"""Tracks, imports and invites (:mod:`stableval.portal.admin.manage`): what a track may hold (each regression of
the security reviews says so in its docstring)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN
from sqlalchemy import select

from stableval.errors import InputError
from stableval.portal.admin.manage import change_track, create_track, import_questions, track_problems
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question, Track
from stableval.portal.work.question_queue import decide, list_proposals, propose_public


@pytest.mark.parametrize(("changes", "column", "problem"), [
    ({"title": "T" * 201}, "title", "title too long"),
    ({"criteria": [f"criterion {i}" for i in range(21)]}, "criteria", "too many criteria"),
    ({"criteria": ["c" * 65]}, "criteria", "criterion too long"),
    ({"criteria": ["a" + "!" * 200]}, "criteria", "criterion too long"),
    ({"task": "ddx", "conditions": [f"Condition {i}" for i in range(501)]}, "conditions", "too many conditions"),
])
def test_a_track_holds_bounded_sizes(changes: dict[str, Any], column: str, problem: str) -> None:
    """Regression (issue 26, security review 3, F19): nothing bounded the sizes at track creation: 20,000 ddx
    conditions (a 20,000-option list on every page), 500 criteria (500 radio groups per page) and titles of 5,000
    characters (a server error on PostgreSQL) were accepted, and a long criterion got a wrong message ("needs
    letters or digits"). Now a title has at most 200 characters, a track at most 20 criteria of at most 64
    characters (their key) and a ddx list at most 500 conditions, each refused with its own message."""
    track, problems = track_problems("t", **changes)
    assert track is None and [(e.column, e.problem) for e in problems][:1] == [(column, problem)]
    sized = {"title": "T" * 200, "criteria": [f"criterion {i}" for i in range(20)]}
    assert track_problems("t", **sized)[1] == []


def test_a_long_title_is_a_message_not_a_server_error(portal: tuple[Any, Any]) -> None:
    """Regression (issue 26, security review 3, F11/F19): a title of 201 characters answered 500 on PostgreSQL
    (``VARCHAR(200)``). Now the form shows the problem beside the field (422), on either database."""
    app, _ = portal
    admin = TestClient(app, raise_server_exceptions=False, headers={"Authorization": f"Bearer {ADMIN}"})
    answer = admin.post("/admin/tracks", data={"slug": "long", "title": "T" * 201},
                        files={"conditions_file": ("", b"")})
    assert answer.status_code == 422 and "title too long" in answer.text


def test_study_texts_are_stored_from_a_file_or_text_and_changed_later(db_url: str, tmp_path: Path) -> None:
    """Issue 31: a track's overview and rater instructions (Markdown) come from a file (the command line) or typed
    text (the forms), without control characters, at most 20,000 characters; the settings of ``CHANGEABLE`` (title,
    texts, public) change later, the others are refused by name; nothing changes on a refused change."""
    db = Database(db_url)
    db.upgrade()
    (tmp_path / "overview.md").write_text("# Aims\n\nRate **two** answers.\x00\n", encoding="utf-8")
    create_track(db, "main", overview=tmp_path / "overview.md", instructions="Read *both* answers.")
    track = _track(db, "main")
    assert (track.overview, track.instructions, track.public) == ("# Aims\n\nRate **two** answers.",
                                                                   "Read *both* answers.", False)
    change_track(db, "main", public=True, instructions="", title="Main study")
    track = _track(db, "main")
    assert (track.public, track.instructions, track.title, track.overview.startswith("# Aims")) == \
        (True, "", "Main study", True)
    change_track(db, "main", title="")
    assert _track(db, "main").title == "main"  # an empty title is the track's name again
    with pytest.raises(InputError, match="setting fixed once the track exists"):
        change_track(db, "main", k=5)
    with pytest.raises(InputError, match=r"text too long \(20,001 characters\)"):
        change_track(db, "main", overview="x" * 20_001, public=False)
    assert _track(db, "main").public is True  # refused as a whole
    with pytest.raises(InputError, match="cannot read the file"):
        change_track(db, "main", overview=tmp_path / "missing.md")
    (tmp_path / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        create_track(db, "other", instructions=tmp_path / "latin1.md")
    with pytest.raises(InputError, match="no such track"):
        change_track(db, "nope", public=True)
    with pytest.raises(InputError, match="public is not true or false"):
        create_track(db, "other", public="yes")  # type: ignore[arg-type]
    db.dispose()


def test_answers_attach_to_an_accepted_proposal_by_its_id(db_url: str, tmp_path: Path) -> None:
    """Issue 31: importing a question file whose id is ``proposed-<n>`` attaches the answers to proposal n: it must
    be an accepted proposal of that track (else the row is named and nothing is imported); the proposal is then
    ``imported`` and names its question."""
    db = Database(db_url)
    db.upgrade()
    create_track(db, "main", public=True)
    create_track(db, "other", public=True)
    accepted = propose_public(db, "main", prompt="Dose?", contact="a@example.org")
    pending = propose_public(db, "main", prompt="Pending?")
    elsewhere = propose_public(db, "other", prompt="Elsewhere?")
    for number in (accepted, elsewhere):
        decide(db, number, accept=True)

    def import_rows(*ids: str) -> int:
        path = tmp_path / "answers.csv"
        pd.DataFrame({"id": list(ids), "prompt": [f"Prompt {i}" for i in ids], "model_a": "A", "answer_a": "a",
                      "model_b": "B", "answer_b": "b"}).to_csv(path, index=False)
        return import_questions(db, "main", path)

    for ids, problem in (((f"proposed-{pending}",), f"proposal {pending} is pending, not accepted"),
                         (("q1", f"proposed-{elsewhere}"), f"no proposal {elsewhere} for track 'main'"),
                         (("proposed-999",), "no proposal 999 for track 'main'")):
        with pytest.raises(InputError, match=re.escape(problem)) as refused:
            import_rows(*ids)
        assert refused.value.row == len(ids) and refused.value.column == "id"
    assert list_proposals(db, status="imported") == []
    assert import_rows("q1", f"proposed-{accepted}") == 2
    (imported,) = list_proposals(db, status="imported")
    with db.reading() as session:
        question = session.scalars(select(Question).where(Question.external_id == f"proposed-{accepted}")).one()
    assert (imported.id, imported.question_id, imported.contact) == (accepted, question.id, "a@example.org")
    with pytest.raises(InputError, match="question id already in track"):
        import_rows(f"proposed-{accepted}")  # once only
    db.dispose()


def _track(db: Database, slug: str) -> Any:
    with db.reading() as session:
        return session.scalars(select(Track).where(Track.slug == slug)).one()
