"""The admin live results page: agreement and leaderboards per track and criterion, checked against hand-worked
numbers and independent libraries (krippendorff, statsmodels)."""

from __future__ import annotations

import math
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from portal_helpers import ADMIN, complete_one, invite_tokens, questions_frame, seed_track, start_rater
from sqlalchemy import select

from stableval.errors import InputError
from stableval.portal.admin.manage import create_invites, create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Judgment, Question, Submission, Track, utcnow
from stableval.portal.tasks.pairwise_results import clear_cache, display_tables, pairwise_choices, track_results

BEARER = {"Authorization": f"Bearer {ADMIN}"}


def add(db: Database, slug: str, item: str, rater: int, shown_a: str, choice: str, rating_a: int | None,
        rating_b: int | None, criterion: str = "accuracy") -> None:
    """Store one confirmed submission directly (the rater flow is tested elsewhere): ``shown_a`` is the model
    shown as A; choice and ratings are about the models as shown."""
    with db.writing() as session:
        question = session.scalar(select(Question).join(Track).where(Question.external_id == item,
                                                                     Track.slug == slug))
        assert question is not None
        question_id, model_a, model_b = question.id, question.model_a, question.model_b
        shown_b = model_b if shown_a == model_a else model_a
        token = secrets.token_hex(16)
        assignment = Assignment(question_id=question_id, rater_id=rater, status="done", swapped=shown_a != model_a,
                                form_token=token, expires_at=utcnow() + timedelta(hours=1))
        session.add(assignment)
        session.flush()
        submission = Submission(assignment_id=assignment.id, question_id=question_id, rater_id=rater,
                                form_token=token, shown_a=shown_a, shown_b=shown_b)
        session.add(submission)
        session.flush()
        session.add(Judgment(submission_id=submission.id, criterion=criterion, choice=choice, rating_a=rating_a,
                             rating_b=rating_b))


def raters(db: Database, n: int) -> list[int]:
    return [invite.rater_id for invite in create_invites(db, [f"r{i}" for i in range(n)])]


def two_model_track(db: Database, tmp_path: Path, slug: str = "t", n: int = 4) -> None:
    frame = questions_frame(n)
    frame["model_a"], frame["model_b"] = "X", "Y"
    seed_track(db, tmp_path, slug, frame=frame, criteria=["accuracy"])


def worked_case(db: Database) -> None:
    """X beats Y in 3 of 4 votes, with X shown as A in some and as B in others:

    q0: r1 sees X as A, picks A (X); r2 sees X as B, picks B (X).  q1: r1 sees Y as A, picks B (X); r2 sees X as A,
    picks B (Y). Ratings (X, Y): q0 (5, 2) and (4, 2); q1 (4, 3) and (3, 4).
    """
    r1, r2 = raters(db, 2)
    add(db, "t", "q0", r1, "X", "a", 5, 2)
    add(db, "t", "q0", r2, "Y", "b", 2, 4)
    add(db, "t", "q1", r1, "Y", "b", 3, 4)
    add(db, "t", "q1", r2, "X", "b", 3, 4)


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Any:
    db = Database(f"sqlite:///{tmp_path / 'portal.db'}")
    db.upgrade()
    clear_cache()
    yield db
    db.dispose()


def test_bradley_terry_matches_hand_worked_mle(sqlite_db: Database, tmp_path: Path) -> None:
    two_model_track(sqlite_db, tmp_path)
    worked_case(sqlite_db)
    res = track_results(sqlite_db, "t", bootstrap=50)
    assert res.messages == ()
    board = res.pairwise.ratings.set_index("agent")  # type: ignore[union-attr]
    # Two agents, 3 wins to 1: the MLE is p(X beats Y) = 3/4, i.e. a gap of 400·log10(3) Elo points around 1000.
    gap = 200 * math.log10(3)
    assert board.loc["X", "rating"] == pytest.approx(1000 + gap, abs=1e-3)
    assert board.loc["Y", "rating"] == pytest.approx(1000 - gap, abs=1e-3)
    assert (board.loc["X", "wins"], board.loc["X", "losses"]) == (3, 1)
    bias = res.pairwise.position_bias.iloc[0]  # type: ignore[union-attr]
    assert (bias["left_wins"], bias["right_wins"]) == (1, 3)  # only r1 on q0 picked the answer shown as A


