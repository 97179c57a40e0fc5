"""Rater pages: invite link → profile → progress → (a track's instructions, before its first question) → next
question (its pages: :mod:`stableval.portal.web.step_routes`) → progress; the raters' "submit a question" form; and
the landing page, which lists the public tracks with their overview and takes anyone's proposed question for them
(``/submit``: no sign-in, but the CSRF check, the body-size cap and a rate limit per client address apply).

Every page is a plain HTML form (works without JavaScript); every POST redirects (so a refresh never resubmits,
and each page starts at the top). Every rater request checks that the rater is not disabled and the session was
not ended (:func:`stableval.portal.web.common.signed_in_rater`) before any form is read. Opening a different rater's
invite link while signed in asks before switching.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from stableval.errors import InputError
from stableval.portal.admin.manage import find_rater, normalise_group, rater_for_invite, save_profile
from stableval.portal.admin.progress import rater_progress
from stableval.portal.tasks.registry import TASKS
from stableval.portal.web.common import (
    client_address,
    page,
    portal_of,
    read_form,
    see_other,
    session_of,
    set_session,
    signed_in_rater,
)
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.question_queue import (
    MAX_CONTACT,
    MAX_PROMPT,
    proposal_tracks,
    propose,
    propose_public,
    public_tracks,
)
from stableval.portal.work.scope import specialty_choices

router = APIRouter()
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@router.get("/")
async def home(request: Request) -> Response:
    if isinstance(session_of(request).get("rater"), int):
        return see_other("/progress")
    return page(request, "home.html", tracks=public_tracks(portal_of(request).db),
                sent=request.query_params.get("sent"))


@router.get("/submit")
def submit_form(request: Request) -> Response:
    """Anyone's "submit a question" form, for the public tracks (none: 404)."""
    tracks = public_tracks(portal_of(request).db)
    if not tracks:
        raise HTTPException(status_code=404, detail="No study takes questions from this page at the moment.")
    chosen = str(request.query_params.get("track") or "")
    return page(request, "submit.html", tracks=tracks, chosen=chosen, values=None, errors=[], max_text=MAX_PROMPT,
                max_contact=MAX_CONTACT)


@router.post("/submit")
async def submit_save(request: Request) -> Response:
    """Store anyone's proposed question for a public track (pending review); at most
    :data:`~stableval.portal.web.common.PROPOSE_RATE` sends per client address and hour (429 after)."""
    form = await read_form(request)
    portal = portal_of(request)
    if not portal.propose_limiter.allow(client_address(request)):
        raise HTTPException(status_code=429, detail="Too many questions sent from your address; wait an hour and "
                                                    "try again.", headers={"Retry-After": "3600"})
    values = {k: str(form.get(k) or "") for k in ("track", "prompt", "reference", "specialty", "contact")}
    try:
        await run_in_threadpool(propose_public, portal.db, values["track"].strip(), prompt=values["prompt"],
                                reference=values["reference"], specialty=values["specialty"],
                                contact=values["contact"])
    except InputError as error:
        field = error.column if error.column in values else "prompt"
        tracks = public_tracks(portal.db)
        if not tracks:
            raise HTTPException(status_code=404, detail="No study takes questions from this page at the "
                                                        "moment.") from None
        return page(request, "submit.html", status_code=422, tracks=tracks, chosen=values["track"], values=values,
                    max_text=MAX_PROMPT, max_contact=MAX_CONTACT,
                    errors=[(field, f"{str(field).capitalize()}: {error.problem}" + (
                        f" (allowed: {error.allowed})" if error.allowed else "") + ".")])
    return see_other("/?sent=1")


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
    return see_other("/progress" if rater.profile_at else "/profile")


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
    rater = find_rater(portal_of(request).db, signed_in_rater(request))
    choices = specialty_choices(portal_of(request).db, signed_in_rater(request))
    return page(request, "profile.html", rater=rater, values=None, errors=[], choices=choices,
                choose=bool(request.query_params.get("choose")))


@router.post("/profile")
async def profile_save(request: Request) -> Response:
    rater_id = signed_in_rater(request)
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
    return see_other("/progress")


@router.get("/propose")
def propose_form(request: Request) -> Response:
    """The "submit a question" form: a question for one of the rater's tracks, reviewed by the study team."""
    rater = find_rater(portal_of(request).db, signed_in_rater(request))
    if rater is None:
        raise HTTPException(status_code=401, detail="Unknown rater.")
    return page(request, "propose.html", rater=rater, values=None, errors=[], max_text=MAX_PROMPT,
                tracks=proposal_tracks(portal_of(request).db, rater.id), sent=request.query_params.get("sent"))


@router.post("/propose")
async def propose_save(request: Request) -> Response:
    rater_id = signed_in_rater(request)
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
    return see_other("/progress?proposed=1")


@router.get("/progress")
def progress(request: Request) -> Response:
    rater, tracks = rater_progress(portal_of(request).db, signed_in_rater(request))
    if rater is None:
        raise HTTPException(status_code=401, detail="Unknown rater.")
    if rater.profile_at is None:
        return see_other("/profile")
    remaining = sum(t.remaining for t in tracks)
    submitted = sum(t.submitted for t in tracks)
    template = "progress.html" if remaining else ("final.html" if submitted else "no_questions.html")
    return page(request, template, tracks=[t for t in tracks if t.remaining or t.submitted], rater=rater,
                submitted=request.query_params.get("saved"), remaining=remaining, total_submitted=submitted,
                proposed=request.query_params.get("proposed"))


@router.get("/tracks/{slug}/start")
def start_track(request: Request, slug: str) -> Response:
    """A track's rater instructions, before its first question, with the button that claims it."""
    rater, tracks = rater_progress(portal_of(request).db, signed_in_rater(request))
    track = next((t for t in tracks if t.slug == slug), None)
    if rater is None or track is None:
        raise HTTPException(status_code=404, detail="No such track.")
    return page(request, "start.html", track=track)


@router.post("/tracks/{slug}/next")
async def next_question(request: Request, slug: str) -> Response:
    rater_id = signed_in_rater(request)
    await read_form(request)
    claim = await run_in_threadpool(claim_next, portal_of(request).db, rater_id, slug)
    if claim.assignment_id is None:
        if claim.reason == "unknown-track":
            raise HTTPException(status_code=404, detail="No such track.")
        if claim.reason == "profile":  # a specialty list came in: choose from it
            return see_other("/profile?choose=1")
        if claim.reason == "paused":
            raise HTTPException(status_code=403, detail="Your work in this track is paused for a quality review. "
                                                        "Thank you for your answers so far; the study team will "
                                                        "contact you.")
        return see_other("/progress")
    task = TASKS[claim.task]
    return see_other(task.step_url(claim.assignment_id, task.first_step))
