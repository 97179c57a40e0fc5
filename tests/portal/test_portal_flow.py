"""The rater flow through the HTTP handlers, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from portal_helpers import (
    CRITERIA,
    claim,
    complete_one,
    csrf_of,
    fill_steps,
    pairwise_form,
    questions_frame,
    rating_form,
    signed_in_rater,
    submit_form,
)
from sqlalchemy import func, select

from stableval.portal.store.models import Assignment, Draft, Judgment, Question, Submission


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
