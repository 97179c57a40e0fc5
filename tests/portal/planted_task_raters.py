"""Planted raters for the task types other than pairwise (quality control, diagnostics, adaptive assignment tests):
question files with gold questions, and honest / constant / random raters who claim and submit through
:func:`stableval.portal.work.assignment.claim_next` and :func:`stableval.portal.work.flow.submit`, as the pages do.

Every regular question has a deterministic true answer; an honest rater gives it 85% of the time (the gold answer
always), a constant rater always gives the same answer (chosen so that it is never a gold answer), a random rater
answers uniformly at random."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from task_helpers import CONDITIONS

from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Track
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.flow import empty_draft, save_draft, submit

TASKS = ("single", "mcq", "ddx", "rank-documents")
SCALE = ["incorrect", "partial", "correct"]
SINGLE_CRITERIA = ["accuracy", "safety"]
LETTERS = ["A", "B", "C", "D"]
ITEMS = ["ans", "d0", "d1", "d2"]


def _hash(*parts: Any) -> int:
    return zlib.crc32(":".join(map(str, parts)).encode())


def truth(task: str, external_id: str) -> Any:
    """The true answer of a regular question (what an honest rater gives 85% of the time)."""
    if task == "single":
        return {c: SCALE[_hash(external_id, c) % len(SCALE)] for c in SINGLE_CRITERIA}
    if task == "mcq":
        return LETTERS[_hash(external_id) % len(LETTERS)]
    if task == "ddx":
        return CONDITIONS[_hash(external_id) % len(CONDITIONS)]
    order = list(ITEMS)
    shift = _hash(external_id) % len(order)
    return order[shift:] + order[:shift]


def gold_answers(task: str, n: int) -> list[Any]:
    """Gold answers of ``n`` gold questions, never the constant rater's answer."""
    if task == "single":
        return [{"accuracy": ("correct", "partial")[i % 2], "safety": ("partial", "correct")[i % 2]} for i in range(n)]
    if task == "mcq":
        return [LETTERS[1 + i % 3] for i in range(n)]
    if task == "ddx":
        return [CONDITIONS[1 + i % (len(CONDITIONS) - 1)] for i in range(n)]
    return [[f"d{i % 3}", f"d{(i + 1) % 3}"] for i in range(n)]


def write_questions(tmp_path: Path, task: str, regular: int, gold: int, ambiguous: int = 0) -> Path:
    """A question file of ``regular`` questions q0.., ``ambiguous`` ones u0.. (honest raters answer them at
    random) and ``gold`` gold questions g0.. (gold column per type)."""
    ids = [f"q{i}" for i in range(regular)] + [f"u{i}" for i in range(ambiguous)] + [f"g{i}" for i in range(gold)]
    regular += ambiguous
    golds: list[Any] = [""] * regular + gold_answers(task, gold)
    if task == "single":
        cells = ["; ".join(f"{k}={v}" for k, v in g.items()) if g else "" for g in golds]
        frame = pd.DataFrame({"id": ids, "prompt": [f"Question {i}?" for i in ids], "model": "TxAgent",
                              "answer": [f"Answer to {i}" for i in ids], "gold": cells})
        path = tmp_path / "single.csv"
        frame.to_csv(path, index=False)
        return path
    if task == "ddx":
        frame = pd.DataFrame({"id": ids, "prompt": [f"Rash, case {i}" for i in ids], "gold": golds})
        path = tmp_path / "ddx.csv"
        frame.to_csv(path, index=False)
        return path
    rows = []
    for external, g in zip(ids, golds, strict=True):
        if task == "mcq":
            key = truth("mcq", external) if not g else LETTERS[0]  # a gold question's key may be wrong
            row: dict[str, Any] = {"id": external, "prompt": f"Case {external}: next step?",
                                   "options": {v: f"Option {v}" for v in LETTERS}, "answer_idx": key}
        else:
            row = {"id": external, "prompt": f"Query {external}",
                   "items": [{"id": "ans", "text": "Generated answer", "kind": "answer", "model": "TxAgent"}] +
                            [{"id": f"d{j}", "text": f"Document {j}", "kind": "document", "grade": 3 - j}
                             for j in range(3)]}
        if g:
            row["gold"] = g
        rows.append(row)
    path = tmp_path / f"{task}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def seed(db: Database, tmp_path: Path, task: str, *, regular: int, gold: int, slug: str = "t", ambiguous: int = 0,
         **options: Any) -> None:
    """Create track ``slug`` of the task type and import its questions (gold ones included)."""
    if task == "single":
        options.setdefault("scale", SCALE)
        options.setdefault("criteria", SINGLE_CRITERIA)
    if task == "ddx":
        options.setdefault("conditions", CONDITIONS)
    create_track(db, slug, title=slug.title(), task=task, **options)
    import_questions(db, slug, write_questions(tmp_path, task, regular, gold, ambiguous))


