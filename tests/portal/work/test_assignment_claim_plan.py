"""SQLite claims choose their question outside the write lock and re-check it under the lock
(:func:`stableval.portal.work.assignment.claim_next`): same question as the claim made wholly under the lock, and a
fallback to that claim when the plan went stale (the question filled up, or a parallel click of the same rater)."""

from __future__ import annotations

from pathlib import Path

import pytest
from portal_helpers import profiled_raters, questions_frame, seed_track
from sqlalchemy import select

from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, utcnow
from stableval.portal.work import assignment
from stableval.portal.work.assignment import _claim_locked, _plan_claim, _take_planned, claim_next
from stableval.portal.work.flow import load_draft


def _db(tmp_path: Path, name: str, **options: object) -> Database:
    db = Database(f"sqlite:///{tmp_path / name}")
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(4), **options)
    return db


def _question(db: Database, assignment_id: int | None) -> str:
    assert assignment_id is not None
    with db.reading() as session:
        found = session.get(Assignment, assignment_id)
        assert found is not None
        question = session.get(Question, found.question_id)
        assert question is not None
        return question.external_id


def test_the_usual_claim_never_runs_wholly_under_the_lock_and_picks_what_the_locked_claim_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planned, locked = _db(tmp_path, "planned.db", k=2), _db(tmp_path, "locked.db", k=2)
    raters = profiled_raters(planned, 3)
    assert profiled_raters(locked, 3) == raters
    now = utcnow()
    with monkeypatch.context() as patch:
        patch.setattr(assignment, "_claim_locked", lambda *args: pytest.fail("claimed wholly under the lock"))
        fast = [_question(planned, claim_next(planned, r, "main", now=now).assignment_id) for r in raters]
    slow = [_question(locked, _claim_locked(locked, r, "main", now).assignment_id) for r in raters]
    assert fast == slow == ["q0", "q0", "q1"]  # k = 2: the closest to completion first
    with planned.reading() as session:  # the claim wrote the draft with the first page shown (the page only reads)
        assignment_id = session.scalar(select(Assignment.id).order_by(Assignment.id).limit(1))
        assert assignment_id is not None
        assert load_draft(session, assignment_id)["opened"] == {"pairwise": now.isoformat()}
    for db in (planned, locked):
        db.dispose()


def test_a_plan_gone_stale_takes_the_next_planned_question_or_falls_back(tmp_path: Path) -> None:
    db = _db(tmp_path, "p.db", k=1)  # 4 questions, one rating each
    first, second, third, fourth, fifth = profiled_raters(db, 5)
    now = utcnow()
    with db.reading() as session:
        plan = _plan_claim(session, first, "main", now)
    assert plan is not None and len(plan.question_ids) == 4
    taken = claim_next(db, second, "main", now=now)  # the other rater takes q0's only slot meanwhile
    assert _question(db, taken.assignment_id) == "q0"
    with db.writing() as session:  # re-checked under the lock: q0 is full, the next planned one is taken
        claimed = _take_planned(session, plan, now)
    assert claimed is not None and _question(db, claimed.assignment_id) == "q1"
    with db.reading() as session:
        late = _plan_claim(session, third, "main", now)
    assert late is not None and len(late.question_ids) == 2  # q2, q3
    for other in (fourth, fifth):
        claim_next(db, other, "main", now=now)  # take them both
    with db.writing() as session:
        assert _take_planned(session, late, now) is None  # nothing planned is left ...
    assert claim_next(db, third, "main", now=now).assignment_id is None  # ... and the locked claim agrees
    db.dispose()


def test_a_parallel_click_gets_the_same_lease(tmp_path: Path) -> None:
    db = _db(tmp_path, "p.db", k=3)
    [rater] = profiled_raters(db, 1)
    now = utcnow()
    with db.reading() as session:
        plan = _plan_claim(session, rater, "main", now)  # click 1 planned ...
    assert plan is not None
    second = claim_next(db, rater, "main", now=now)  # ... click 2 claims meanwhile
    with db.writing() as session:
        assert _take_planned(session, plan, now) is None  # click 1 sees the open lease under the lock
    assert claim_next(db, rater, "main", now=now).assignment_id == second.assignment_id  # and gets it
    with db.reading() as session:
        assert session.query(Assignment).count() == 1
    db.dispose()


def test_gold_tracks_claim_under_the_lock(tmp_path: Path) -> None:
    db = _db(tmp_path, "p.db", k=1, gold_rate=0.5)
    [rater] = profiled_raters(db, 1)
    with db.reading() as session:
        assert _plan_claim(session, rater, "main", utcnow()) is None
    db.dispose()


def test_is_paused_on_a_track_without_gold_reads_only_the_override(tmp_path: Path) -> None:
    """Every claim asks whether the rater is paused; without gold questions only the admin's override can pause,
    so the answer takes two small reads (override, any gold question) and agrees with rater_quality."""
    from sqlalchemy import event

    from stableval.portal.store.models import Track
    from stableval.portal.work.quality import is_paused, rater_quality, set_override

    db = _db(tmp_path, "p.db", k=1)
    [rater] = profiled_raters(db, 1)
    seen: list[str] = []

    def note(_connection: object, _cursor: object, sql: str, *_: object) -> None:
        seen.append(sql)

    for state, expected in (("pause", True), ("allow", False), ("auto", False)):
        set_override(db, "main", rater, state)
        seen.clear()
        with db.reading() as session:
            track = session.scalar(select(Track).where(Track.slug == "main"))
            assert track is not None
            event.listen(db.engine, "before_cursor_execute", note)
            try:
                paused = is_paused(session, track, rater)
            finally:
                event.remove(db.engine, "before_cursor_execute", note)
            quality = rater_quality(session, track, [rater]).get(rater)
        assert paused is expected and (quality is not None and quality.paused) is expected, state
        assert len(seen) <= 2 and not any("submissions" in sql for sql in seen), seen
    db.dispose()
