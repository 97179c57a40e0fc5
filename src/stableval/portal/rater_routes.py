"""Rater pages: invite link → profile → progress → pairwise step → rating step → confirm → submit → next.

Every page is a plain HTML form (works without JavaScript); every POST redirects (so a refresh never resubmits,
and each page starts at the top). Raters can open only their own assignments. Every rater request checks that
the rater is not disabled and the session was not ended (:func:`stableval.portal.manage.rater_access`) before
any form is read. Opening a different rater's invite link while signed in asks before switching.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from stableval.errors import InputError
from stableval.portal.access import session_access
from stableval.portal.adaptive import refresh_after_submission
from stableval.portal.assignment import claim_next
from stableval.portal.flow import (
    draft_digest,
    mark_opened,
    merge_form,
    open_assignment,
    step_problems,
    submit,
    update_draft,
)
from stableval.portal.manage import find_rater, normalise_group, rater_for_invite, save_profile
from stableval.portal.models import Assignment, Question, Track
from stableval.portal.progress import rater_progress
from stableval.portal.question_queue import MAX_PROMPT, proposal_tracks, propose
from stableval.portal.rules import CHOICE_LABELS, RATINGS, rule_hint
from stableval.portal.scope import specialty_choices
from stableval.portal.web import client_address, page, portal_of, read_form, session_of, set_session

router = APIRouter()
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _rater_id(request: Request) -> int:
    """The signed-in rater's id; 401 when not signed in or signed out by the study team, 403 when disabled."""
    session = session_of(request)
    rater = session.get("rater")
    if not isinstance(rater, int):
        raise HTTPException(status_code=401, detail="Open the invite link you were sent to start.")
    issued = session.get("iat")
    access = session_access(portal_of(request).db, rater, issued if isinstance(issued, int) else 0)
    if access == "disabled":
        raise HTTPException(status_code=403, detail="Your access to this study has ended. Contact the study team "
                                                    "if you think this is a mistake.")
    if access != "ok":
        raise HTTPException(status_code=401, detail="You were signed out. Open the invite link you were sent to "
                                                    "sign in again.")
    return rater


@router.get("/")
async def home(request: Request) -> Response:
    if isinstance(session_of(request).get("rater"), int):
        return _see_other("/progress")
    return page(request, "home.html")


def _invited(request: Request, token: str) -> Any:
    portal = portal_of(request)
    if not portal.invite_limiter.allow(client_address(request)):
        raise HTTPException(status_code=429, detail="Too many attempts; wait a minute and try again.",
                            headers={"Retry-After": "60"})
    rater = rater_for_invite(portal.db, token) if token.isascii() else None
    if rater is None:
        raise HTTPException(status_code=404, detail="This invite link is not valid. Check that you copied all "
                                                    "of it, or ask the study team for a new one.")
    if rater.disabled_at is not None:
        raise HTTPException(status_code=403, detail="Your access to this study has ended. Contact the study team "
                                                    "if you think this is a mistake.")
    return rater


def _sign_in(request: Request, rater: Any) -> Response:
    set_session(request, rater=rater.id, admin=None, sid=None)  # one role per browser
    return _see_other("/progress" if rater.profile_at else "/profile")


@router.get("/i/{token}")
def invite(request: Request, token: str) -> Response:
    rater = _invited(request, token)
    current = session_of(request).get("rater")
    if isinstance(current, int) and current != rater.id:  # never switch identity silently (login CSRF)
        return page(request, "switch.html", token=token, current=find_rater(portal_of(request).db, current))
    return _sign_in(request, rater)


@router.post("/i/{token}")
async def invite_switch(request: Request, token: str) -> Response:
    """Confirmed switch from the signed-in rater to the rater of this invite link."""
    await read_form(request)
    return _sign_in(request, _invited(request, token))


@router.get("/profile")
def profile_form(request: Request) -> Response:
    rater = find_rater(portal_of(request).db, _rater_id(request))
    choices = specialty_choices(portal_of(request).db, _rater_id(request))
    return page(request, "profile.html", rater=rater, values=None, errors=[], choices=choices)


