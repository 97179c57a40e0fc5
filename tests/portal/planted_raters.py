"""Planted raters for the live-diagnostics and adaptive-assignment tests: honest, constant and random raters,
whose submissions are written straight into the database (one transaction per batch), as the flow stores them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sqlalchemy import select

from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Judgment, Question, Submission, Track, utcnow
from stableval.portal.tasks.rules import DEFAULT_CRITERIA

CRITERIA = tuple(c["key"] for c in DEFAULT_CRITERIA)
#: A rater: (rng, true ratings of A and B per criterion, (C, 2) ints 1..5) -> given ratings, same shape.
Behaviour = Callable[[np.random.Generator, np.ndarray], np.ndarray]


def honest(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """The true rating, 85% of the time; otherwise one level off."""
    off = np.where(rng.random(truth.shape) < 0.85, 0, rng.choice([-1, 1], size=truth.shape))
    return np.clip(truth + off, 1, 5)


def constant(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """Always 3."""
    return np.full_like(truth, 3)


def random_rater(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """Uniformly random ratings."""
    return rng.integers(1, 6, size=truth.shape)


def choice_of(ratings: np.ndarray) -> list[str]:
    """The pairwise choice consistent with ratings (C, 2): a, b or tie."""
    return ["a" if a > b else "b" if b > a else "tie" for a, b in ratings.tolist()]


def store(db: Database, work: Sequence[tuple[int, str, list[str], np.ndarray]]) -> None:
    """Store submissions ``(rater_id, external_id, choices per criterion, ratings (C, 2) about the file's
    model_a, model_b)``: an assignment (done), a submission and one judgment per criterion each."""
    now = utcnow()
    with db.writing() as session:
        questions = {q.external_id: q for q in session.scalars(select(Question))}
        for rater_id, external_id, choices, ratings in work:
            question = questions[external_id]
            token = f"t-{rater_id}-{question.id}"
            assignment = Assignment(question_id=question.id, rater_id=rater_id, status="done", swapped=False,
                                    form_token=token, claimed_at=now, expires_at=now)
            session.add(assignment)
            session.flush()
            submission = Submission(assignment_id=assignment.id, question_id=question.id, rater_id=rater_id,
                                    form_token=token, shown_a=question.model_a, shown_b=question.model_b,
                                    flagged=False, submitted_at=now)
            session.add(submission)
            session.flush()
            session.add_all([Judgment(submission_id=submission.id, criterion=c, choice=choice, reason="",
                                      rating_a=int(r[0]), rating_b=int(r[1]))
                             for c, choice, r in zip(CRITERIA, choices, ratings, strict=True)])


def track_id(db: Database, slug: str) -> int:
    with db.reading() as session:
        return int(session.scalars(select(Track.id).where(Track.slug == slug)).one())
