"""Per-rater progress in one track (the admin track page's "Raters" table, every task type): confirmed answers to
regular questions, "does not make sense" flags, gold (quality-control) questions answered, open leases, and the
time of the last submission. Two grouped queries, whatever the number of submissions.

>>> import tempfile, pathlib
>>> from stableval.portal.store.db import Database
>>> from stableval.portal.admin.manage import create_track
>>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}"); db.upgrade()
>>> _ = create_track(db, "demo")
>>> track_raters(db, "demo")
[]
>>> db.dispose()
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, func, select

from stableval.errors import InputError
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Rater, Submission, Track, utcnow

__all__ = ["RaterProgress", "track_raters"]


@dataclass(frozen=True)
class RaterProgress:
    """One rater's work in a track."""

    rater_id: int
    name: str
    specialty: str
    answered: int  # confirmed, unflagged answers to regular questions (what the exports hold)
    flagged: int  # "does not make sense" flags
    gold: int  # gold questions answered
    open: int  # open, unexpired leases
    last: datetime | None  # last submission


def track_raters(db: Database, slug: str, now: datetime | None = None) -> list[RaterProgress]:
    """Every rater with a submission or an open lease in the track, in rater order."""
    now = now or utcnow()
    with db.reading() as session:
        track_id = session.scalar(select(Track.id).where(Track.slug == slug))
        if track_id is None:
            raise InputError("no such track", column="track", value=slug)
        regular = (Question.gold == "") & Submission.flagged.is_(False)
        done = {int(r[0]): tuple(r[1:]) for r in session.execute(
            select(Submission.rater_id, func.sum(case((regular, 1), else_=0)),
                   func.sum(case((Submission.flagged.is_(True), 1), else_=0)),
                   func.sum(case((Question.gold != "", 1), else_=0)), func.max(Submission.submitted_at))
            .join(Question, Submission.question_id == Question.id).where(Question.track_id == track_id)
            .group_by(Submission.rater_id))}
        leases = dict(session.execute(
            select(Assignment.rater_id, func.count(Assignment.id)).join(Question)
            .where(Question.track_id == track_id, Assignment.status == "open", Assignment.expires_at > now)
            .group_by(Assignment.rater_id)).all())
        ids = sorted(set(done) | {int(r) for r in leases})
        raters = {r.id: r for r in session.scalars(select(Rater).where(Rater.id.in_(ids)))} if ids else {}
    out = []
    for rater_id in ids:
        answered, flagged, gold, last = done.get(rater_id, (0, 0, 0, None))
        rater = raters[rater_id]
        out.append(RaterProgress(rater_id, rater.name, rater.specialty, int(answered or 0), int(flagged or 0),
                                 int(gold or 0), int(leases.get(rater_id, 0)), last))
    return out
