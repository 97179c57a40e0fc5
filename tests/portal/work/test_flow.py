"""The rater flow through the HTTP handlers, on SQLite and PostgreSQL: drafts, steps, the confirm page and the
atomic submit (leases handed over, long reasons, retired questions, parallel claims; each regression of the portal
security review says so in its docstring)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

from portal_helpers import (
    CRITERIA,
    claim,
    complete_one,
    csrf_of,
    fill_steps,
    pairwise_form,
    profiled_raters,
    questions_frame,
    rating_form,
    row_count,
    seed_track,
    signed_in_rater,
    submit_form,
)
from sqlalchemy import func, select

from stableval.portal.admin.manage import set_retired
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Draft, Judgment, Question, Submission, utcnow
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.flow import MAX_TEXT, empty_draft, save_draft, submit


def test_complete_flow_records_everything(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path, questions_frame(2))
    page = client.get("/progress")
    assert "2</strong> questions remaining in track <strong><bdi>Main" in page.text
    assignment, html = claim(client)
    assert "Step 1 of 2" in html and 'role="radiogroup"' in html and "Question <strong>" in html
    answer = client.post(f"/a/{assignment}/pairwise", data=pairwise_form(csrf_of(html), "b",
                                                                         **{"why-accuracy": "B cites trials"}))
    assert "Step 2 of 2" in answer.text and "B is better" in answer.text and "rate A at most B" in answer.text
    answer = client.post(f"/a/{assignment}/rating", data=rating_form(csrf_of(answer.text), a="2", b="5"))
    assert "Check and submit" in answer.text and "B cites trials" in answer.text
    done = client.post(f"/a/{assignment}/submit", data=submit_form(answer.text))
    assert "Your evaluation was saved" in done.text and "1</strong> question remaining" in done.text
    with db.reading() as session:
        submission = session.scalars(select(Submission)).one()
        question = session.get(Question, submission.question_id)
        a = session.get(Assignment, submission.assignment_id)
        judgments = session.scalars(select(Judgment).order_by(Judgment.id)).all()
        drafts = session.scalar(select(func.count()).select_from(Draft))
    assert a.status == "done" and drafts == 0
    expected = (question.model_b, question.model_a) if a.swapped else (question.model_a, question.model_b)
    assert (submission.shown_a, submission.shown_b) == expected  # counterbalancing recorded
    assert [j.criterion for j in judgments] == list(CRITERIA)
    assert {(j.choice, j.rating_a, j.rating_b) for j in judgments} == {("b", 2, 5)}
    assert judgments[3].reason == "B cites trials" and judgments[0].reason == ""
    assert submission.time_pairwise_ms >= 0 and submission.time_rating_ms >= 0
    complete_one(client)
    final = client.get("/progress")
    assert "Thank you!" in final.text and "completed all 2 questions" in final.text


def test_consistency_errors_are_reported_per_criterion_and_fixable(portal: tuple[Any, Any], tmp_path: Path
                                                                   ) -> None:
    client, _ = signed_in_rater(portal, tmp_path, questions_frame(1))
    assignment, html = claim(client)
    answer = client.post(f"/a/{assignment}/pairwise", data=pairwise_form(csrf_of(html), "a"))
    form = rating_form(csrf_of(answer.text), a="4", b="3")
    form["ra-accuracy"], form["rb-accuracy"] = "1", "5"
    form["ra-helpfulness"], form["rb-helpfulness"] = "2", "3"
    del form["rb-completeness"]
    bad = client.post(f"/a/{assignment}/rating", data=form)
    assert bad.status_code == 422
    assert 'id="error-summary"' in bad.text and "There are 3 problems" in bad.text
    assert "Accuracy: you chose A as better, so the rating of A must be at least the rating of B (got A 1, B 5)." \
        in bad.text
    assert 'href="#ra-helpfulness"' in bad.text and 'href="#rb-completeness"' in bad.text
    assert 'id="ra-accuracy"' in bad.text  # the summary links land on the first radio of the group
    assert 'value="1" id="ra-accuracy" checked' in bad.text  # what was chosen is kept
    confirm = client.get(f"/a/{assignment}/confirm")  # cannot skip ahead to submit
    assert "Step 2 of 2" in confirm.text
    fixed = client.post(f"/a/{assignment}/rating", data=rating_form(csrf_of(bad.text), a="5", b="3"))
    assert "Check and submit" in fixed.text


def test_drafts_survive_reload_and_flag_ends_item(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path, questions_frame(1))
    assignment, html = claim(client)
    saved = client.post(f"/a/{assignment}/draft", data={"csrf": csrf_of(html), "step": "pairwise",
                                                        "pw-accuracy": "tie", "why-accuracy": "same facts"})
    assert saved.status_code == 204
    again = client.get(f"/a/{assignment}/pairwise").text
    assert 'value="tie" id="pw-accuracy-tie" checked' in again and "same facts</textarea>" in again
    saved_step = client.post(f"/a/{assignment}/pairwise", data={"csrf": csrf_of(again), "action": "save",
                                                                "pw-accuracy": "b"})
    assert 'value="b" id="pw-accuracy-b" checked' in saved_step.text and 'name="rev" value="1"' in saved_step.text
    stale = client.post(f"/a/{assignment}/draft", data={"csrf": csrf_of(html), "step": "pairwise", "rev": "0",
                                                        "pw-accuracy": "tie"})  # in flight before the save
    assert stale.status_code == 204
    assert 'value="b" id="pw-accuracy-b" checked' in client.get(f"/a/{assignment}/pairwise").text  # not undone
    no_reason = client.post(f"/a/{assignment}/pairwise", data={"csrf": csrf_of(again), "action": "next",
                                                               "flag": "on"})
    assert no_reason.status_code == 422 and "Say why the question does not make sense" in no_reason.text
    flagged = client.post(f"/a/{assignment}/pairwise", data={"csrf": csrf_of(again), "action": "next",
                                                             "flag": "on", "flag_reason": "not a question"})
    assert "You flagged this question" in flagged.text
    client.post(f"/a/{assignment}/submit", data=submit_form(flagged.text))
    with db.reading() as session:
        submission = session.scalars(select(Submission)).one()
        assert submission.flagged and submission.flag_reason == "not a question"
        assert session.scalar(select(func.count()).select_from(Judgment)) == 0


def test_double_submit_creates_one_record(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path, questions_frame(2))
    assignment, html = claim(client)
    form = submit_form(fill_steps(client, assignment, html).text)
    first = client.post(f"/a/{assignment}/submit", data=form)
    second = client.post(f"/a/{assignment}/submit", data=form)  # double click / resubmitted form
    assert first.status_code == second.status_code == 200
    forged = client.post(f"/a/{assignment}/submit", data={**form, "form_token": "x" * 32})
    assert forged.status_code == 200  # already done: idempotent, nothing new
    with db.reading() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
        assert session.scalar(select(func.count()).select_from(Judgment)) == len(CRITERIA)


def test_wrong_form_token_is_refused(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path, questions_frame(1))
    assignment, html = claim(client)
    answer = fill_steps(client, assignment, html)
    refused = client.post(f"/a/{assignment}/submit", data={**submit_form(answer.text), "form_token": "nope"})
    assert refused.status_code == 400 and "out of date" in refused.text
    with db.reading() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 0


def test_no_questions_for_profile_page(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, _ = signed_in_rater(portal, tmp_path, questions_frame(2, specialty="Neurology"), specialty="cardiology")
    page = client.get("/progress")
    assert "No questions for your profile yet" in page.text and "cardiology" in page.text


def test_late_submit_after_handover_is_refused_and_the_holder_keeps_the_slot(db_url: str,
                                                                                tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F5: lease handover)."""
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(1), k=1, lease_hours=1)
    first, second = profiled_raters(db, 2)
    start = utcnow()
    held = claim_next(db, first, "main", now=start).assignment_id
    assert held is not None
    taken = claim_next(db, second, "main", now=start + timedelta(hours=2)).assignment_id  # lease expired
    assert taken is not None and taken != held
    late = submit(db, first, held, _answer(db, held), now=start + timedelta(hours=2, minutes=1))
    assert late.status == "expired"
    current = submit(db, second, taken, _answer(db, taken), now=start + timedelta(hours=2, minutes=2))
    assert current.status == "created"
    with db.reading() as session:
        assert session.scalars(select(Submission.rater_id)).all() == [second]
        assert session.get(Assignment, held).status == "released"
    db.dispose()


