"""Adaptive assignment: planted ambiguous questions get raters beyond k (up to max_k), clear ones stop at k; the
model is refreshed only when due, warm-started from the last fit, in fewer EM iterations than a cold fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from planted_raters import CRITERIA, store
from portal_helpers import ADMIN, complete_one, csrf_of, profiled_raters, questions_frame, seed_track
from sqlalchemy import func, select
from typer.testing import CliRunner

from stableval.aggregate.stableval import Stableval
from stableval.cli import app as cli_app
from stableval.errors import InputError
from stableval.portal.admin.manage import create_track
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, QuestionQuota, Submission
from stableval.portal.tasks.judgments import LEVELS, choice_table
from stableval.portal.work import adaptive
from stableval.portal.work.adaptive import ALPHA_PI, REFRESH_SECONDS, fit_choices, quotas, refresh
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.flow import empty_draft, save_draft, submit

CLEAR, AMBIGUOUS = 16, 4
RATING = {"a": ("5", "3"), "b": ("3", "5"), "tie": ("4", "4"), "neither": ("2", "2")}


@pytest.fixture(autouse=True)
def _fresh_state() -> None:
    adaptive.clear_state()


def _answer(db: Database, rater: int, rng: np.random.Generator) -> bool:
    """Claim and submit one question: on a clear question (q0..q15) every rater gives its answer (a, b, tie or
    neither per criterion) 90% of the time, on an ambiguous one (q16..q19) a random one. False when nothing is left
    for the rater."""
    claim = claim_next(db, rater, "main")
    if claim.assignment_id is None:
        return False
    with db.writing() as session:
        assignment = session.get(Assignment, claim.assignment_id)
        question = session.get(Question, assignment.question_id)
        clear = int(question.external_id[1:]) < CLEAR
        draft = empty_draft()
        if clear:  # the question's own answer per criterion, 90% of the time
            truth = np.random.default_rng(int(question.external_id[1:])).choice(LEVELS, len(CRITERIA))
            as_file = [str(c) for c in np.where(rng.random(len(CRITERIA)) < 0.9, truth,
                                                 rng.choice(LEVELS, len(CRITERIA)))]
        else:  # no consensus
            as_file = [str(c) for c in rng.choice(LEVELS, len(CRITERIA))]
        shown = [{"a": "b", "b": "a"}.get(c, c) if assignment.swapped else c for c in as_file]
        draft["pairwise"] = dict(zip(CRITERIA, shown, strict=True))
        draft["ratings_a"] = {c: RATING[x][0] for c, x in zip(CRITERIA, shown, strict=True)}
        draft["ratings_b"] = {c: RATING[x][1] for c, x in zip(CRITERIA, shown, strict=True)}
        save_draft(session, assignment.id, draft)
        token = assignment.form_token
    assert submit(db, rater, claim.assignment_id, token).status == "created"
    refresh(db, "main")
    return True


def _confirmed(db: Database) -> dict[str, int]:
    with db.reading() as session:
        rows = session.execute(select(Question.external_id, func.count(Submission.id))
                               .join(Submission, Submission.question_id == Question.id)
                               .group_by(Question.external_id)).all()
    return {str(item): int(count) for item, count in rows}


def test_planted_ambiguous_questions_get_extra_raters(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(CLEAR + AMBIGUOUS), k=3, max_k=6, adaptive_threshold=0.8,
               adaptive_every=1)
    raters = profiled_raters(db, 8)
    rng = np.random.default_rng(3)
    active = set(raters)
    for _ in range(20):  # rounds: every rater answers one question per round, as they would in parallel
        for rater in sorted(active):
            if not _answer(db, rater, rng):
                active.discard(rater)
        if not active:
            break
    assert not active  # the pool ran dry
    confirmed = _confirmed(db)
    clear = [confirmed[f"q{q}"] for q in range(CLEAR)]
    ambiguous = [confirmed[f"q{q}"] for q in range(CLEAR, CLEAR + AMBIGUOUS)]
    assert min(clear) == 3 and min(ambiguous) >= 4, confirmed  # every ambiguous question got extra raters ...
    assert sum(n > 3 for n in clear) <= 2, confirmed  # ... and at most 2 of the 16 clear ones (DS is noisy at k=3)
    assert max(clear + ambiguous) <= 6  # never beyond max_k
    assert np.mean(ambiguous) - 3 > 3 * (np.mean(clear) - 3), confirmed
    with db.reading() as session:
        quota = {q.question_id: q for q in session.scalars(select(QuestionQuota))}
        ids = dict(session.execute(select(Question.external_id, Question.id)).all())
    for q in range(CLEAR + AMBIGUOUS):  # the stored quota is what was handed out
        assert quota[ids[f"q{q}"]].extra == confirmed[f"q{q}"] - 3 or confirmed[f"q{q}"] == 6
    db.dispose()


def _plant_choices(db: Database, raters: list[int], questions: range, seed: int) -> None:
    rng = np.random.default_rng(seed)
    work = []
    for q in questions:
        truth = rng.choice(["a", "b", "tie"], len(CRITERIA))
        for rater in raters:
            choices = [c if rng.random() < 0.8 else str(rng.choice(["a", "b", "tie", "neither"])) for c in truth]
            work.append((rater, f"q{q}", choices, np.array([[4, 4]] * len(CRITERIA))))
    store(db, work)


def test_warm_start_converges_in_fewer_iterations_than_cold(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(40), k=3, max_k=5, adaptive_every=5)
    raters = profiled_raters(db, 6)
    _plant_choices(db, raters[:5], range(0, 36), seed=1)
    first = refresh(db, "main")
    assert first is not None and not first.warm and first.submissions == 5 * 36
    _plant_choices(db, raters[1:], range(36, 38), seed=2)  # 10 new submissions, one new rater
    second = refresh(db, "main")
    assert second is not None and second is not first and second.warm and second.converged
    table, _, rater_ids = choice_table(db, 1)
    cold = fit_choices(table, rater_ids, None)  # what a refit from scratch gives: STABLEVAL's own multi-start fit
    scratch = Stableval(alpha_pi=ALPHA_PI).fit(table)
    every_start = sum(start["n_iter"] for start in scratch.starts_)
    single = Stableval(alpha_pi=ALPHA_PI, init="paper").fit(table)  # Algorithm 1's one start
    assert cold[4] and second.n_iter < single.n_iter_ and 5 * second.n_iter < every_start, (
        second.n_iter, single.n_iter_, every_start)
    # the same solution: each question's confidence as a cold fit gives it
    best = cold[0].max(axis=1)
    per_item = np.bincount(table.response_item, weights=best) / np.bincount(table.response_item)
    question_ids = np.asarray(table.items, dtype=object).astype(int)
    assert np.allclose([second.confidence[q] for q in question_ids], per_item, atol=0.02)
    db.dispose()


def test_refresh_only_when_due(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(12), k=2, max_k=4, adaptive_every=5)
    raters = profiled_raters(db, 4)
    assert refresh(db, "main") is None  # no judgments yet
    _plant_choices(db, raters[:2], range(0, 5), seed=1)
    first = refresh(db, "main")
    assert first is not None
    _plant_choices(db, raters[2:3], range(0, 1), seed=2)  # one new submission: not due
    assert refresh(db, "main") is first
    assert refresh(db, "main", now=first.refreshed_at + REFRESH_SECONDS + 1) is not first  # ... unless time passed
    timed = refresh(db, "main")
    _plant_choices(db, raters[3:], range(0, 5), seed=3)  # five more: due
    assert refresh(db, "main") is not timed
    create_track(db, "plain", k=3)
    assert refresh(db, "plain") is None  # no max_k: not adaptive
    with pytest.raises(InputError, match="no such track"):
        refresh(db, "nope")
    db.dispose()


def test_quota_rule_by_hand() -> None:
    confirmed = np.array([3, 3, 2, 5, 6, 4])
    confidence = np.array([0.95, 0.5, 0.4, 0.5, 0.1, 0.9])
    # q0 clear at k: 0; q1 uncertain at k: one more; q2 below k: none yet; q3 uncertain at 5: one more (6);
    # q4 uncertain at max_k: capped; q5 clear after one extra: keeps it, no new slot
    assert quotas(confirmed, confidence, k=3, max_k=6, threshold=0.8).tolist() == [0, 1, 0, 3, 3, 1]


def test_max_k_is_validated(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    with pytest.raises(InputError, match=r"max_k out of range.*from k \+ 1 = 4"):
        create_track(db, "t", k=3, max_k=3)
    with pytest.raises(InputError, match="adaptive_threshold"):
        create_track(db, "t", k=3, max_k=5, adaptive_threshold=0)
    result = CliRunner().invoke(cli_app, ["portal", "track", "t", "--k", "3", "--max-k", "2", "--database-url",
                                          db.url])
    assert result.exit_code == 1 and "max_k" in result.output
    db.dispose()


def test_submit_route_refreshes_and_admin_and_cli_show_quotas(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path, k=1, max_k=3, adaptive_every=1)
    from portal_helpers import invite_tokens, start_rater

    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    complete_one(client)  # the background task after the submit fits the model and writes the quotas
    with db.reading() as session:
        assert session.scalar(select(func.count()).select_from(QuestionQuota)) == 1
    admin = TestClient(app)
    login = admin.get("/admin/login")
    admin.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    page = admin.get("/admin/tracks/main")
    assert "Adaptive assignment: a question still uncertain" in page.text and "up to 3" in page.text
    result = CliRunner().invoke(cli_app, ["portal", "adaptive", "main", "--database-url", db.url])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "item,confirmed,k,extra,capacity,confidence" and lines[1].startswith("q0,1,1,")
    assert len(lines) == 1 + 4
    missing = CliRunner().invoke(cli_app, ["portal", "adaptive", "nope", "--database-url", db.url])
    assert missing.exit_code == 1 and "no such track" in missing.output
