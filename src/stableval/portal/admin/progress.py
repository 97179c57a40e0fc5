"""Progress as the pages show it: per track, per rater and per question counts (read-only queries).

The admin pages show, per track, the questions, the confirmed (unflagged) ratings against the ``questions × k``
needed and the flags; per rater, the submissions; per question of a track, its confirmed ratings, open unexpired
leases and flags, and the flagged submissions with their reasons. The rater's own progress page shows
:func:`stableval.portal.work.assignment.progress_for`. Route handlers call these functions and hold no SQL.

>>> import tempfile, pathlib
>>> from stableval.portal.store.db import Database
>>> from stableval.portal.admin.manage import create_invites, create_track
>>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}")
>>> db.upgrade()
>>> _ = create_track(db, "main", k=2)
>>> _ = create_invites(db, ["dr.a@example.org"])
>>> overview = admin_overview(db)
>>> [(row.track.slug, row.questions, row.needed) for row in overview.tracks]
[('main', 0, 0)]
>>> [(row.rater.note, row.submitted) for row in overview.raters]
[('dr.a@example.org', 0)]
>>> track_detail(db, "main").questions, track_detail(db, "nope")
([], None)
>>> db.dispose()
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Rater, Submission, Track, utcnow
from stableval.portal.work.assignment import TrackProgress, progress_for

__all__ = ["AdminOverview", "FlagRow", "QuestionRow", "RaterRow", "TrackDetail", "TrackRow", "admin_overview",
           "rater_progress", "track_detail"]


class TrackRow(NamedTuple):
    """One track on the admin page: questions, confirmed ratings, ratings needed (questions × k), flags."""

    track: Track
    questions: int
    confirmed: int
    needed: int
    flagged: int


class RaterRow(NamedTuple):
    """One rater on the admin page and the number of their submissions."""

    rater: Rater
    submitted: int


class QuestionRow(NamedTuple):
    """One question of a track: confirmed ratings, open unexpired leases, flags."""

    question: Question
    confirmed: int
    leases: int
    flags: int


class FlagRow(NamedTuple):
    """A flagged submission: the question's id in the import file, the rater, the reason given."""

    item: str
    rater_id: int
    reason: str


@dataclass(frozen=True)
class AdminOverview:
    """The admin start page: every track and every rater."""

    tracks: list[TrackRow]
    raters: list[RaterRow]


@dataclass(frozen=True)
class TrackDetail:
    """One track's page: the track, its questions in import order, its flagged submissions in order."""

    track: Track
    questions: list[QuestionRow]
    flagged: list[FlagRow]


def _track_rows(session: Session) -> list[TrackRow]:
    rows = []
    for track in session.scalars(select(Track).order_by(Track.id)).all():
        questions = session.scalar(select(func.count(Question.id)).where(Question.track_id == track.id)) or 0
        confirmed = session.scalar(select(func.count(Submission.id)).join(Question).where(
            Question.track_id == track.id, Submission.flagged.is_(False))) or 0
        flagged = session.scalar(select(func.count(Submission.id)).join(Question).where(
            Question.track_id == track.id, Submission.flagged.is_(True))) or 0
        rows.append(TrackRow(track, questions, confirmed, questions * track.k, flagged))
    return rows


def admin_overview(db: Database) -> AdminOverview:
    """Every track with its counts, and every rater with their submissions (in creation order)."""
    with db.reading() as session:
        tracks = _track_rows(session)
        raters = [RaterRow(rater, int(count)) for rater, count in session.execute(
            select(Rater, func.count(Submission.id)).outerjoin(Submission, Submission.rater_id == Rater.id)
            .group_by(Rater.id).order_by(Rater.id)).all()]
    return AdminOverview(tracks, raters)


def track_detail(db: Database, slug: str, now: datetime | None = None) -> TrackDetail | None:
    """The track named ``slug`` with per-question counts (leases open at ``now``), or None if there is none."""
    now = now or utcnow()
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        if track is None:
            return None
        confirmed = (select(func.count(Submission.id)).where(Submission.question_id == Question.id,
                                                             Submission.flagged.is_(False)).scalar_subquery())
        flags = (select(func.count(Submission.id)).where(Submission.question_id == Question.id,
                                                         Submission.flagged.is_(True)).scalar_subquery())
        leases = (select(func.count(Assignment.id)).where(Assignment.question_id == Question.id,
                                                          Assignment.status == "open", Assignment.expires_at > now)
                  .scalar_subquery())
        items = [QuestionRow(*row) for row in session.execute(
            select(Question, confirmed, leases, flags).where(Question.track_id == track.id)
            .order_by(Question.id)).all()]
        flagged = [FlagRow(*row) for row in session.execute(
            select(Question.external_id, Submission.rater_id, Submission.flag_reason).join(Question)
            .where(Question.track_id == track.id, Submission.flagged.is_(True)).order_by(Submission.id)).all()]
    return TrackDetail(track, items, flagged)


def rater_progress(db: Database, rater_id: int, now: datetime | None = None
                   ) -> tuple[Rater | None, list[TrackProgress]]:
    """The rater and, once their profile is filled in, their progress per track (else an empty list)."""
    with db.reading() as session:
        rater = session.get(Rater, rater_id)
        if rater is None or rater.profile_at is None:
            return rater, []
        return rater, progress_for(session, rater, now)