def test_late_submit_with_the_slot_still_free_is_kept(db_url: str, tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F5: lease handover)."""
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(1), k=1, lease_hours=1)
    (first,) = profiled_raters(db, 1)
    start = utcnow()
    held = claim_next(db, first, "main", now=start).assignment_id
    assert held is not None
    assert submit(db, first, held, _answer(db, held), now=start + timedelta(hours=5)).status == "created"
    db.dispose()


def test_long_reasons_are_refused_with_a_message_never_cut(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F9: long reasons)."""
    client, db = signed_in_rater(portal, tmp_path)
    assignment, html = claim(client)
    too_long = "x" * (MAX_TEXT + 1)
    answer = client.post(f"/a/{assignment}/pairwise", data=pairwise_form(csrf_of(html), **{"why-accuracy": too_long}))
    assert answer.status_code == 422 and "5,001 characters" in answer.text and "at most 5,000" in answer.text
    flagged = client.post(f"/a/{assignment}/pairwise", data={"csrf": csrf_of(html), "action": "next", "flag": "on",
                                                             "flag_reason": too_long})
    assert flagged.status_code == 422 and "flag has 5,001 characters" in flagged.text
    confirm = fill_steps(client, assignment, html, **{"why-accuracy": "y" * MAX_TEXT})
    client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text))
    with db.reading() as session:
        reason = session.scalar(select(Judgment.reason).where(Judgment.criterion == "accuracy"))
    assert reason == "y" * MAX_TEXT


