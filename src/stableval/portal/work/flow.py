"""The rater's form for one assignment: server-side drafts, time on task, and the atomic, idempotent submit.

A draft is a JSON object saved on every step (and by the page's optional autosave script)::

    {"reasons": {criterion: text}, "flag": bool, "flag_reason": text, "task": {...},
     "opened": {step: ISO time}, "time_ms": {step: milliseconds}, "rev": int}

plus the fields a task type declares for itself (``draft_fields``; the pairwise type keeps its choices and ratings
there); ``task`` holds the answer of the other types (see each module of :mod:`stableval.portal.tasks`). What a
step's form changes, what stops the rater leaving it and what a submission stores are the task type's
(:class:`~stableval.portal.tasks.base.TaskType`).

Every change is a read-modify-write in one locked transaction (:func:`update_draft`). ``rev`` counts the step
submissions: the page carries the ``rev`` it was rendered with, and an autosave whose ``rev`` is older (a request
still in flight when the step was submitted) is ignored, so it can never undo the step's newer values.

Submitting writes one :class:`~stableval.portal.store.models.Submission` with the task type's answer (a pairwise
answer: one :class:`~stableval.portal.store.models.Judgment` per criterion) in one transaction. The assignment's
one-time form token must match; a second submit of the same form (double click, resubmitted POST) finds the
assignment done, or hits the unique constraints, and creates nothing. The confirm page carries the
:func:`draft_digest` of what it showed: if the draft changed since (another tab), the submit is refused and the
confirm page shown again. A submit after the lease expired is refused when the slot was given to another rater
meanwhile (that rater's submit is the one kept), and so is a submit for a retired question or a lease given back
(released).

>>> draft_digest(empty_draft()) == draft_digest({**empty_draft(), "rev": 3, "time_ms": {"step": 9}})
True
>>> draft_digest(empty_draft()) == draft_digest({**empty_draft(), "reasons": {"accuracy": "x"}})
False
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import JSON, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Draft, Question, Submission, Track, utcnow
from stableval.portal.tasks.base import MAX_REASON
from stableval.portal.tasks.registry import TASKS
from stableval.portal.tasks.rules import Violation
from stableval.portal.work.assignment import capacity, lock_question, slots_taken

__all__ = ["MAX_TEXT", "Opened", "SubmitResult", "add_time", "draft_digest", "empty_draft", "load_draft",
           "mark_opened", "open_assignment", "save_draft", "save_step", "submit", "update_draft"]

#: Longest free-text reason kept (characters); longer text is refused with a message, never cut silently.
MAX_TEXT = MAX_REASON


#: The draft fields every task type shares: what the rater answered, then the clocks and the step count.
_ANSWERED: dict[str, Any] = {"reasons": {}, "flag": False, "flag_reason": "", "task": {}}
_CLOCKS: dict[str, Any] = {"opened": {}, "time_ms": {}, "rev": 0}


@lru_cache(maxsize=1)
def _fields() -> tuple[tuple[str, Any], ...]:
    """Every draft field with its empty value: the task types' own, then the shared ones."""
    own = {name: value for task in TASKS.values() for name, value in task.draft_fields.items()}
    return tuple({**own, **_ANSWERED, **_CLOCKS}.items())


@lru_cache(maxsize=1)
def _answered() -> tuple[str, ...]:
    """The draft fields that hold what the rater answered (not the clocks)."""
    return tuple(name for name, _ in _fields() if name not in _CLOCKS)


def empty_draft() -> dict[str, Any]:
    """A draft with nothing answered yet (the fields of every task type; fresh containers every time)."""
    return {name: copy.copy(value) for name, value in _fields()}


def draft_digest(draft: dict[str, Any]) -> str:
    """A short digest of what the rater answered (choices, reasons, flag, ratings; not timings): the confirm page
    carries it so that a submit stores exactly what the page showed."""
    shown = {key: draft.get(key) for key in _answered()}
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()[:32]


def load_draft(session: Session, assignment_id: int) -> dict[str, Any]:
    found = session.get(Draft, assignment_id)
    draft = empty_draft()
    if found is not None:
        draft.update(found.data)
    return draft


@dataclass(frozen=True)
class Opened:
    """A rater's assignment as its pages need it: the assignment, its question and track, and the draft."""

    assignment: Assignment
    question: Question
    track: Track
    draft: dict[str, Any]


