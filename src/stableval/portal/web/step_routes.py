"""The rater's question pages, for every task type: each step of the type's form, the autosave, the confirm page
and the submit. The track's task type (:data:`stableval.portal.tasks.registry.TASKS`) gives the steps, their
addresses and templates, what a form changes, what stops the rater and what a submission stores; this module only
routes.

A step lives at ``/a/<assignment>/<step path><step>`` (the type's ``step_path``: ``/a/7/pairwise`` for the
original pairwise type, ``/a/7/task/blind`` for the others) and its confirm page beside it; an address of another
type's step (an old link, the claim's landing) leads to the question's first step. Every page is a plain HTML form
that works without JavaScript, every POST redirects (so a refresh never resubmits, and each page starts at the
top), and raters open only their own assignments. Submitting goes through ``/a/<assignment>/submit`` (one-time
form token, draft digest, leases: :func:`stableval.portal.work.flow.submit`).

>>> router.url_path_for("step_page", assignment_id=7, step="blind")
'/a/7/task/blind'
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from stableval.portal.store.models import Question, utcnow
from stableval.portal.tasks.base import TaskType
from stableval.portal.tasks.registry import TASKS
from stableval.portal.web.common import (
    NOT_YOURS,
    load_assignment,
    page,
    portal_of,
    read_form,
    refuse_closed,
    see_other,
    signed_in_rater,
)
from stableval.portal.work.adaptive import refresh_after_submission
from stableval.portal.work.flow import draft_digest, mark_opened, save_step, submit, update_draft

__all__ = ["router"]

router = APIRouter()


def _check_address(task: TaskType, assignment_id: int, path: str, step: str) -> Response | None:
    """None when ``path``/``step`` is a step of the question's type; a redirect to its first step when it is
    another type's step address; else 404."""
    if path == task.step_path and step in task.steps:
        return None
    if any(path == other.step_path and step in other.steps for other in TASKS.values()):
        return see_other(task.step_url(assignment_id, task.first_step))
    raise HTTPException(status_code=404, detail="No such step for this question.")


def _step_page(request: Request, assignment_id: int, step: str, path: str) -> Response:
    opened = load_assignment(request, assignment_id)
    assignment, question, track, draft = opened.assignment, opened.question, opened.track, opened.draft
    task = TASKS[track.task_type]
    elsewhere = _check_address(task, assignment_id, path, step) or refuse_closed(assignment, question)
    if elsewhere is not None:
        return elsewhere
    instead = task.redirect(draft, step) or task.open_step(draft, track, question, step)
    if instead:
        return see_other(task.step_url(assignment_id, instead))
    if task.needs_prepare(draft, step):
        draft = update_draft(portal_of(request).db, assignment_id,
                             lambda current: _prepare(task, current, assignment.rater_id, question, step))
    return page(request, task.templates[step], errors=[],
                **task.context(assignment, question, track, draft, step, request.query_params))


def _prepare(task: TaskType, draft: dict[str, Any], rater: int, question: Question, step: str
             ) -> dict[str, Any] | None:
    """The first view of a step: its clock starts, and the type prepares what it shows (or None: no change)."""
    started = mark_opened(draft, step)
    prepared = task.prepare(draft, rater, question, step)
    return draft if started or prepared else None


@router.post("/a/{assignment_id}/submit")
async def submit_post(request: Request, assignment_id: int) -> Response:
    rater = signed_in_rater(request)
    form = await read_form(request)
    result = await run_in_threadpool(submit, portal_of(request).db, rater, assignment_id,
                                     str(form.get("form_token") or ""),
                                     digest=None if form.get("digest") is None else str(form.get("digest")))
    if result.status in ("created", "duplicate"):
        done = see_other("/progress?saved=1")
        if result.adaptive:  # adaptive assignment: refresh the track's model when due, after replying
            done.background = BackgroundTask(refresh_after_submission, portal_of(request).db, result.submission_id)
        return done
    if result.status == "changed":
        return see_other(f"/a/{assignment_id}/confirm?changed=1")
    if result.status == "expired":
        raise HTTPException(status_code=409, detail="Your time on this question ran out and it was given to "
                                                    "another rater, so your answers were not saved. Thank you — go "
                                                    "to your progress page for the next one.")
    if result.status == "retired":
        raise HTTPException(status_code=410, detail="The study team withdrew this question; your answers to it "
                                                    "are not needed. Go to your progress page for the next one.")
    if result.status == "released":
        raise HTTPException(status_code=410, detail=NOT_YOURS)
    if result.status == "full":
        raise HTTPException(status_code=409, detail="This question already has all the ratings it needs (your "
                                                    "time on it had run out). Thank you — go to your progress page "
                                                    "for the next one.")
    if result.problems:  # the confirm page sends the rater to the step to complete
        return see_other(f"/a/{assignment_id}/confirm")
    raise HTTPException(status_code=400, detail="This form is out of date. Reload the page and submit again.")