def test_submit_stores_only_what_the_confirm_page_showed(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F10: the confirm page bound to a draft)."""
    client, db = signed_in_rater(portal, tmp_path)
    assignment, html = claim(client)
    confirm = fill_steps(client, assignment, html, "a", "4", "3", **{"why-accuracy": "first tab"})
    second_tab = client.get(f"/a/{assignment}/pairwise")
    rev = re.search(r'name="rev" value="(\d+)"', second_tab.text)
    assert rev
    saved = client.post(f"/a/{assignment}/draft", data={"csrf": csrf_of(second_tab.text), "step": "pairwise",
                                                        "rev": rev.group(1), "why-accuracy": "second tab"})
    assert saved.status_code == 204
    stale = client.post(f"/a/{assignment}/submit", data={**submit_form(confirm.text),
                                                         "digest": re.search(r'name="digest" value="([^"]+)"',
                                                                             confirm.text).group(1)})
    assert "changed (in another tab or window)" in stale.text and "second tab" in stale.text
    assert row_count(db, Submission) == 0
    done = client.post(f"/a/{assignment}/submit", data={**submit_form(stale.text), "digest": re.search(
        r'name="digest" value="([^"]+)"', stale.text).group(1)})
    assert "Your evaluation was saved" in done.text
    with db.reading() as session:
        assert session.scalar(select(Judgment.reason).where(Judgment.criterion == "accuracy")) == "second tab"


def test_retired_items_refuse_pages_and_submissions(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F11: retired items)."""
    client, db = signed_in_rater(portal, tmp_path, questions_frame(2))
    assignment, html = claim(client)
    confirm = fill_steps(client, assignment, html)
    with db.reading() as session:
        question_id = session.get(Assignment, assignment).question_id
    set_retired(db, question_id, True)
    answer = client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text))
    assert answer.status_code == 410 and "withdrew this question" in answer.text
    assert client.get(f"/a/{assignment}/pairwise").status_code == 410
    assert row_count(db, Submission) == 0
    following, _ = claim(client)  # the released lease does not block the next question
    assert following and following != assignment