#: One statement for every assignment page: the rater's assignment, its question, its track and its draft.
_OPEN = (select(Assignment, Question, Track, Draft.data)
         .join(Question, Question.id == Assignment.question_id)
         .join(Track, Track.id == Question.track_id)
         .outerjoin(Draft, Draft.assignment_id == Assignment.id)
         .where(Assignment.id == bindparam("assignment_id"), Assignment.rater_id == bindparam("rater_id")))


def open_assignment(db: Database, assignment_id: int, rater_id: int) -> Opened | None:
    """The assignment with its question, track and draft, or None when it is not this rater's (raters see only
    their own work). One query."""
    with db.reading() as session:
        row = session.execute(_OPEN, {"assignment_id": assignment_id, "rater_id": rater_id}).first()
    if row is None:
        return None
    draft = empty_draft()
    draft.update(row[3] or {})
    return Opened(row[0], row[1], row[2], draft)


def save_draft(session: Session, assignment_id: int, data: dict[str, Any]) -> None:
    found = session.get(Draft, assignment_id)
    if found is None:
        session.add(Draft(assignment_id=assignment_id, data=data, updated_at=utcnow()))
    else:
        found.data = dict(data)  # new object so the JSON column is marked changed
        found.updated_at = utcnow()


def update_draft(db: Database, assignment_id: int,
                 change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> dict[str, Any]:
    """Apply ``change`` to the assignment's draft atomically (the assignment row is locked on PostgreSQL; SQLite
    holds the write lock); ``change`` returns the new draft, or None to leave it. Returns the draft as stored."""
    with db.writing() as session:
        if not db.is_sqlite:
            session.execute(_LOCK_ASSIGNMENT, {"assignment_id": assignment_id})
        stored = session.execute(_DRAFT_DATA, {"assignment_id": assignment_id}).first()
        draft = empty_draft()
        if stored is not None:
            draft.update(stored[0])
        changed = change(draft)
        if changed is None:
            return draft
        session.execute(_INSERT_DRAFT if stored is None else _UPDATE_DRAFT,
                        {"id": assignment_id, "new_data": dict(changed), "now": utcnow()})
        return changed


_LOCK_ASSIGNMENT = select(Assignment.id).where(Assignment.id == bindparam("assignment_id")).with_for_update()
_DRAFT_DATA = select(Draft.data).where(Draft.assignment_id == bindparam("assignment_id"))
_DRAFTS = Draft.metadata.tables["drafts"]
_INSERT_DRAFT = insert(_DRAFTS).values(assignment_id=bindparam("id"), data=bindparam("new_data", type_=JSON),
                                       updated_at=bindparam("now"))
_UPDATE_DRAFT = (update(_DRAFTS).where(_DRAFTS.c.assignment_id == bindparam("id"))
                 .values(data=bindparam("new_data", type_=JSON), updated_at=bindparam("now")))


def mark_opened(draft: dict[str, Any], step: str, now: datetime | None = None) -> bool:
    """Note when a step was first shown (for time on task); True when the draft changed."""
    if step in draft["opened"]:
        return False
    draft["opened"] = {**draft["opened"], step: (now or utcnow()).isoformat()}
    return True


def add_time(draft: dict[str, Any], step: str, now: datetime) -> None:
    """Count the time since ``step`` was shown into the draft's ``time_ms`` (the step's button was pressed)."""
    opened = draft["opened"].get(step)
    if opened:
        spent = max(0, int((now - datetime.fromisoformat(opened)).total_seconds() * 1000))
        draft["time_ms"] = {**draft["time_ms"], step: int(draft["time_ms"].get(step, 0)) + spent}
        draft["opened"] = {k: v for k, v in draft["opened"].items() if k != step}


def save_step(draft: dict[str, Any], form: Any, track: Track, question: Question, step: str, action: str,
              now: datetime) -> dict[str, Any]:
    """The draft after a step's form was posted with the button ``action``: the step's fields merged (by the task
    type), ``rev`` advanced (autosaves rendered before are now stale), and on "next" the step's time counted (its
    clock runs on while the rater fixes the form)."""
    task = TASKS[track.task_type]
    new = task.merge_form(draft, form, track, question, step, action)
    new["rev"] = int(draft.get("rev", 0)) + 1
    if action == "next":
        add_time(new, step, now)
        if task.problems(new, track, question, step):
            mark_opened(new, step, now)
        else:
            task.after_next(new, step, now)
    return new


@dataclass(frozen=True)
class SubmitResult:
    """``status``: "created", "duplicate" (already submitted: nothing new), "full" (the item already has its k
    ratings), "expired" (the lease ran out and the slot went to another rater), "retired" (the question was
    withdrawn), "released" (the lease was given back: the rater was disabled, or an earlier submit refused; it
    never comes back, so whoever holds the slot now keeps it), "changed" (the draft differs from what the confirm
    page showed), "invalid" (form token wrong or the form incomplete: see ``problems``). ``adaptive``: the track
    has adaptive assignment on (``max_k`` above ``k``), so a new submission may be due to refresh its model."""

    status: str
    submission_id: int | None = None
    problems: tuple[Violation, ...] = ()
    adaptive: bool = False


def submit(db: Database, rater_id: int, assignment_id: int, form_token: str, now: datetime | None = None, *,
           digest: str | None = None) -> SubmitResult:
    """Turn the assignment's draft into one immutable submission, atomically and at most once. ``digest``: the
    :func:`draft_digest` the confirm page showed (None: not checked)."""
    now = now or utcnow()
    try:
        with db.writing() as session:
            loaded = _load_for_submit(session, db, assignment_id, rater_id)
            if loaded is None:
                return SubmitResult("invalid")
            assignment, question, track, draft = loaded
            if assignment.status == "done":
                existing = session.scalar(select(Submission.id).where(Submission.assignment_id == assignment_id))
                return SubmitResult("duplicate", existing)
            if form_token != assignment.form_token:
                return SubmitResult("invalid")
            if question.retired:
                assignment.status = "released"
                return SubmitResult("retired")
            if assignment.status != "open":  # given back (Disable, a refused submit): the current holder wins
                return SubmitResult("released")
            if not question.gold and assignment.expires_at <= now and slots_taken(
                    session, question.id, now, exclude=assignment.id) >= capacity(session, track, question.id):
                # late, and the slot went to another rater: theirs is the work kept
                assignment.status = "released"
                full = _confirmed_count(session, question.id) >= capacity(session, track, question.id)
                return SubmitResult("full" if full else "expired")
            if digest is not None and digest != draft_digest(draft):
                return SubmitResult("changed")
            task = TASKS[track.task_type]
            problems = task.submit_problems(draft, track, question)
            if problems:
                return SubmitResult("invalid", problems=tuple(problems))
            if not draft["flag"] and not question.gold:  # gold questions have no k
                if _confirmed_count(session, question.id) >= capacity(session, track, question.id):
                    assignment.status = "released"
                    return SubmitResult("full")
            shown_a, shown_b = ((question.model_b, question.model_a) if assignment.swapped
                                else (question.model_a, question.model_b))
            submission = Submission(assignment_id=assignment_id, question_id=question.id, rater_id=rater_id,
                                    form_token=form_token, shown_a=shown_a, shown_b=shown_b,
                                    flagged=bool(draft["flag"]), flag_reason=draft["flag_reason"] if draft["flag"]
                                    else "", submitted_at=now)
            session.add(submission)
            task.store_answer(session, submission, draft, track, question)
            session.flush()
            assignment.status = "done"
            session.execute(delete(_DRAFTS).where(_DRAFTS.c.assignment_id == assignment_id))
            return SubmitResult("created", submission.id, adaptive=track.max_k > track.k)
    except IntegrityError:
        with db.reading() as session:
            existing = session.scalar(select(Submission.id).where(Submission.assignment_id == assignment_id))
        return SubmitResult("duplicate", existing)


def _load_for_submit(session: Session, db: Database, assignment_id: int, rater_id: int
                     ) -> tuple[Assignment, Question, Track, dict[str, Any]] | None:
    """The rater's assignment, its question, track and draft, read inside the submit's write transaction: on SQLite
    (the write lock is already held) in one query; on PostgreSQL after locking the question's row."""
    if db.is_sqlite:
        row = session.execute(_OPEN, {"assignment_id": assignment_id, "rater_id": rater_id}).first()
        if row is None:
            return None
        draft = empty_draft()
        draft.update(row[3] or {})
        return row[0], row[1], row[2], draft
    assignment = session.get(Assignment, assignment_id)
    if assignment is None or assignment.rater_id != rater_id:
        return None
    lock_question(session, assignment.question_id, db)
    session.refresh(assignment)
    question = session.get(Question, assignment.question_id)
    assert question is not None  # foreign key
    track = session.get(Track, question.track_id)
    assert track is not None
    return assignment, question, track, load_draft(session, assignment_id)


def _confirmed_count(session: Session, question_id: int) -> int:
    return int(session.scalar(select(func.count(Submission.id)).where(
        Submission.question_id == question_id, Submission.flagged.is_(False))) or 0)


