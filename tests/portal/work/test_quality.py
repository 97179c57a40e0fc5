"""Quality control with planted bad raters: gold questions mixed in at the track's rate, accuracy per rater, the
automatic pause below the threshold, the admin's override, and the qualification set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, CRITERIA, csrf_of, profiled_raters, questions_frame, seed_track
from sqlalchemy import select

from stableval.errors import InputError
from stableval.portal.admin.export import export
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Track
from stableval.portal.tasks.judgments import gold_matches
from stableval.portal.web.app import create_app
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.flow import empty_draft, save_draft, submit
from stableval.portal.work.quality import rater_quality, set_override, track_quality

SWAP = {"a": "b", "b": "a"}


def _frame(regular: int, gold: list[str]) -> pd.DataFrame:
    frame = pd.concat([questions_frame(regular), questions_frame(len(gold), prefix="g")], ignore_index=True)
    frame["gold"] = [""] * regular + gold
    return frame


def _answer_one(db: Database, rater: int, slug: str, honest: bool) -> str | None:
    """Claim and submit one question: an honest rater gives the gold answer (as shown) and prefers A on regular
    questions; a planted bad rater answers "tie" everywhere. Returns the item id, "paused" or None."""
    claim = claim_next(db, rater, slug)
    if claim.assignment_id is None:
        return claim.reason if claim.reason == "paused" else None
    with db.writing() as session:
        assignment = session.get(Assignment, claim.assignment_id)
        question = session.get(Question, assignment.question_id)
        choice = "tie"
        if honest:
            choice = (SWAP.get(question.gold, question.gold) if assignment.swapped else question.gold) or "a"
        draft = empty_draft()
        draft["pairwise"] = dict.fromkeys(CRITERIA, choice)
        high, low = ("5", "3") if choice == "a" else ("3", "5") if choice == "b" else ("3", "3")
        draft["ratings_a"], draft["ratings_b"] = dict.fromkeys(CRITERIA, high), dict.fromkeys(CRITERIA, low)
        save_draft(session, assignment.id, draft)
        token, item = assignment.form_token, question.external_id
    assert submit(db, rater, claim.assignment_id, token).status == "created"
    return item


def _work(db: Database, rater: int, slug: str, honest: bool) -> list[str]:
    done: list[str] = []
    for _ in range(40):
        item = _answer_one(db, rater, slug, honest)
        if item is None or item == "paused":
            done.append(str(item))
            break
        done.append(item)
    return done


def test_gold_matching_undoes_counterbalancing() -> None:
    import numpy as np

    choice = np.array(["a", "a", "b", "tie", "neither"], dtype=object)
    shown_as_file = np.array([True, False, False, False, True])
    gold = np.array(["a", "b", "a", "tie", "tie"], dtype=object)
    assert gold_matches(choice, shown_as_file, gold).tolist() == [True, True, True, True, False]


def test_planted_bad_raters_are_paused_and_good_ones_are_not(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=_frame(12, ["a", "b", "a", "b", "a", "b"]), k=3, gold_rate=0.5,
               qc_threshold=0.7, qc_min_gold=3)
    good, bad = profiled_raters(db, 3), profiled_raters(db, 2)
    work: dict[int, list[str]] = {rater: [] for rater in good + bad}
    for _ in range(30):  # rounds: every rater answers one question per round, as they would in parallel
        for rater, done in work.items():
            if not done or done[-1] not in ("None", "paused"):
                done.append(str(_answer_one(db, rater, "main", honest=rater in good)))
    with db.reading() as session:
        quality = rater_quality(session, session.scalars(select(Track)).one())
    for rater in bad:
        assert work[rater][-1] == "paused", work[rater]
        assert quality[rater].paused and quality[rater].accuracy == 0.0 and quality[rater].gold_answered == 3
        assert sum(not item.startswith("g") for item in work[rater][:-1]) < 12  # stopped before the end
    for rater in good:
        assert work[rater][-1] == "None" and not quality[rater].paused and quality[rater].accuracy == 1.0
        assert 2 <= sum(item.startswith("g") for item in work[rater]) <= 6  # gold mixed in, about half the claims
    rows = export(db, "pairwise", track="main")
    assert not rows.frame["item"].str.startswith("g").any()  # gold questions are quality control, not data
    assert any("gold" in note for note in rows.notes)

    bad_rater = bad[0]
    with db.writing() as session:  # more ratings per question: regular work is left for the bad raters (a gold
        session.scalars(select(Track)).one().k = 4  # question is offered only beside regular work, issue 26)
    set_override(db, "main", bad_rater, "allow")
    assert _answer_one(db, bad_rater, "main", honest=False) not in (None, "paused")  # the admin let them go on
    set_override(db, "main", bad_rater, "auto")
    assert _answer_one(db, bad_rater, "main", honest=False) == "paused"
    set_override(db, "main", good[0], "pause")
    assert claim_next(db, good[0], "main").reason in ("paused", "none")
    with pytest.raises(InputError, match="unknown quality-control decision"):
        set_override(db, "main", good[0], "maybe")
    db.dispose()


def test_qualification_set_comes_first(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=_frame(4, ["a", "b", "tie"]), k=2, gold_rate=0.0, qualification=2,
               qc_threshold=0.8, qc_min_gold=3)
    honest, sloppy = profiled_raters(db, 2)
    first = [_answer_one(db, honest, "main", True) for _ in range(3)]
    assert first[:2] == ["g0", "g1"] and first[2] == "q0"  # qualified: regular questions next, no more gold
    assert [_answer_one(db, sloppy, "main", False) for _ in range(3)] == ["g0", "g1", "paused"]
    db.dispose()


def test_gold_column_is_validated_and_hidden_from_raters(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    create_track(db, "main", gold_rate=1.0)
    path = tmp_path / "gold.csv"
    _frame(1, ["maybe"]).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"row 2, column 'gold'.*a, b, tie or neither"):
        import_questions(db, "main", path)
    _frame(1, ["B"]).to_csv(path, index=False)
    assert import_questions(db, "main", path) == 2
    with pytest.raises(InputError, match="gold_rate"):
        create_track(db, "other", gold_rate=1.5)

    from portal_helpers import claim, invite_tokens, start_rater

    rater = TestClient(app)
    start_rater(rater, invite_tokens(db, 1)[0])
    _, html = claim(rater)
    assert "g0" in html and "gold" not in html.lower()  # the rater is not told


def test_admin_page_shows_accuracy_and_overrides(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path, frame=_frame(4, ["a", "b", "a"]), gold_rate=1.0, qc_min_gold=3)
    (bad,) = profiled_raters(db, 1)
    assert _work(db, bad, "main", honest=False)[-1] == "paused"
    admin = TestClient(app)
    login = admin.get("/admin/login")
    admin.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    page = admin.get("/admin/tracks/main")
    assert "0 / 15" in page.text and "0.0%" in page.text and "paused (below threshold)" in page.text
    done = admin.post(f"/admin/tracks/main/quality/{bad}/allow", data={"csrf": csrf_of(page.text)})
    assert done.status_code == 200 and "allowed by admin" in done.text
    assert [q.override for _, q in track_quality(db, "main")] == ["allow"]
    assert admin.post(f"/admin/tracks/main/quality/{bad}/maybe", data={"csrf": csrf_of(page.text)}
                      ).status_code == 404


def test_cli_lists_accuracy_and_sets_decisions(tmp_path: Path) -> None:
    import io

    from typer.testing import CliRunner

    from stableval.cli import app as cli

    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db = Database(url)
    db.upgrade()
    seed_track(db, tmp_path, frame=_frame(4, ["a", "b", "a"]), gold_rate=1.0, qc_min_gold=3)
    (bad,) = profiled_raters(db, 1)
    assert _work(db, bad, "main", honest=False)[-1] == "paused"
    runner = CliRunner()
    listed = runner.invoke(cli, ["portal", "quality", "main", "--database-url", url])
    assert listed.exit_code == 0, listed.output
    table = pd.read_csv(io.StringIO(listed.stdout))
    assert table.to_dict("records")[0] | {"name": ""} == {
        "rater": f"rater-{bad}", "name": "", "gold_questions": 3, "gold_flagged": 0, "gold_judgments": 15,
        "correct": 0, "accuracy": 0.0, "status": "paused (below threshold)"}
    allowed = runner.invoke(cli, ["portal", "quality", "main", "--rater", f"rater-{bad}", "--set", "allow",
                                  "--database-url", url])
    assert allowed.exit_code == 0 and claim_next(db, bad, "main").assignment_id is not None
    usage = runner.invoke(cli, ["portal", "quality", "main", "--rater", "1", "--database-url", url])
    assert usage.exit_code == 2
    db.dispose()


def test_flagging_every_gold_question_does_not_pass_quality_control(tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F3): flagged gold questions were never judged but counted toward
    the qualification set, so a rater who flagged all three passed it with no gold answer, was never paused and
    was absent from the QC table. Now a flagged gold question counts as answered with every gold judgment wrong:
    the flagger is paused after the qualification set and listed, with their flagged gold questions."""
    url = f"sqlite:///{tmp_path / 'p.db'}"
    db = Database(url)
    db.upgrade()
    seed_track(db, tmp_path, frame=_frame(5, ["a", "a", "a"]), qualification=3)
    flagger, honest = profiled_raters(db, 2)
    for _ in range(3):
        claim = claim_next(db, flagger, "main")
        assert claim.assignment_id is not None
        draft = {**empty_draft(), "flag": True, "flag_reason": "unclear"}
        with db.writing() as session:
            save_draft(session, claim.assignment_id, draft)
            token = session.get(Assignment, claim.assignment_id).form_token
        assert submit(db, flagger, claim.assignment_id, token).status == "created"
    assert _answer_one(db, flagger, "main", honest=True) == "paused"
    assert _work(db, honest, "main", honest=True)[:3] == ["g0", "g1", "g2"]
    standing = {rater.id: q for rater, q in track_quality(db, "main")}
    assert (standing[flagger].gold_answered, standing[flagger].flagged_gold, standing[flagger].correct,
            standing[flagger].judgments, standing[flagger].paused) == (3, 3, 0, 15, True)
    assert (standing[honest].flagged_gold, standing[honest].accuracy, standing[honest].paused) == (0, 1.0, False)
    db.dispose()
    app = create_app(url, admin_token=ADMIN)
    page = TestClient(app).get("/admin/tracks/main", headers={"Authorization": f"Bearer {ADMIN}"}).text
    table = page.split("<h2>Quality control</h2>")[1].split("</table>")[0]
    assert "Gold flagged" in table and f"rater-{flagger}" in table and "<td>3</td>" in table
    app.state.portal.db.dispose()