def test_rating_scores_match_hand_worked_majority_vote(sqlite_db: Database, tmp_path: Path) -> None:
    two_model_track(sqlite_db, tmp_path)
    worked_case(sqlite_db)
    res = track_results(sqlite_db, "t", bootstrap=50)
    scores = res.scores.scores.set_index(["method", "agent"])["score"]  # type: ignore[union-attr]
    # MV, ties split: (q0,X) 5|4 -> (1 + .75)/2; (q1,X) 4|3 -> (.75 + .5)/2; (q0,Y) 2|2 -> .25; (q1,Y) 3|4 -> .625
    assert scores["mv", "X"] == pytest.approx((0.875 + 0.625) / 2)
    assert scores["mv", "Y"] == pytest.approx((0.25 + 0.625) / 2)
    assert set(res.scores.methods) == {"mv", "ds", "stableval"}  # type: ignore[union-attr]
    assert res.items == 2 and res.votes == 4 and res.ratings == 8


def test_agreement_matches_krippendorff_and_statsmodels(sqlite_db: Database, tmp_path: Path) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    two_model_track(sqlite_db, tmp_path)
    worked_case(sqlite_db)
    res = track_results(sqlite_db, "t", bootstrap=50)
    ratings = res.rating_agreement.set_index("statistic")["value"]  # type: ignore[union-attr]
    # units (q0,X) (q0,Y) (q1,X) (q1,Y); rows r1, r2
    data = np.array([[5, 2, 4, 3], [4, 2, 3, 4]], dtype=float)
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level,
                                      value_domain=[1, 2, 3, 4, 5])
        assert ratings[f"krippendorff_alpha_{level}"] == pytest.approx(expected, abs=1e-9), level
    # votes written about X (first alphabetically): q0 both "X better"; q1 "X better" vs "Y better"
    votes = res.vote_agreement.set_index("statistic")["value"]  # type: ignore[union-attr]
    table = np.array([[2, 0, 0, 0], [1, 0, 1, 0]])
    assert votes["fleiss_kappa"] == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-9)
    assert votes["krippendorff_alpha_nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.array([[0, 0], [0, 2]], dtype=float),
                           level_of_measurement="nominal", value_domain=[0, 1, 2, 3]), abs=1e-9)
    assert votes["unanimous_agreement"] == pytest.approx(0.5)


def test_counterbalancing_is_not_disagreement() -> None:
    import pandas as pd

    votes = pd.DataFrame({"item": ["q", "q", "q", "q"], "agent_a": ["X", "Y", "X", "Y"],
                          "agent_b": ["Y", "X", "Y", "X"], "rater": list("abcd"),
                          "winner": ["a", "b", "tie", "tie (bothbad)"]})
    assert pairwise_choices(votes)["label"].tolist() == ["first better", "first better", "tie", "neither good"]
    with pytest.raises(InputError, match="winner"):
        pairwise_choices(votes.assign(winner="maybe"))


def test_too_few_judgments_says_why(sqlite_db: Database, tmp_path: Path) -> None:
    two_model_track(sqlite_db, tmp_path)
    empty = track_results(sqlite_db, "t")
    assert empty.pairwise is None and empty.scores is None and empty.rating_agreement is None
    assert "No confirmed judgments for Accuracy yet" in empty.messages[0]
    (r1,) = raters(sqlite_db, 1)
    add(sqlite_db, "t", "q0", r1, "X", "a", 4, 2)
    one = track_results(sqlite_db, "t")  # the cache notices the new judgment
    assert one.items == 1 and one.pairwise is None and one.rating_agreement is None
    assert any("two raters on the same question" in m for m in one.messages)
    assert any("Too few judgments for a leaderboard" in m for m in one.messages)
    with pytest.raises(InputError, match="criterion"):
        track_results(sqlite_db, "t", "nope")
    with pytest.raises(InputError, match="track"):
        track_results(sqlite_db, "nope")


