"""What a track's confirmed work looks like to the analyses: its track row, its confirmed answers as one frame, and
the signature that changes with every new submission (the key of the result caches).

Every export, results summary, rater table and adaptive model of a task type reads :func:`confirmed_answers`;
the admin pages' caches key on :func:`submission_signature`.

>>> left_out_notes(0, 2)
['2 submission(s) of gold (quality-control) questions left out']
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stableval.errors import InputError
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question, Rater, Submission, Track

__all__ = ["confirmed_answers", "left_out_notes", "submission_signature", "task_of", "track_or_fail"]


def track_or_fail(session: Session, slug: str) -> Track:
    """The track called ``slug``, or an :class:`InputError` listing the tracks there are."""
    track = session.scalar(select(Track).where(Track.slug == slug))
    if track is None:
        slugs = session.scalars(select(Track.slug)).all()
        raise InputError("no such track", column="track", value=slug, allowed=", ".join(slugs) or "none yet")
    return track


def task_of(db: Database, slug: str) -> str:
    """The task type of track ``slug`` (an :class:`InputError` listing the tracks when there is none)."""
    with db.reading() as session:
        task = session.scalar(select(Track.task_type).where(Track.slug == slug))
        if task is None:
            track_or_fail(session, slug)
    return str(task)


def confirmed_answers(db: Database, slug: str) -> tuple[Track, pd.DataFrame, int, int]:
    """The track, its confirmed unflagged submissions of regular questions (in submission order; columns ``item,
    question_id, model, question`` (the question's payload), ``rater_id, rater_group, answer`` (the submission's
    payload), ``flagged, rater``), and how many flagged submissions and submissions of gold (quality-control)
    questions were left out."""
    with db.reading() as session:
        track = track_or_fail(session, slug)
        gold = int(session.scalar(select(func.count(Submission.id)).join(Question).where(
            Question.track_id == track.id, Question.gold != "")) or 0)
        rows = session.execute(
            select(Question.external_id, Question.id, Question.model_a, Question.payload, Submission.rater_id,
                   Rater.specialty, Submission.payload, Submission.flagged)
            .join(Submission, Submission.question_id == Question.id).join(Rater, Submission.rater_id == Rater.id)
            .where(Question.track_id == track.id, Question.gold == "").order_by(Submission.id)).all()
    frame = pd.DataFrame([tuple(r) for r in rows], columns=["item", "question_id", "model", "question", "rater_id",
                                                           "rater_group", "answer", "flagged"])
    flagged = int(frame["flagged"].sum()) if len(frame) else 0
    frame = frame.loc[~frame["flagged"].astype(bool)].reset_index(drop=True)
    frame["rater"] = "rater-" + frame["rater_id"].astype(str)
    return track, frame, flagged, gold


def left_out_notes(flagged: int, gold: int) -> list[str]:
    """The export notes on what was left out: flagged submissions and those of gold questions."""
    notes = [f"{flagged} submission(s) flagged 'does not make sense' have no answers (left out)"] if flagged else []
    if gold:
        notes.append(f"{gold} submission(s) of gold (quality-control) questions left out")
    return notes


def submission_signature(db: Database, slug: str) -> tuple[int, int]:
    """(number of submissions, last submission id) of the track; raises for an unknown track. Submissions are
    immutable, so a result computed from them stays valid until this changes."""
    with db.reading() as session:
        if session.scalar(select(Track.id).where(Track.slug == slug)) is None:
            track_or_fail(session, slug)
        count, last = session.execute(select(func.count(Submission.id), func.max(Submission.id))
                                      .join(Question, Submission.question_id == Question.id)
                                      .join(Track, Question.track_id == Track.id)
                                      .where(Track.slug == slug)).one()
    return int(count or 0), int(last or 0)
