"""Quality control: gold (attention-check) questions mixed into a rater's queue, per-rater accuracy on them, and
an automatic pause of raters below a threshold (the admin can override either way).

A gold question is imported like any other, with a ``gold`` column naming its known answer in its task type's
terms (a pairwise question: ``a``, ``b``, ``tie`` or ``neither`` about the file's models), and is judged by its
type (:meth:`~stableval.portal.tasks.base.TaskType.gold_rows`: one gold judgment per criterion of a pairwise
answer or checked criterion of a single-answer one, one per answer otherwise). Raters are never told which
questions are gold; gold questions do not count toward k and are left out of the exports. Each of a rater's
claims in a track is a gold question with probability ``gold_rate`` (a fixed hash of rater and claim number, so
the sequence is reproducible), and, when the track has a qualification set of size ``qualification``, their first
claims are gold only until they have answered that many. A rater's accuracy is the share of their gold judgments
that match the known answer; once they have answered at least
``qc_min_gold`` gold questions (or the qualification set) with an accuracy below ``qc_threshold``, they get no
new questions in the track until the admin allows them. A gold question flagged "does not make sense" counts as
answered with every gold judgment wrong (flagging is no way round quality control; the QC table shows how many
a rater flagged, and the admin may allow a rater whose flags were right). This is the standard "gold standard /
attention check" design of crowdsourcing quality control (Oleson et al., 2011, *Programmatic gold: targeted and
scalable quality assurance in crowdsourcing*, AAAI HCOMP workshop).

>>> [gold_turn(track_rate, rater_id=3, claim_number=n) for track_rate, n in ((0.0, 0), (1.0, 0))]
[False, True]
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from stableval.errors import InputError
from stableval.portal.store.db import Database
from stableval.portal.store.models import QcOverride, Question, Rater, Submission, Track, utcnow
from stableval.portal.tasks.records import GOLD_MARK
from stableval.portal.tasks.registry import TASKS

__all__ = ["OVERRIDES", "RaterQuality", "gold_turn", "is_paused", "rater_quality", "set_override", "track_quality"]

#: Admin decisions on a rater: always allowed, always paused, or "auto" (the threshold decides).
OVERRIDES = ("allow", "pause", "auto")


def gold_turn(rate: float, *, rater_id: int, claim_number: int) -> bool:
    """Whether this claim of the rater is a gold question: a fixed hash below ``rate`` (share of claims)."""
    digest = hashlib.sha256(f"gold:{rater_id}:{claim_number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


@dataclass(frozen=True)
class RaterQuality:
    """A rater's quality-control standing in one track."""

    rater_id: int
    gold_answered: int  # gold questions submitted (flagged ones included)
    judgments: int  # gold judgments (one per criterion; a flagged question's count as wrong)
    correct: int
    override: str  # "allow", "pause" or "auto"
    paused: bool
    flagged_gold: int = 0  # gold questions flagged "does not make sense"

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.judgments if self.judgments else None

    @property
    def status(self) -> str:
        if self.override == "pause":
            return "paused by admin"
        if self.override == "allow":
            return "allowed by admin"
        return "paused (below threshold)" if self.paused else "ok"


def rater_quality(session: Session, track: Track, rater_ids: list[int] | None = None) -> dict[int, RaterQuality]:
    """Gold accuracy and pause state per rater in the track (raters with gold answers or an override)."""
    overrides_query = select(QcOverride.rater_id, QcOverride.state).where(QcOverride.track_id == track.id)
    if rater_ids is not None:
        overrides_query = overrides_query.where(QcOverride.rater_id.in_(rater_ids))
    raters, submissions, judgments, correct = TASKS[track.task_type].gold_rows(session, track, rater_ids)
    flag_raters, flag_submissions, flag_judgments = _flagged_gold(session, track, rater_ids)
    raters, submissions = np.concatenate([raters, flag_raters]), np.concatenate([submissions, flag_submissions])
    judgments = np.concatenate([judgments, flag_judgments])
    correct = np.concatenate([correct, np.zeros(len(flag_raters), dtype=np.int64)])
    overrides: dict[int, str] = {int(r[0]): str(r[1]) for r in session.execute(overrides_query)}
    ids, codes = np.unique(raters, return_inverse=True)
    judged = np.bincount(codes, weights=judgments, minlength=len(ids)).astype(np.int64)
    right = np.bincount(codes, weights=correct, minlength=len(ids))
    items = np.bincount(np.unique(np.stack([codes, submissions]), axis=1)[0], minlength=len(ids)) if len(raters) \
        else judged
    flagged = np.bincount(np.searchsorted(ids, flag_raters), minlength=len(ids)) if len(ids) else judged
    needed = track.qc_min_gold if track.qualification <= 0 else min(track.qc_min_gold, track.qualification)
    out = {}
    for index, rater_id in enumerate(ids.tolist()):
        low = items[index] >= needed and right[index] < track.qc_threshold * judged[index]
        override = overrides.get(rater_id, "auto")
        out[rater_id] = RaterQuality(rater_id, int(items[index]), int(judged[index]), int(right[index]), override,
                                     override == "pause" or (override == "auto" and bool(low)), int(flagged[index]))
    for rater_id, override in overrides.items():
        out.setdefault(rater_id, RaterQuality(rater_id, 0, 0, 0, override, override == "pause"))
    return out