def test_agent_that_never_lost_and_unable_to_judge_are_reported(sqlite_db: Database, tmp_path: Path) -> None:
    two_model_track(sqlite_db, tmp_path)
    r1, r2 = raters(sqlite_db, 2)
    for item in ("q0", "q1"):
        add(sqlite_db, "t", item, r1, "X", "a", 4, None)
        add(sqlite_db, "t", item, r2, "Y", "b", 2, 5)
    res = track_results(sqlite_db, "t", bootstrap=20)
    assert res.pairwise is None
    assert any(m.startswith("No Bradley–Terry leaderboard yet") for m in res.messages)
    assert "2 'unable to judge' rating(s) left out" in res.notes
    assert res.scores is not None and res.ratings == 6
    tables = display_tables(res)
    assert "bradley_terry" not in tables and tables["scores"]["rows"][0][0] == "X"


def test_cache_reuses_until_a_new_judgment(sqlite_db: Database, tmp_path: Path) -> None:
    two_model_track(sqlite_db, tmp_path)
    worked_case(sqlite_db)
    first = track_results(sqlite_db, "t", bootstrap=20)
    assert track_results(sqlite_db, "t", bootstrap=20) is first
    (r3,) = raters(sqlite_db, 1)
    add(sqlite_db, "t", "q2", r3, "X", "tie", 3, 3)
    again = track_results(sqlite_db, "t", bootstrap=20)
    assert again is not first and again.votes == 5


def test_results_page_through_the_rater_flow(portal: tuple[Any, Database], tmp_path: Path) -> None:
    """SQLite and PostgreSQL: raters submit through the web flow; the admin page shows every section, escaped."""
    from fastapi.testclient import TestClient

    app, db = portal
    clear_cache()
    frame = questions_frame(3)
    frame["model_a"] = "<script>alert(1)</script>Tx"
    frame["model_b"] = "GPT <img src=x onerror=alert(1)>"
    create_track(db, "main", title="<b>Hostile</b> javascript:alert(1)")
    frame.to_csv(tmp_path / "hostile.csv", index=False)
    import_questions(db, "main", tmp_path / "hostile.csv")
    for i, token in enumerate(invite_tokens(db, 2)):
        client = TestClient(app)
        start_rater(client, token)
        for j in range(2):
            complete_one(client, choice="a" if (i + j) % 2 else "b", a="4" if (i + j) % 2 else "2",
                         b="3" if (i + j) % 2 else "5")
    anonymous = TestClient(app)
    assert anonymous.get("/admin/tracks/main/results").status_code == 401
    admin = TestClient(app)
    track_page = admin.get("/admin/tracks/main", headers=BEARER)
    assert 'href="/admin/tracks/main/results"' in track_page.text
    page = admin.get("/admin/tracks/main/results?criterion=accuracy", headers=BEARER)
    assert page.status_code == 200
    for section in ("Bradley–Terry", "MV, DS, STABLEVAL", "Agreement on the pairwise votes",
                    "Agreement on the 1–5 ratings", "B = 200"):
        assert section in page.text, section
    lowered = page.text.lower()
    assert "<script>alert" not in lowered and "onerror=" not in lowered and "javascript:" not in lowered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;Tx" in page.text
    assert admin.get("/admin/tracks/main/results?criterion=nope", headers=BEARER).status_code == 404
    assert admin.get("/admin/tracks/nope/results", headers=BEARER).status_code == 404