@router.post("/profile")
async def profile_save(request: Request) -> Response:
    rater_id = _rater_id(request)
    form = await read_form(request)
    values = {k: str(form.get(k) or "").strip() for k in ("name", "email", "specialty", "subspecialty", "years")}
    errors = []
    if not values["name"]:
        errors.append(("name", "Enter your name."))
    if not _EMAIL.match(values["email"]) or len(values["email"]) > 320:
        errors.append(("email", "Enter an email address such as name@example.org."))
    choices = specialty_choices(portal_of(request).db, rater_id)
    if not values["specialty"]:
        errors.append(("specialty", "Choose your specialty from the list." if choices
                       else "Enter your specialty (for example: general medicine)."))
    elif choices and normalise_group(values["specialty"]) not in choices:  # the track's controlled list
        errors.append(("specialty", "Choose your specialty from the list (it offers the specialties of your "
                                    "tracks)."))
    years = values["years"]
    if not (years.isascii() and years.isdigit() and len(years) <= 2 and int(years) <= 80):  # "²" is a digit too
        errors.append(("years", "Enter your years of experience as a whole number from 0 to 80."))
    for key, width in (("name", 200), ("specialty", 100), ("subspecialty", 100)):
        if len(values[key]) > width:
            errors.append((key, f"Use at most {width} characters."))
    if errors:
        return page(request, "profile.html", status_code=422, rater=None, values=values, errors=errors,
                    choices=choices)
    if not save_profile(portal_of(request).db, rater_id, name=values["name"], email=values["email"],
                        specialty=values["specialty"], subspecialty=values["subspecialty"],
                        years=int(values["years"])):
        raise HTTPException(status_code=401, detail="Unknown rater.")
    return _see_other("/progress")


@router.get("/propose")
def propose_form(request: Request) -> Response:
    """The "submit a question" form: a question for one of the rater's tracks, reviewed by the study team."""
    rater = find_rater(portal_of(request).db, _rater_id(request))
    if rater is None:
        raise HTTPException(status_code=401, detail="Unknown rater.")
    return page(request, "propose.html", rater=rater, values=None, errors=[], max_text=MAX_PROMPT,
                tracks=proposal_tracks(portal_of(request).db, rater.id), sent=request.query_params.get("sent"))


@router.post("/propose")
async def propose_save(request: Request) -> Response:
    rater_id = _rater_id(request)
    form = await read_form(request)
    values = {k: str(form.get(k) or "") for k in ("track", "prompt", "reference", "specialty")}
    try:
        await run_in_threadpool(propose, portal_of(request).db, rater_id, values["track"].strip(),
                                prompt=values["prompt"], reference=values["reference"], specialty=values["specialty"])
    except InputError as error:
        field = error.column if error.column in values else "prompt"
        rater = find_rater(portal_of(request).db, rater_id)
        return page(request, "propose.html", status_code=422, rater=rater, values=values, max_text=MAX_PROMPT,
                    errors=[(field, f"{str(field).capitalize()}: {error.problem}" + (
                        f" (allowed: {error.allowed})" if error.allowed else "") + ".")],
                    tracks=proposal_tracks(portal_of(request).db, rater_id))
    return _see_other("/progress?proposed=1")


@router.get("/progress")
def progress(request: Request) -> Response:
    rater, tracks = rater_progress(portal_of(request).db, _rater_id(request))
    if rater is None:
        raise HTTPException(status_code=401, detail="Unknown rater.")
    if rater.profile_at is None:
        return _see_other("/profile")
    remaining = sum(t.remaining for t in tracks)
    submitted = sum(t.submitted for t in tracks)
    template = "progress.html" if remaining else ("final.html" if submitted else "no_questions.html")
    return page(request, template, tracks=[t for t in tracks if t.remaining or t.submitted], rater=rater,
                submitted=request.query_params.get("saved"), remaining=remaining, total_submitted=submitted,
                proposed=request.query_params.get("proposed"))


@router.post("/tracks/{slug}/next")
async def next_question(request: Request, slug: str) -> Response:
    rater_id = _rater_id(request)
    await read_form(request)
    claim = await run_in_threadpool(claim_next, portal_of(request).db, rater_id, slug)
    if claim.assignment_id is None:
        if claim.reason == "unknown-track":
            raise HTTPException(status_code=404, detail="No such track.")
        if claim.reason == "paused":
            raise HTTPException(status_code=403, detail="Your work in this track is paused for a quality review. "
                                                        "Thank you for your answers so far; the study team will "
                                                        "contact you.")
        return _see_other("/progress")
    return _see_other(f"/a/{claim.assignment_id}/pairwise")


def task_first_step(track: Track) -> str:
    """The first step of the track's task type (its pages live in :mod:`stableval.portal.task_routes`)."""
    from stableval.portal.tasks import TASKS

    return TASKS[track.task_type].first_step


