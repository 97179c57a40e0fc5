"""Who rates what: k confirmed ratings per item, never twice per rater, routing, leases, concurrency.

Routing: a question tagged with a subspecialty goes first to raters of that subspecialty within its specialty (a
rater of another specialty never gets it by their subspecialty), one tagged with a specialty to raters of that
specialty, an untagged question to everyone (the general pool; the track's fallback
can narrow or widen this, below); a rater is offered subspecialty matches first, then specialty matches, then the
general pool, and within each the items closest to completion. A claim is a lease (default 24 h): an open,
unexpired lease reserves one of the item's k slots; an expired one no longer does, so abandoned items return to
the pool. Only confirmed, unflagged submissions count toward k; items flagged "does not make sense" by
``flag_limit`` raters leave the pool.

Concurrency: claims run in one short write transaction. SQLite: ``BEGIN IMMEDIATE`` serialises writers.
PostgreSQL: the rater's row is locked first (``SELECT ... FOR UPDATE``), so one rater's parallel clicks claim one
after the other and all get the same open assignment; the candidate question row is then locked with ``SELECT
... FOR UPDATE SKIP LOCKED`` and its slots are recounted by a fresh statement after the lock, so two raters never
take the last slot together. A retired question is never offered, and an open lease on it is released.

Quality control (:mod:`stableval.portal.work.quality`): gold questions are outside k (each rater may get each once);
a claim is a gold one by the track's ``gold_rate`` (or always, while the rater is still in the qualification
set), but only while a regular question is left for the rater (so a claim never gives away that it can only be a
gold one), and a rater paused by quality control gets no new question (``Claim(None, "paused")``).

Scope (:mod:`stableval.portal.work.scope`): a rater invited for some tracks gets no question of another; the track's
``fallback`` says whether the general pool (untagged questions) and then any question of the track come after the
rater's own (sub)specialty.

Adaptive assignment (:mod:`stableval.portal.work.adaptive`): a question's capacity is k plus its quota of extra raters
(``question_quotas``), so an uncertain question stays in the pool beyond k, up to the track's ``max_k``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from sqlalchemy import ColumnElement, DateTime, Integer, Select, String, and_, bindparam, case, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session
from sqlalchemy.sql.elements import BindParameter

from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Draft, Question, QuestionQuota, Rater, Submission, Track, utcnow
from stableval.portal.store.security import new_token
from stableval.portal.tasks.registry import TASKS
from stableval.portal.work.quality import gold_turn, is_paused
from stableval.portal.work.scope import in_scope, needs_new_specialty

__all__ = ["Claim", "TrackProgress", "capacity", "claim_next", "counterbalance", "progress_for", "remaining_shown",
           "slots_taken"]


def counterbalance(rater_id: int, question_id: int) -> bool:
    """Whether model B is shown as A for this rater and item: a fixed hash, about half of the pairs.

    >>> counterbalance(3, 5) == counterbalance(3, 5)
    True
    >>> abs(sum(counterbalance(r, q) for r in range(20) for q in range(20)) - 200) < 25
    True
    """
    digest = hashlib.sha256(f"{rater_id}:{question_id}".encode()).digest()
    return bool(digest[0] & 1)


@dataclass(frozen=True)
class Claim:
    """Outcome of :func:`claim_next`: an assignment id (and its track's task type), or None with ``reason`` "none"
    (nothing for this profile now), "paused", "profile" (the rater's specialty is off the track's list: they choose
    again) or "unknown-track"."""

    assignment_id: int | None
    reason: str = ""
    task: str = ""


@dataclass(frozen=True)
class TrackProgress:
    """A rater's view of one track: questions still available to them, and the ones they have submitted; the
    study's texts (Markdown) and whether the rater has started (a question claimed or submitted)."""

    slug: str
    title: str
    remaining: int
    submitted: int
    overview: str = ""
    instructions: str = ""
    started: bool = False


def _confirmed(question_id: ColumnElement[int] | InstrumentedAttribute[int]) -> ColumnElement[int]:
    return (select(func.count(Submission.id))
            .where(Submission.question_id == question_id, Submission.flagged.is_(False))
            .scalar_subquery())


def _flags(question_id: ColumnElement[int] | InstrumentedAttribute[int]) -> ColumnElement[int]:
    return (select(func.count(Submission.id))
            .where(Submission.question_id == question_id, Submission.flagged.is_(True))
            .scalar_subquery())


def _active(question_id: ColumnElement[int] | InstrumentedAttribute[int],
            now: datetime | BindParameter[datetime]) -> ColumnElement[int]:
    return (select(func.count(Assignment.id))
            .where(Assignment.question_id == question_id, Assignment.status == "open",
                   Assignment.expires_at > now)
            .scalar_subquery())


#: The claim's time as a bind parameter ("now" in :func:`_bound`).
_NOW: BindParameter[datetime] = bindparam("now", type_=DateTime)


def _extra(question_id: ColumnElement[int] | InstrumentedAttribute[int]) -> ColumnElement[int]:
    """Adaptive assignment's raters beyond k for the question (0 without a quota)."""
    return func.coalesce(select(QuestionQuota.extra).where(QuestionQuota.question_id == question_id)
                         .scalar_subquery(), 0)


def capacity(session: Session, track: Track, question_id: int) -> int:
    """Confirmed ratings the question takes: the track's k plus its adaptive quota
    (:mod:`stableval.portal.work.adaptive`)."""
    extra = session.scalar(select(QuestionQuota.extra).where(QuestionQuota.question_id == question_id))
    return track.k + int(extra or 0)


def _routing(rater: Rater, track: Track) -> tuple[ColumnElement[bool], ColumnElement[int]]:
    """(eligible, priority) expressions for this rater's profile and the track's fallback
    (:mod:`stableval.portal.work.scope`); priority 0 = subspecialty match, 1 specialty, 2 general pool, 3 any other.
    The rater's (sub)specialty are bind parameters (:func:`_bound`): the expressions are built once per shape."""
    return _routing_shape(bool(rater.subspecialty), bool(rater.specialty), track.fallback or "general")


@lru_cache(maxsize=32)
def _routing_shape(has_sub: bool, has_spec: bool, fallback: str) -> tuple[ColumnElement[bool], ColumnElement[int]]:
    specialty = bindparam("specialty", type_=String)
    sub = and_(Question.subspecialty != "", Question.subspecialty == bindparam("subspecialty", type_=String),
               or_(Question.specialty == "", Question.specialty == specialty))  # only within the specialty
    spec = and_(Question.specialty != "", Question.specialty == specialty)
    general = and_(Question.specialty == "", Question.subspecialty == "")
    if not has_sub:
        sub = and_(sub, False)  # type: ignore[arg-type]
    if not has_spec:
        spec = and_(spec, False)  # type: ignore[arg-type]
    pool = general if fallback != "specialty" or not has_spec else and_(general, False)  # type: ignore[arg-type]
    eligible = or_(sub, spec, pool, Question.id.is_not(None)) if fallback == "any" else or_(sub, spec, pool)
    priority = case((sub, 0), (spec, 1), (general, 2), else_=3)
    return eligible, priority


def _bound(rater: Rater, track: Track, now: datetime) -> dict[str, object]:
    """The bind parameters of :func:`_routing`, :func:`_available_shape` and :func:`_gold_available`."""
    return {"rater_id": rater.id, "specialty": rater.specialty, "subspecialty": rater.subspecialty,
            "track_id": track.id, "k": track.k, "flag_limit": track.flag_limit, "now": now}


@lru_cache(maxsize=32)
def _available_shape(has_sub: bool, has_spec: bool, fallback: str) -> ColumnElement[bool]:
    """Questions of the track a rater of this shape may still be offered (bind parameters: :func:`_bound`)."""
    eligible, _ = _routing_shape(has_sub, has_spec, fallback)
    seen = select(Assignment.question_id).where(Assignment.rater_id == bindparam("rater_id", type_=Integer))
    return and_(Question.track_id == bindparam("track_id", type_=Integer), Question.retired.is_(False),
                Question.gold == "", eligible, Question.id.not_in(seen),
                _flags(Question.id) < bindparam("flag_limit", type_=Integer),
                _confirmed(Question.id) + _active(Question.id, _NOW) < bindparam("k", type_=Integer)
                + _extra(Question.id))


def _gold_available(rater: Rater, track: Track) -> ColumnElement[bool]:
    """Gold questions of the track this rater has not had (no k: every rater may get each one; bind parameters:
    :func:`_bound`)."""
    eligible, _ = _routing(rater, track)
    seen = select(Assignment.question_id).where(Assignment.rater_id == bindparam("rater_id", type_=Integer))
    return and_(Question.track_id == bindparam("track_id", type_=Integer), Question.retired.is_(False),
                Question.gold != "", eligible, Question.id.not_in(seen))


def _claim_gold(session: Session, rater: Rater, track: Track, now: datetime) -> int | None:
    _, priority = _routing(rater, track)
    question_id = session.scalar(select(Question.id).where(_gold_available(rater, track))
                                 .order_by(priority, Question.id).limit(1), _bound(rater, track, now))
    if question_id is None:
        return None
    assignment = Assignment(question_id=question_id, rater_id=rater.id, status="open",
                            swapped=counterbalance(rater.id, question_id), form_token=new_token(), claimed_at=now,
                            expires_at=now + timedelta(seconds=track.lease_seconds))
    session.add(assignment)
    session.flush()
    return assignment.id


def _gold_now(session: Session, rater: Rater, track: Track) -> tuple[bool, bool]:
    """(this claim is a gold one, the rater is still in the qualification set: gold only)."""
    if track.gold_rate <= 0 and track.qualification <= 0:
        return False, False
    claims = session.scalar(select(func.count(Assignment.id)).join(Question).where(
        Question.track_id == track.id, Assignment.rater_id == rater.id)) or 0
    gold_done = session.scalar(select(func.count(Submission.id)).join(Question).where(
        Question.track_id == track.id, Submission.rater_id == rater.id, Question.gold != "")) or 0
    qualifying = int(gold_done) < track.qualification
    return qualifying or gold_turn(track.gold_rate, rater_id=rater.id, claim_number=int(claims)), qualifying


def slots_taken(session: Session, question_id: int, now: datetime, *, exclude: int | None = None) -> int:
    """Confirmed submissions plus unexpired open leases (except assignment ``exclude``) of one question."""
    confirmed = session.scalar(select(func.count(Submission.id)).where(
        Submission.question_id == question_id, Submission.flagged.is_(False))) or 0
    leases = select(func.count(Assignment.id)).where(
        Assignment.question_id == question_id, Assignment.status == "open", Assignment.expires_at > now)
    if exclude is not None:
        leases = leases.where(Assignment.id != exclude)
    return int(confirmed) + int(session.scalar(leases) or 0)


def progress_for(session: Session, rater: Rater, now: datetime | None = None) -> list[TrackProgress]:
    """Per track: how many questions this rater can still get (their open lease included) and has submitted.

    Gold questions must not stand out (:func:`remaining_shown`): "remaining" counts the regular questions
    available and held, less the gold questions submitted, so a claim of either kind leaves both counts as they
    were and a submission of either kind lowers "remaining" and raises "done" by one."""
    now = now or utcnow()
    out = []
    for track in session.scalars(select(Track).order_by(Track.id)):
        if not in_scope(rater.tracks, track.id):
            continue
        counts = session.execute(_progress_counts(bool(rater.subspecialty), bool(rater.specialty),
                                                  track.fallback or "general"), _bound(rater, track, now)).one()
        available, own_open, gold_open, submitted, gold_submitted = (int(n or 0) for n in counts)
        remaining = remaining_shown(available, own_open - gold_open, gold_open, gold_submitted)
        out.append(TrackProgress(track.slug, track.title, remaining, submitted, track.overview, track.instructions,
                                 started=bool(own_open or submitted)))
    return out


def remaining_shown(available: int, regular_open: int, gold_open: int, gold_submitted: int) -> int:
    """The "questions remaining" a rater is shown: regular questions available and held, less the gold questions
    submitted (each counted as if it had been one of the regular ones), and at least 1 while anything is left or
    held (so the button stays; near the end the count stays at 1 for either kind).

    >>> remaining_shown(5, 1, 0, 0), remaining_shown(5, 0, 1, 0), remaining_shown(5, 0, 0, 1)  # held; then done
    (6, 5, 4)
    >>> remaining_shown(1, 0, 0, 3), remaining_shown(0, 0, 1, 3), remaining_shown(0, 0, 0, 3)
    (1, 1, 0)
    """
    if available + regular_open + gold_open == 0:
        return 0
    return max(available + regular_open - gold_submitted, 1)


@lru_cache(maxsize=32)
def _progress_counts(has_sub: bool, has_spec: bool, fallback: str) -> Select[int, int, int, int, int]:
    """One statement for a rater's line of one track: questions available, own open leases (all, gold), own
    submissions (all, gold)."""
    rater_id, track_id = bindparam("rater_id", type_=Integer), bindparam("track_id", type_=Integer)
    available = select(func.count(Question.id)).where(_available_shape(has_sub, has_spec, fallback))
    own_open = select(func.count(Assignment.id)).join(Question).where(
        Question.track_id == track_id, Assignment.rater_id == rater_id, Assignment.status == "open")
    submitted = select(func.count(Submission.id)).join(Question).where(
        Question.track_id == track_id, Submission.rater_id == rater_id)
    gold = Question.gold != ""
    return select(available.scalar_subquery(), own_open.scalar_subquery(), own_open.where(gold).scalar_subquery(),
                  submitted.scalar_subquery(), submitted.where(gold).scalar_subquery())


def claim_next(db: Database, rater_id: int, slug: str, now: datetime | None = None) -> Claim:
    """The rater's open assignment in the track, or a newly claimed question, or None (nothing left).

    A newly claimed pairwise question gets its draft in the same transaction, with its first page marked as shown
    now (time on task starts at the claim, one redirect before the page): the page itself then only reads.

    SQLite (one writer at a time): the usual claim (no open lease of the rater in the track, not paused, not a
    gold turn) ranks its first :data:`PLANNED` candidates in a read transaction, outside the write lock, and the
    write transaction only checks that the rater still has no open lease there and takes the first candidate
    still available; if the lease check fails or none is left, or in any other case, the whole claim runs under
    the write lock. (Raters claiming at the same moment rank the same questions first, hence several.)
    """
    now = now or utcnow()
    if db.is_sqlite:
        with db.reading() as session:
            planned = _plan_claim(session, rater_id, slug, now)
        if planned is not None:
            with db.writing() as session:
                claimed = _take_planned(session, planned, now)
            if claimed is not None:
                return claimed
    return _claim_locked(db, rater_id, slug, now)


@dataclass(frozen=True)
class _Planned:
    """A claim chosen outside the write lock: the question and what checking it again needs."""

    question_ids: list[int]
    track: Track
    rater: Rater


def _plan_claim(session: Session, rater_id: int, slug: str, now: datetime) -> _Planned | None:
    """The question the usual claim would take (read-only), or None when the claim is not the usual one."""
    track = session.scalar(select(Track).where(Track.slug == slug))
    rater = session.get(Rater, rater_id)
    if track is None or rater is None or not in_scope(rater.tracks, track.id) or rater.disabled_at is not None:
        return None
    if track.specialties and rater.specialty not in track.specialties:
        return None  # the locked claim checks the rater's specialty against the lists of their tracks
    if track.gold_rate > 0 or track.qualification > 0 or session.scalar(_own_open_count(), {
            "track_id": track.id, "rater_id": rater_id}) or is_paused(session, track, rater_id):
        return None
    query = _candidate(bool(rater.subspecialty), bool(rater.specialty), track.fallback or "general", True)
    question_ids = list(session.scalars(query.limit(PLANNED), _bound(rater, track, now)))
    return _Planned(question_ids, track, rater) if question_ids else None


def _take_planned(session: Session, planned: _Planned, now: datetime) -> Claim | None:
    """Under the write lock: if the rater still has no open lease in the track, claim the first planned question
    still available to them; else None (the caller claims under the lock)."""
    track, rater = planned.track, planned.rater
    if session.scalar(_own_open_count(), {"track_id": track.id, "rater_id": rater.id}):
        return None
    bound = _bound(rater, track, now)
    available = _still_available(bool(rater.subspecialty), bool(rater.specialty), track.fallback or "general")
    for question_id in planned.question_ids:
        if session.scalar(available, {**bound, "question_id": question_id}) is not None:
            return Claim(_new_assignment(session, track, rater.id, question_id, now), task=track.task_type)
    return None


#: Candidates a claim ranks outside the write lock (SQLite), tried in order under it.
PLANNED = 4


@lru_cache(maxsize=1)
def _own_open_count() -> Select[int]:
    """The rater's open leases in the track (bind parameters: rater_id, track_id)."""
    return select(func.count(Assignment.id)).join(Question).where(
        Question.track_id == bindparam("track_id", type_=Integer),
        Assignment.rater_id == bindparam("rater_id", type_=Integer), Assignment.status == "open")


@lru_cache(maxsize=32)
def _still_available(has_sub: bool, has_spec: bool, fallback: str) -> Select[int]:
    """The question (bind parameter question_id) if a rater of this shape may still be offered it."""
    return select(Question.id).where(Question.id == bindparam("question_id", type_=Integer),
                                     _available_shape(has_sub, has_spec, fallback))


def _new_assignment(session: Session, track: Track, rater_id: int, question_id: int, now: datetime) -> int:
    """Insert the lease (and the draft its task type writes with a claim, if any); its id."""
    assignment = Assignment(question_id=question_id, rater_id=rater_id, status="open",
                            swapped=counterbalance(rater_id, question_id), form_token=new_token(),
                            claimed_at=now, expires_at=now + timedelta(seconds=track.lease_seconds))
    session.add(assignment)
    session.flush()
    draft = TASKS[track.task_type].claim_draft(now.isoformat())
    if draft is not None:
        session.add(Draft(assignment_id=assignment.id, data=draft, updated_at=now))
    return assignment.id


def _claim_locked(db: Database, rater_id: int, slug: str, now: datetime) -> Claim:
    """The whole claim in one write transaction (SQLite: under the write lock; PostgreSQL: row locks)."""
    with db.writing() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        if not db.is_sqlite:  # one claim per rater at a time (parallel clicks): SQLite's write lock does this
            session.execute(select(Rater.id).where(Rater.id == rater_id).with_for_update())
        rater = session.get(Rater, rater_id)
        if track is None or rater is None or not in_scope(rater.tracks, track.id):  # out of the invite's scope
            return Claim(None, "unknown-track")
        if rater.disabled_at is not None:
            return Claim(None, "none")
        lease = timedelta(seconds=track.lease_seconds)
        own = session.scalars(select(Assignment).join(Question).where(
            Question.track_id == track.id, Assignment.rater_id == rater_id, Assignment.status == "open")
            .order_by(Assignment.id)).all()
        questions = {q.id: q for q in session.scalars(select(Question).where(
            Question.id.in_([a.question_id for a in own])))} if own else {}
        retired = {q_id for q_id, q in questions.items() if q.retired}
        for assignment in own:
            if assignment.question_id in retired:
                assignment.status = "released"  # withdrawn by the study team
                continue
            if assignment.expires_at > now or questions[assignment.question_id].gold:  # gold: no slot to lose
                if assignment.expires_at <= now:
                    assignment.expires_at = now + lease
                return Claim(assignment.id, task=track.task_type)
            lock_question(session, assignment.question_id, db)
            if slots_taken(session, assignment.question_id, now, exclude=assignment.id) < \
                    capacity(session, track, assignment.question_id):
                assignment.expires_at = now + lease  # came back in time: renew
                return Claim(assignment.id, task=track.task_type)
            assignment.status = "released"  # its slot went to someone else meanwhile
        if needs_new_specialty(session, rater, track):
            return Claim(None, "profile")
        if is_paused(session, track, rater_id):
            return Claim(None, "paused")
        gold, qualifying = _gold_now(session, rater, track)
        bound = _bound(rater, track, now)
        if gold:
            regular = _candidate(bool(rater.subspecialty), bool(rater.specialty), track.fallback or "general", True)
            if session.scalar(regular, bound) is None:  # a gold question never outlasts the regular ones: with
                return Claim(None, "none")             # none left, it would be the only thing a claim could give
            gold_id = _claim_gold(session, rater, track, now)
            if gold_id is not None or qualifying:
                return Claim(gold_id, "" if gold_id is not None else "none", task=track.task_type)
        skipped: list[int] = []
        for _attempt in range(50):
            query = _candidate(bool(rater.subspecialty), bool(rater.specialty), track.fallback or "general",
                               db.is_sqlite)
            if skipped:
                query = query.where(Question.id.not_in(skipped))
            question_id = session.scalar(query, bound)
            if question_id is None:
                return Claim(None, "none")
            # recount after the row lock (PostgreSQL); SQLite's write lock was held since the transaction began,
            # so the candidate query's own count is current
            if not db.is_sqlite and slots_taken(session, question_id, now) >= capacity(session, track, question_id):
                skipped.append(question_id)
                continue
            return Claim(_new_assignment(session, track, rater_id, question_id, now), task=track.task_type)
        return Claim(None, "none")


@lru_cache(maxsize=64)
def _candidate(has_sub: bool, has_spec: bool, fallback: str, sqlite: bool) -> Select[int]:
    """The next question to offer: best routing priority, then the one closest to completion (bind parameters:
    :func:`_bound`); on PostgreSQL its row is locked, skipping rows other claims hold."""
    _, priority = _routing_shape(has_sub, has_spec, fallback)
    query = (select(Question.id).where(_available_shape(has_sub, has_spec, fallback))
             .order_by(priority, (_confirmed(Question.id) + _active(Question.id, _NOW)).desc(), Question.id)
             .limit(1))
    return query if sqlite else query.with_for_update(skip_locked=True, of=Question)


def lock_question(session: Session, question_id: int, db: Database) -> None:
    """Serialise work on one question (PostgreSQL row lock; SQLite already holds the write lock)."""
    if not db.is_sqlite:
        session.execute(select(Question.id).where(Question.id == question_id).with_for_update())