def test_parallel_claims_of_one_rater_give_one_lease(db_url: str, tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F14: parallel claims)."""
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(6), k=3)
    (rater,) = profiled_raters(db, 1)
    with ThreadPoolExecutor(max_workers=8) as pool:
        claims = list(pool.map(lambda _: claim_next(db, rater, "main").assignment_id, range(12)))
    assert None not in claims and len(set(claims)) == 1
    with db.reading() as session:
        assert session.scalar(select(func.count(Assignment.id)).where(Assignment.status == "open")) == 1
    db.dispose()


def _answer(db: Database, assignment_id: int) -> str:
    draft = empty_draft()
    draft["pairwise"] = dict.fromkeys(CRITERIA, "a")
    draft["ratings_a"], draft["ratings_b"] = dict.fromkeys(CRITERIA, "5"), dict.fromkeys(CRITERIA, "3")
    with db.writing() as session:
        save_draft(session, assignment_id, draft)
        token: str = session.get(Assignment, assignment_id).form_token
    return token


def test_a_released_lease_never_comes_back(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F4): a lease released by Disable (or by a submit refused for a
    retired question) came back after Enable (or Restore): the old confirm form was accepted, and the rater holding
    the current lease was refused. Now the current holder wins, always: a released lease's confirm page and its
    submit are refused (410), and nothing of it is stored."""
    from fastapi.testclient import TestClient
    from portal_helpers import invite_tokens, start_rater

    from stableval.portal.admin.manage import set_rater_disabled

    app, db = portal
    seed_track(db, tmp_path, frame=questions_frame(1), k=1)
    for how in ("disable", "retire"):
        if how == "retire":  # a second question, same story through Retire -> Restore
            seed_track(db, tmp_path, slug="second", frame=questions_frame(1), k=1)
        x_token, y_token = invite_tokens(db, 2)
        x, y = TestClient(app), TestClient(app)
        start_rater(x, x_token)
        start_rater(y, y_token)
        slug = "main" if how == "disable" else "second"
        held, html = claim(x, slug)
        assert held
        old_confirm = fill_steps(x, held, html)
        x_id = _rater_of(db, held)
        if how == "disable":
            set_rater_disabled(db, x_id, True)
        else:
            question = _question_of(db, held)
            set_retired(db, question, True)
            assert x.post(f"/a/{held}/submit", data=submit_form(old_confirm.text)).status_code == 410
            set_retired(db, question, False)
        taken, html_y = claim(y, slug)
        assert taken and taken != held
        y_confirm = fill_steps(y, taken, html_y, "b", "2", "4")
        if how == "disable":
            set_rater_disabled(db, x_id, False)
            _sign_in_again(x, x_token)
        assert x.get(f"/a/{held}/confirm").status_code == 410
        late = x.post(f"/a/{held}/submit", data={**submit_form(old_confirm.text),
                                                  "csrf": csrf_of(x.get("/profile").text)})
        assert late.status_code == 410, (how, late.status_code)
        assert y.post(f"/a/{taken}/submit", data=submit_form(y_confirm.text)).status_code == 200
        with db.reading() as session:
            assert session.scalars(select(Submission.rater_id).join(Assignment).where(
                Assignment.id.in_([held, taken]))).all() == [_rater_of(db, taken)], how


def _rater_of(db: Database, assignment_id: int) -> int:
    with db.reading() as session:
        return int(session.get(Assignment, assignment_id).rater_id)


def _question_of(db: Database, assignment_id: int) -> int:
    with db.reading() as session:
        return int(session.get(Assignment, assignment_id).question_id)


def _sign_in_again(client: Any, token: str) -> None:
    """Sign in again with the invite link (the profile is kept)."""
    assert client.get(f"/i/{token}").status_code == 200