def _load(request: Request, assignment_id: int, rater_id: int | None = None
          ) -> tuple[Assignment, Question, Track, dict[str, Any]]:
    """The rater's own open assignment (404 for anyone else's: raters see only their own work). ``rater_id``: the
    rater this request already checked with :func:`_rater_id` (else it is checked here)."""
    opened = open_assignment(portal_of(request).db, assignment_id,
                             _rater_id(request) if rater_id is None else rater_id)
    if opened is None:
        raise HTTPException(status_code=404, detail="No such question in your list.")
    return opened.assignment, opened.question, opened.track, opened.draft


def _shown(assignment: Assignment, question: Question) -> dict[str, str]:
    """Answers as shown: A/B follow the counterbalancing recorded on the assignment."""
    if assignment.swapped:
        return {"answer_a": question.answer_b, "answer_b": question.answer_a}
    return {"answer_a": question.answer_a, "answer_b": question.answer_b}


#: The radio options of step 1 and step 2 (value, label), for :func:`stableval.portal.render.radio_options`.
CHOICE_OPTIONS = tuple(CHOICE_LABELS.items())
RATING_OPTIONS = tuple((r, "Unable to judge" if r == "na" else r) for r in RATINGS)


def _context(assignment: Assignment, question: Question, track: Track, draft: dict[str, Any]) -> dict[str, Any]:
    return {"assignment": assignment, "question": question, "track": track, "draft": draft,
            "criteria": track.criteria, "choices": CHOICE_LABELS, "ratings": RATINGS, "choice_options": CHOICE_OPTIONS,
            "rating_options": RATING_OPTIONS, **_shown(assignment, question)}


def _refuse_retired(question: Question) -> None:
    if question.retired:
        raise HTTPException(status_code=410, detail="The study team withdrew this question; your answers to it are "
                                                    "not needed. Go to your progress page for the next one.")


def _step_page(request: Request, assignment_id: int, step: str, template: str,
               loaded: tuple[Assignment, Question, Track, dict[str, Any]] | None = None) -> Response:
    assignment, question, track, draft = loaded or _load(request, assignment_id)
    if track.task_type != "pairwise":  # another task type: its own pages (stableval.portal.task_routes)
        return _see_other(f"/a/{assignment_id}/task/{task_first_step(track)}")
    if assignment.status == "done":
        return _see_other("/progress?saved=1")
    _refuse_retired(question)
    if assignment.status != "open":
        raise HTTPException(status_code=410, detail="This question was given to another rater after your time "
                                                    "on it ran out. Go to your progress page for the next one.")
    if step not in draft["opened"]:
        draft = update_draft(portal_of(request).db, assignment_id,
                             lambda current: current if mark_opened(current, step) else None)
    hints = {c["key"]: rule_hint(draft["pairwise"].get(c["key"]), track.rules) for c in track.criteria}
    return page(request, template, errors=[], hints=hints, **_context(assignment, question, track, draft))


@router.get("/a/{assignment_id}/pairwise")
def pairwise_page(request: Request, assignment_id: int) -> Response:
    return _step_page(request, assignment_id, "pairwise", "pairwise.html")


@router.get("/a/{assignment_id}/rating")
def rating_page(request: Request, assignment_id: int) -> Response:
    loaded = _load(request, assignment_id)
    _, _, track, draft = loaded
    if step_problems(draft, track, "pairwise") or draft["flag"]:
        return _see_other(f"/a/{assignment_id}/pairwise")
    return _step_page(request, assignment_id, "rating", "rating.html", loaded)


async def _post_step(request: Request, assignment_id: int, step: str) -> Response:
    rater_id = _rater_id(request)  # signed in (and not revoked) before the body is read
    form = await read_form(request)
    return await run_in_threadpool(_save_step, request, assignment_id, step, form, rater_id)


def _save_step(request: Request, assignment_id: int, step: str, form: Any, rater_id: int) -> Response:
    assignment, question, track, _ = _load(request, assignment_id, rater_id)
    if assignment.status != "open":
        return _see_other("/progress?saved=1" if assignment.status == "done" else "/progress")
    action = str(form.get("action") or "next")

    def change(current: dict[str, Any]) -> dict[str, Any]:
        new = merge_form(current, form, track.criteria, step, finished=action == "next")
        new["rev"] = int(current.get("rev", 0)) + 1  # autosaves rendered before this are now stale
        if action == "next" and step_problems(new, track, step):
            mark_opened(new, step)  # the clock runs on while the rater fixes the form
        elif action == "next" and step == "pairwise" and not new["flag"]:
            mark_opened(new, "rating")  # shown next: its page then only reads (time on task starts here)
        return new

    draft = update_draft(portal_of(request).db, assignment_id, change)
    problems = step_problems(draft, track, step) if action == "next" else []
    if action == "back":
        return _see_other(f"/a/{assignment_id}/pairwise")
    if action == "save":
        return _see_other(f"/a/{assignment_id}/{step}")
    if problems:
        hints = {c["key"]: rule_hint(draft["pairwise"].get(c["key"]), track.rules) for c in track.criteria}
        return page(request, f"{step}.html", status_code=422, errors=problems, hints=hints,
                    **_context(assignment, question, track, draft))
    if step == "pairwise" and not draft["flag"]:
        return _see_other(f"/a/{assignment_id}/rating")
    return _see_other(f"/a/{assignment_id}/confirm")


