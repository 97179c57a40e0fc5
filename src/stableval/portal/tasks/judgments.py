"""The pairwise type's tables, read from its judgments (one per criterion of a submission): the annotation and
pairwise exports, the step-1 choices of the adaptive model, and the gold judgments of quality control.

Annotation table columns: ``item, agent, rater, label, criterion, position, rater_group, track`` — one row per
rated answer (``label`` 1-5; score with ``--levels 1,2,3,4,5``). Pairwise table columns: ``item, agent_a, agent_b,
rater, winner, criterion, reason, rater_group, track`` — ``agent_a`` is the model shown as A; ``winner`` is
``a``, ``b``, ``tie`` or ``tie (bothbad)`` ("neither is good"). Raters appear as ``rater-<id>``. What is left
out ("unable to judge" ratings, flagged questions, gold questions) is counted in ``notes``.

>>> import numpy as np
>>> gold_matches(np.array(["a", "b", "tie", "a"]), np.array([True, False, True, False]),
...              np.array(["a", "a", "tie", "a"])).tolist()
[True, True, True, False]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from stableval.data.table import AnnotationTable
from stableval.errors import InputError
from stableval.portal.store.db import Database
from stableval.portal.store.models import Judgment, Question, Rater, Submission, Track
from stableval.portal.tasks.base import Export, GoldRows

__all__ = ["EXPORT_KINDS", "GOLD_CHOICES", "LEVELS", "RATING_LEVELS", "WINNER", "choice_table", "export_judgments",
           "gold_judgments", "gold_matches", "judgment_rows"]

#: The tables a pairwise track exports.
EXPORT_KINDS = ("annotations", "pairwise")
WINNER = {"a": "a", "b": "b", "tie": "tie", "neither": "tie (bothbad)"}
#: The 1-5 ratings of step 2, as labels.
RATING_LEVELS = ("1", "2", "3", "4", "5")
#: Allowed values of a question's ``gold`` column ("" = not a gold question).
GOLD_CHOICES = ("a", "b", "tie", "neither")
#: Step-1 choices about the file's models (counterbalancing undone): the levels of the adaptive model.
LEVELS = ("a", "b", "tie", "neither")


def judgment_rows(db: Database, slug: str | None = None, criterion: str | None = None) -> pd.DataFrame:
    """Every confirmed judgment of a regular (non-gold) question, joined with its submission, question and rater
    (one row per criterion). Gold questions are quality control (:mod:`stableval.portal.work.quality`), not data."""
    query = (select(Track.slug.label("track"), Question.external_id.label("item"), Judgment.criterion,
                    Submission.rater_id, Rater.specialty.label("rater_group"), Submission.shown_a,
                    Submission.shown_b, Judgment.choice, Judgment.reason, Judgment.rating_a, Judgment.rating_b,
                    Submission.submitted_at)
             .join(Submission, Judgment.submission_id == Submission.id)
             .join(Question, Submission.question_id == Question.id)
             .join(Track, Question.track_id == Track.id)
             .join(Rater, Submission.rater_id == Rater.id)
             .where(Question.gold == "")
             .order_by(Judgment.id))
    if slug is not None:
        query = query.where(Track.slug == slug)
    if criterion is not None:
        query = query.where(Judgment.criterion == criterion)
    with db.reading() as session:
        rows = session.execute(query).all()
    columns = ["track", "item", "criterion", "rater_id", "rater_group", "shown_a", "shown_b", "choice", "reason",
               "rating_a", "rating_b", "submitted_at"]
    frame = pd.DataFrame([tuple(r) for r in rows], columns=columns)
    frame["rater"] = "rater-" + frame["rater_id"].astype(str)
    return frame


def _count(db: Database, slug: str | None, *, flagged: bool) -> int:
    """Flagged submissions of regular questions (``flagged``), or submissions of gold questions."""
    query = select(Submission.id).join(Question).join(Track).where(
        Submission.flagged.is_(True), Question.gold == "") if flagged else \
        select(Submission.id).join(Question).join(Track).where(Question.gold != "")
    if slug is not None:
        query = query.where(Track.slug == slug)
    with db.reading() as session:
        return len(session.scalars(query).all())


def _check(db: Database, slug: str | None, criterion: str | None) -> None:
    if slug is None:
        return
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        if track is None:
            slugs = session.scalars(select(Track.slug)).all()
            raise InputError("no such track", column="track", value=slug, allowed=", ".join(slugs) or "none yet")
        keys = [c["key"] for c in track.criteria]
    if criterion is not None and criterion not in keys:
        raise InputError("no such criterion in the track", column="criterion", value=criterion,
                         allowed=", ".join(keys))


def export_judgments(db: Database, kind: str = "annotations", *, track: str | None = None,
                     criterion: str | None = None, rater: str | None = None) -> Export:
    """The judgments of one track (or all) and one criterion (or all) as ``kind`` (annotations/pairwise);
    ``rater`` (``rater-7``) keeps one rater's.

    One annotation file mixing several criteria repeats (item, agent, rater) once per criterion: pass
    ``criterion`` to score one criterion with ``stableval score``.
    """
    if kind not in EXPORT_KINDS:
        raise InputError("unknown export kind", value=kind, allowed=", ".join(EXPORT_KINDS))
    _check(db, track, criterion)
    rows = judgment_rows(db, track, criterion)
    if rater is not None:
        if rater not in set(rows["rater"]):
            raise InputError("no answers by this rater in the track", column="rater", value=rater,
                             allowed=", ".join(sorted(set(rows["rater"]))) or "none yet")
        rows = rows.loc[rows["rater"] == rater].reset_index(drop=True)
    notes = []
    flagged = _count(db, track, flagged=True)
    if flagged:
        notes.append(f"{flagged} submission(s) flagged 'does not make sense' have no judgments (left out)")
    gold = _count(db, track, flagged=False)
    if gold:
        notes.append(f"{gold} submission(s) of gold (quality-control) questions left out")
    if kind == "pairwise":
        frame = pd.DataFrame({
            "item": rows["item"], "agent_a": rows["shown_a"], "agent_b": rows["shown_b"], "rater": rows["rater"],
            "winner": rows["choice"].map(WINNER), "criterion": rows["criterion"], "reason": rows["reason"],
            "rater_group": rows["rater_group"], "track": rows["track"]})
        return Export(frame.reset_index(drop=True), tuple(notes), "pairwise")
    both = pd.DataFrame({
        "item": np.concatenate([rows["item"].to_numpy(dtype=object), rows["item"].to_numpy(dtype=object)]),
        "agent": np.concatenate([rows["shown_a"].to_numpy(dtype=object), rows["shown_b"].to_numpy(dtype=object)]),
        "rater": np.concatenate([rows["rater"].to_numpy(dtype=object)] * 2),
        "label": np.concatenate([rows["rating_a"].to_numpy(dtype=object), rows["rating_b"].to_numpy(dtype=object)]),
        "criterion": np.concatenate([rows["criterion"].to_numpy(dtype=object)] * 2),
        "position": np.repeat(np.array(["A", "B"], dtype=object), len(rows)),
        "rater_group": np.concatenate([rows["rater_group"].to_numpy(dtype=object)] * 2),
        "track": np.concatenate([rows["track"].to_numpy(dtype=object)] * 2),
    })
    unable = both["label"].isna().to_numpy()
    if unable.any():
        notes.append(f"{int(unable.sum())} 'unable to judge' rating(s) left out")
    frame = both.loc[~unable].reset_index(drop=True)
    frame["label"] = frame["label"].astype(int).astype(str)
    return Export(frame, tuple(notes), "pairwise")


def choice_table(db: Database, track_id: int) -> tuple[AnnotationTable, np.ndarray, np.ndarray]:
    """(annotation table of the track's step-1 choices, question id per table item, rater id per table rater).

    Items are question ids, agents criteria, raters rater ids; gold questions, flagged submissions and choices
    outside :data:`LEVELS` are left out; the choices are about the file's models (counterbalancing undone)."""
    query = (select(Submission.question_id, Submission.rater_id, Judgment.criterion, Judgment.choice,
                    Submission.shown_a == Question.model_a)
             .join(Submission, Judgment.submission_id == Submission.id)
             .join(Question, Submission.question_id == Question.id)
             .where(Question.track_id == track_id, Question.gold == "", Submission.flagged.is_(False)))
    with db.reading() as session:
        rows = session.execute(query).all()
    frame = pd.DataFrame([tuple(r) for r in rows], columns=["item", "rater", "agent", "choice", "as_file"])
    choice = frame["choice"].astype(str).to_numpy(dtype=object)
    swapped = np.where(choice == "a", "b", np.where(choice == "b", "a", choice))
    choice = np.where(frame["as_file"].to_numpy(dtype=bool), choice, swapped)
    code = pd.Categorical(choice, categories=list(LEVELS)).codes
    frame = frame.assign(label=code).loc[code >= 0]
    table = AnnotationTable.from_frame(frame[["item", "agent", "rater", "label"]], levels=LEVELS,
                                       source="adaptive step-1 choices")
    return (table, np.asarray(table.items, dtype=object).astype(np.int64),
            np.asarray(table.raters, dtype=object).astype(np.int64))


def gold_matches(choice: np.ndarray, shown_as_file: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Whether each judgment matches its gold answer. ``choice`` is about the answers as shown (A/B);
    ``shown_as_file`` says whether the shown A was the file's ``model_a`` (False: counterbalanced, A/B swapped)."""
    swapped = np.where(choice == "a", "b", np.where(choice == "b", "a", choice))
    return np.asarray(np.where(shown_as_file, choice, swapped) == gold, dtype=bool)


def gold_judgments(session: Session, track: Track, rater_ids: list[int] | None) -> GoldRows:
    """(rater, submission, judged, correct) per gold judgment of a pairwise track (one per criterion)."""
    query = (select(Submission.rater_id, Submission.id, Judgment.choice, Submission.shown_a == Question.model_a,
                    Question.gold)
             .join(Submission, Judgment.submission_id == Submission.id)
             .join(Question, Submission.question_id == Question.id)
             .where(Question.track_id == track.id, Question.gold != "", Submission.flagged.is_(False)))
    if rater_ids is not None:
        query = query.where(Submission.rater_id.in_(rater_ids))
    rows = session.execute(query).all()
    correct = gold_matches(np.array([r[2] for r in rows], dtype=object), np.array([bool(r[3]) for r in rows]),
                           np.array([r[4] for r in rows], dtype=object))
    return (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
            np.ones(len(rows), dtype=np.int64), correct.astype(np.int64))