@router.post("/a/{assignment_id}/draft")
@router.post("/a/{assignment_id}/task/draft")
async def autosave(request: Request, assignment_id: int) -> Response:
    """Progressive enhancement: the page script saves the form here on every change (no step change)."""
    rater = signed_in_rater(request)
    form = await read_form(request)
    return await run_in_threadpool(_autosave, request, assignment_id, form, rater)


def _autosave(request: Request, assignment_id: int, form: Any, rater: int) -> Response:
    opened = load_assignment(request, assignment_id, rater)
    assignment, question, track = opened.assignment, opened.question, opened.track
    task = TASKS[track.task_type]
    step = str(form.get("step") or "")
    if assignment.status != "open" or not task.accepts_autosave(opened.draft, step):
        return Response(status_code=409)
    rev = str(form.get("rev") or "0")

    def change(current: dict[str, Any]) -> dict[str, Any] | None:
        if rev != str(current.get("rev", 0)):
            return None  # sent from a page older than the last step submission: ignore
        return task.merge_form(current, form, track, question, step, "save")

    update_draft(portal_of(request).db, assignment_id, change)
    return Response(status_code=204)


def _confirm_page(request: Request, assignment_id: int, path: str) -> Response:
    opened = load_assignment(request, assignment_id)
    assignment, question, track, draft = opened.assignment, opened.question, opened.track, opened.draft
    task = TASKS[track.task_type]
    changed = bool(request.query_params.get("changed"))
    if path != task.step_path:
        return see_other(task.step_url(assignment_id, "confirm") + ("?changed=1" if changed else ""))
    closed = refuse_closed(assignment, question)
    if closed is not None:
        return closed
    pending = task.open_step(draft, track, question, None)
    if pending:
        return see_other(task.step_url(assignment_id, pending))
    return page(request, task.templates["confirm"], errors=[], digest=draft_digest(draft), changed=changed,
                **task.context(assignment, question, track, draft, "confirm"))


@router.get("/a/{assignment_id}/confirm")
def confirm_page(request: Request, assignment_id: int) -> Response:
    return _confirm_page(request, assignment_id, "")


@router.get("/a/{assignment_id}/task/confirm")
def task_confirm_page(request: Request, assignment_id: int) -> Response:
    return _confirm_page(request, assignment_id, "task/")


@router.get("/a/{assignment_id}/task/{step}")
def step_page(request: Request, assignment_id: int, step: str) -> Response:
    return _step_page(request, assignment_id, step, "task/")


@router.get("/a/{assignment_id}/{step}")
def top_step_page(request: Request, assignment_id: int, step: str) -> Response:
    return _step_page(request, assignment_id, step, "")


async def _post_step(request: Request, assignment_id: int, step: str, path: str) -> Response:
    rater = signed_in_rater(request)  # signed in (and not revoked) before the body is read
    form = await read_form(request)
    return await run_in_threadpool(_save_step, request, assignment_id, step, path, form, rater)


@router.post("/a/{assignment_id}/task/{step}")
async def step_post(request: Request, assignment_id: int, step: str) -> Response:
    return await _post_step(request, assignment_id, step, "task/")


@router.post("/a/{assignment_id}/{step}")
async def top_step_post(request: Request, assignment_id: int, step: str) -> Response:
    return await _post_step(request, assignment_id, step, "")


def _save_step(request: Request, assignment_id: int, step: str, path: str, form: Any, rater: int) -> Response:
    opened = load_assignment(request, assignment_id, rater)
    assignment, question, track = opened.assignment, opened.question, opened.track
    task = TASKS[track.task_type]
    if path != task.step_path or step not in task.steps:
        raise HTTPException(status_code=404, detail="No such step for this question.")
    if assignment.status != "open":
        return see_other("/progress?saved=1" if assignment.status == "done" else "/progress")
    action = str(form.get("action") or "next")
    instead = task.redirect(opened.draft, step)
    if instead:  # e.g. the key was shown: the blind answer stays
        return see_other(task.step_url(assignment_id, instead))
    now = utcnow()
    draft = update_draft(portal_of(request).db, assignment_id,
                         lambda current: save_step(current, form, track, question, step, action, now))
    steps, at = task.steps, task.steps.index(step)
    if action == "back" and at > 0:
        return see_other(task.step_url(assignment_id, steps[at - 1]))
    if action != "next":  # save, or an item moved up/down: the same step again
        problems = task.stay_problems(draft, track, question, step)
        if problems:
            return page(request, task.templates[step], status_code=422, errors=problems,
                        **task.context(assignment, question, track, draft, step))
        verb, _, item = action.partition(":")
        moved = f"?moved={quote(item)}&way={verb}" if item and verb in ("up", "down") else ""
        return see_other(task.step_url(assignment_id, step) + moved)  # the moved item's button keeps the focus
    problems = task.problems(draft, track, question, step)
    if problems:
        return page(request, task.templates[step], status_code=422, errors=problems,
                    **task.context(assignment, question, track, draft, step))
    if draft["flag"] or at == len(steps) - 1:
        return see_other(task.step_url(assignment_id, "confirm"))
    return see_other(task.step_url(assignment_id, steps[at + 1]))