@router.post("/a/{assignment_id}/pairwise")
async def pairwise_post(request: Request, assignment_id: int) -> Response:
    return await _post_step(request, assignment_id, "pairwise")


@router.post("/a/{assignment_id}/rating")
async def rating_post(request: Request, assignment_id: int) -> Response:
    return await _post_step(request, assignment_id, "rating")


@router.post("/a/{assignment_id}/draft")
async def autosave(request: Request, assignment_id: int) -> Response:
    """Progressive enhancement: the page script saves the form here on every change (no step change)."""
    rater_id = _rater_id(request)
    form = await read_form(request)
    return await run_in_threadpool(_autosave, request, assignment_id, form, rater_id)


def _autosave(request: Request, assignment_id: int, form: Any, rater_id: int) -> Response:
    assignment, _, track, _ = _load(request, assignment_id, rater_id)
    step = str(form.get("step") or "")
    if assignment.status != "open" or step not in ("pairwise", "rating"):
        return Response(status_code=409)
    rev = str(form.get("rev") or "0")

    def change(current: dict[str, Any]) -> dict[str, Any] | None:
        if rev != str(current.get("rev", 0)):
            return None  # sent from a page older than the last step submission: ignore
        return merge_form(current, form, track.criteria, step, finished=False)

    update_draft(portal_of(request).db, assignment_id, change)
    return Response(status_code=204)


@router.get("/a/{assignment_id}/confirm")
def confirm_page(request: Request, assignment_id: int) -> Response:
    assignment, question, track, draft = _load(request, assignment_id)
    if track.task_type != "pairwise":
        changed = "?changed=1" if request.query_params.get("changed") else ""
        return _see_other(f"/a/{assignment_id}/task/confirm{changed}")
    if assignment.status == "done":
        return _see_other("/progress?saved=1")
    problems = step_problems(draft, track, "pairwise")
    if problems:
        return _see_other(f"/a/{assignment_id}/pairwise")
    if not draft["flag"] and step_problems(draft, track, "rating"):
        return _see_other(f"/a/{assignment_id}/rating")
    _refuse_retired(question)
    return page(request, "confirm.html", errors=[], digest=draft_digest(draft),
                changed=bool(request.query_params.get("changed")), **_context(assignment, question, track, draft))


@router.post("/a/{assignment_id}/submit")
async def submit_post(request: Request, assignment_id: int) -> Response:
    rater_id = _rater_id(request)
    form = await read_form(request)
    result = await run_in_threadpool(submit, portal_of(request).db, rater_id, assignment_id,
                                     str(form.get("form_token") or ""),
                                     digest=None if form.get("digest") is None else str(form.get("digest")))
    if result.status in ("created", "duplicate"):
        done = _see_other("/progress?saved=1")
        if result.adaptive:  # adaptive assignment: refresh the track's model when due, after replying
            done.background = BackgroundTask(refresh_after_submission, portal_of(request).db, result.submission_id)
        return done
    if result.status == "changed":
        return _see_other(f"/a/{assignment_id}/confirm?changed=1")
    if result.status == "expired":
        raise HTTPException(status_code=409, detail="Your time on this question ran out and it was given to "
                                                    "another rater, so your answers were not saved. Thank you — go "
                                                    "to your progress page for the next one.")
    if result.status == "retired":
        raise HTTPException(status_code=410, detail="The study team withdrew this question; your answers to it "
                                                    "are not needed. Go to your progress page for the next one.")
    if result.status == "full":
        raise HTTPException(status_code=409, detail="This question already has all the ratings it needs (your "
                                                    "time on it had run out). Thank you — go to your progress page "
                                                    "for the next one.")
    if result.problems:
        return _see_other(f"/a/{assignment_id}/pairwise")
    raise HTTPException(status_code=400, detail="This form is out of date. Reload the page and submit again.")