def _flagged_gold(session: Session, track: Track, rater_ids: list[int] | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rater, submission, gold judgments) per flagged gold submission of the track: each counts as answered
    with that many judgments, all wrong (:meth:`~stableval.portal.tasks.base.TaskType.gold_judgments`)."""
    query = (select(Submission.rater_id, Submission.id, Question.gold, Question.payload["gold"])
             .join(Question, Submission.question_id == Question.id)
             .where(Question.track_id == track.id, Question.gold != "", Submission.flagged.is_(True)))
    if rater_ids is not None:
        query = query.where(Submission.rater_id.in_(rater_ids))
    rows = session.execute(query).all()
    task, keys = TASKS[track.task_type], [c["key"] for c in track.criteria]
    return (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
            np.array([task.gold_judgments(r[3] if r[2] == GOLD_MARK else r[2], keys) for r in rows], dtype=np.int64))


def is_paused(session: Session, track: Track, rater_id: int) -> bool:
    """Whether quality control holds back new questions of the track from this rater (as :func:`rater_quality`
    decides; the admin's override first, and a track without gold questions, where accuracy cannot pause anyone,
    answered without computing it: every claim asks)."""
    override = session.scalar(_OVERRIDE, {"track_id": track.id, "rater_id": rater_id})
    if override in ("allow", "pause"):
        return override == "pause"
    if session.scalar(_ANY_GOLD, {"track_id": track.id}) is None:
        return False
    found = rater_quality(session, track, [rater_id]).get(rater_id)
    return found is not None and found.paused


_OVERRIDE = select(QcOverride.state).where(QcOverride.track_id == bindparam("track_id"),
                                           QcOverride.rater_id == bindparam("rater_id"))
_ANY_GOLD = select(Question.id).where(Question.track_id == bindparam("track_id"), Question.gold != "").limit(1)


def track_quality(db: Database, slug: str) -> list[tuple[Rater, RaterQuality]]:
    """Every rater with gold answers or an override in the track, in rater order (the admin's QC table)."""
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        if track is None:
            raise InputError("no such track", value=slug)
        quality = rater_quality(session, track)
        raters = {r.id: r for r in session.scalars(select(Rater).where(Rater.id.in_(list(quality))))}
    return [(raters[rater_id], quality[rater_id]) for rater_id in sorted(quality)]


def set_override(db: Database, slug: str, rater_id: int, state: str) -> None:
    """Allow a rater regardless of accuracy ("allow"), pause them ("pause"), or let the threshold decide ("auto")."""
    if state not in OVERRIDES:
        raise InputError("unknown quality-control decision", value=state, allowed=", ".join(OVERRIDES))
    with db.writing() as session:
        track_id = session.scalar(select(Track.id).where(Track.slug == slug))
        if track_id is None or session.get(Rater, rater_id) is None:
            raise InputError("no such track or rater", value=f"{slug} / rater-{rater_id}")
        found = session.get(QcOverride, (track_id, rater_id))
        if state == "auto":
            if found is not None:
                session.delete(found)
        elif found is None:
            session.add(QcOverride(track_id=track_id, rater_id=rater_id, state=state, set_at=utcnow()))
        else:
            found.state, found.set_at = state, utcnow()