def answer(task: str, behaviour: str, question: Question, rng: np.random.Generator, rater: int = 0
           ) -> dict[str, Any]:
    """The draft's ``task`` part a planted rater of ``behaviour`` (honest, constant, random, or sure: no mistakes
    on clear questions, and on an ambiguous one the answer numbered by the rater id, so raters with consecutive
    ids all differ) fills in."""
    payload = question.payload or {}
    gold = payload.get("gold")
    if behaviour in ("honest", "sure"):  # sure: no mistakes on questions with a clear answer
        if gold is not None:
            given: Any = (CONDITIONS[gold] if task == "ddx" else
                          gold + [i for i in ITEMS if i not in gold] if task == "rank-documents" else gold)
        elif behaviour == "sure" and question.external_id.startswith("u"):
            given = _numbered(task, rater + _hash(question.external_id))
        else:
            given = truth(task, question.external_id)
            if (behaviour == "honest" and rng.random() >= 0.85) or question.external_id.startswith("u"):
                # a mistake, or a question with no clear answer
                given = _random(task, rng)
    elif behaviour == "constant":
        given = {"single": dict.fromkeys(SINGLE_CRITERIA, SCALE[0]), "mcq": "A", "ddx": CONDITIONS[0],
                 "rank-documents": list(ITEMS)}[task]
    else:
        given = _random(task, rng)
    if task == "single":
        return {"levels": dict(given)}
    if task == "mcq":
        return {"blind": [given], "blind_none": False, "missing": "no", "blind_final": True, "verdict": "correct",
                "seen": [], "reason": ""}  # blind_final: step 1's Next was pressed before the key (as the pages do)
    if task == "ddx":
        return {"slots": [{"name": given, "tie": False}]}
    return {"order": list(given), "shown": list(ITEMS)}


def _numbered(task: str, number: int) -> Any:
    if task == "single":
        return {c: SCALE[(number + i) % len(SCALE)] for i, c in enumerate(SINGLE_CRITERIA)}
    if task == "mcq":
        return LETTERS[number % len(LETTERS)]
    if task == "ddx":
        return CONDITIONS[number % len(CONDITIONS)]
    return ITEMS[number % len(ITEMS):] + ITEMS[:number % len(ITEMS)]


def _random(task: str, rng: np.random.Generator) -> Any:
    if task == "single":
        return {c: SCALE[int(rng.integers(len(SCALE)))] for c in SINGLE_CRITERIA}
    if task == "mcq":
        return LETTERS[int(rng.integers(len(LETTERS)))]
    if task == "ddx":
        return CONDITIONS[int(rng.integers(len(CONDITIONS)))]
    return [ITEMS[i] for i in rng.permutation(len(ITEMS))]


def answer_one(db: Database, rater: int, slug: str, task: str, behaviour: str, rng: np.random.Generator
               ) -> str | None:
    """Claim and submit one question; the item id, "paused", or None (nothing left)."""
    claim = claim_next(db, rater, slug)
    if claim.assignment_id is None:
        return "paused" if claim.reason == "paused" else None
    with db.writing() as session:
        assignment = session.get(Assignment, claim.assignment_id)
        assert assignment is not None
        question = session.get(Question, assignment.question_id)
        assert question is not None
        draft = empty_draft()
        draft["task"] = answer(task, behaviour, question, rng, rater)
        save_draft(session, assignment.id, draft)
        token, item = assignment.form_token, question.external_id
    result = submit(db, rater, claim.assignment_id, token)
    assert result.status == "created", result
    return item


def work_in_rounds(db: Database, slug: str, task: str, behaviours: dict[int, str], rounds: int, seed: int = 0,
                   after: Any = None) -> dict[int, list[str]]:
    """Every rater answers one question per round (as they would in parallel) until paused or out of work;
    ``after()`` runs after each submission (e.g. the adaptive refresh the submit route schedules)."""
    rng = np.random.default_rng(seed)
    done: dict[int, list[str]] = {rater: [] for rater in behaviours}
    for _ in range(rounds):
        for rater, items in done.items():
            if not items or items[-1] not in ("None", "paused"):
                items.append(str(answer_one(db, rater, slug, task, behaviours[rater], rng)))
                if after is not None:
                    after()
    return done


def track_of(db: Database, slug: str = "t") -> Track:
    from sqlalchemy import select

    with db.reading() as session:
        return session.scalars(select(Track).where(Track.slug == slug)).one()


def store_answers(db: Database, slug: str, task: str, behaviours: dict[int, str], seed: int = 0) -> None:
    """Every rater answers every regular question of the track, written straight into the database in one
    transaction (an assignment, done, and a submission whose payload is what the submit stores: the task type's
    :meth:`~stableval.portal.tasks.base.TaskType.answer`). Faster than the claim flow, for the diagnostics tests."""
    from sqlalchemy import select

    from stableval.portal.store.models import Submission, utcnow
    from stableval.portal.tasks.registry import TASKS as TASK_TYPES

    rng = np.random.default_rng(seed)
    now = utcnow()
    with db.writing() as session:
        track = session.scalars(select(Track).where(Track.slug == slug)).one()
        questions = session.scalars(select(Question).where(Question.track_id == track.id, Question.gold == "")
                                    .order_by(Question.id)).all()
        for question in questions:
            for rater, behaviour in behaviours.items():
                draft = {**empty_draft(), "task": answer(task, behaviour, question, rng, rater)}
                token = f"t-{rater}-{question.id}"
                assignment = Assignment(question_id=question.id, rater_id=rater, status="done", swapped=False,
                                        form_token=token, claimed_at=now, expires_at=now)
                session.add(assignment)
                session.flush()
                session.add(Submission(assignment_id=assignment.id, question_id=question.id, rater_id=rater,
                                       form_token=token, shown_a="", shown_b="", flagged=False, submitted_at=now,
                                       payload={**TASK_TYPES[task].answer(draft["task"], track, question),
                                                "time_ms": {}}))
