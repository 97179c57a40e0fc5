"""Admin pages (separate credential): tracks, question import, invites, progress, retire/restore, export,
live results.

Every route here requires the admin credential: a session signed in at ``/admin/login`` with the current admin
token (a session signed in with an older token, or ended by signing out, no longer counts), or an
``Authorization: Bearer <token>`` header (for scripts; only such a request skips the CSRF check). Anything else
gets 401. Failed admin credentials, by the form or a Bearer token, count against one limit per client and one for
everyone (:func:`~stableval.portal.web.common.admin_credential`).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from stableval.data.files.formats import ALLOWED_FORMATS, FORMATS
from stableval.errors import StableValError
from stableval.portal.admin.export import EXPORT_FORMATS, EXPORT_KINDS, export_table, to_bytes
from stableval.portal.admin.live_diagnostics import track_diagnostics
from stableval.portal.admin.manage import (
    change_track,
    create_invites,
    create_track,
    end_rater_sessions,
    import_questions,
    read_invite_notes,
    reissue_invite,
    revoke_invite,
    revoke_session,
    session_revoked,
    set_rater_disabled,
    set_retired,
)
from stableval.portal.admin.progress import admin_overview, track_detail
from stableval.portal.store.answers import task_of
from stableval.portal.store.security import new_token
from stableval.portal.tasks.registry import TASKS
from stableval.portal.web.common import (
    ADMIN_SESSION_HOURS,
    admin_credential,
    check_body,
    page,
    portal_of,
    read_form,
    see_other,
    session_of,
    set_session,
    storable_form,
)
from stableval.portal.work.adaptive import track_quotas
from stableval.portal.work.quality import OVERRIDES, set_override, track_quality
from stableval.portal.work.question_queue import decide, list_proposals

router = APIRouter(prefix="/admin")
MEDIA = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}


#: The status notices an admin page shows after an action, by the key its address carries (``?m=imported&n=3``):
#: never text from the address itself.
NOTICES = {"track-created": "Track created", "routing-saved": "Routing saved", "about-saved": "Study text saved",
           "imported": "Imported {n} questions",
           "qc-allow": "Quality control: rater-{n} allow", "qc-pause": "Quality control: rater-{n} pause",
           "qc-auto": "Quality control: rater-{n} auto", "proposal-accept": "Proposal {n} accepted",
           "proposal-reject": "Proposal {n} rejected", "revoke-invite": "Invite link revoked (rater-{n})",
           "end-sessions": "Signed out everywhere (rater-{n})", "disable": "Rater disabled (rater-{n})",
           "enable": "Rater enabled (rater-{n})"}


def _notice(request: Request) -> str | None:
    """The page's status notice: the one :data:`NOTICES` names by ``m``, with the number ``n`` (or None)."""
    text = NOTICES.get(request.query_params.get("m", ""))
    number = request.query_params.get("n", "")
    if text is None or ("{n}" in text and not (number.isascii() and number.isdigit() and len(number) <= 12)):
        return None
    return text.format(n=number)


def _done(url: str, key: str, number: int | None = None) -> Response:
    """Redirect to ``url`` with the notice ``key`` of :data:`NOTICES`."""
    return see_other(f"{url}?m={key}" + ("" if number is None else f"&n={number}"))


def _bearer_admin(request: Request) -> bool:
    """Whether the request carries ``Authorization: Bearer <the admin token>`` (any other header: no); a Bearer
    token is checked within the limits on failed admin credentials (:func:`admin_credential`), once per request."""
    found = getattr(request.state, "bearer_admin", None)
    if found is None:
        header = request.headers.get("authorization", "")
        found = header[:7].lower() == "bearer " and admin_credential(request, header[7:].strip())
        request.state.bearer_admin = found
    return bool(found)


def _session_admin(request: Request) -> bool:
    """Whether the session was signed in with the current admin token, at most :data:`ADMIN_SESSION_HOURS` ago, and
    has not been signed out."""
    portal = portal_of(request)
    session = session_of(request)
    if session.get("admin") != portal.admin_tag or not isinstance(session.get("sid"), str):
        return False
    issued = session.get("iat")
    if not isinstance(issued, int) or time.time() * 1000 - issued > ADMIN_SESSION_HOURS * 3600 * 1000:
        return False  # signed in too long ago: sign in again
    return not session_revoked(portal.db, session["sid"])


def _is_admin(request: Request) -> bool:
    return _bearer_admin(request) or _session_admin(request)


def _require_admin(request: Request) -> None:
    if not _is_admin(request):
        raise HTTPException(status_code=401, detail="Admin sign-in required: go to /admin/login.")


async def _admin_form(request: Request, *, files: bool = False) -> Any:
    _require_admin(request)
    if _bearer_admin(request):  # the valid bearer token itself: a script, no cookie to forge a request with
        check_body(request, files=files)
        return storable_form(await request.form())
    return await read_form(request, files=files)


@router.get("/login")
def login_page(request: Request) -> Response:
    return page(request, "admin_login.html", error=None)


@router.post("/login")
async def login(request: Request) -> Response:
    """Sign in with the admin token (within the limits on failed admin credentials: :func:`admin_credential`). The
    session then names this browser (``device``): its later sign-ins have an allowance of their own."""
    form = await read_form(request)
    if not admin_credential(request, str(form.get("token") or "")):
        return page(request, "admin_login.html", status_code=401, error="That admin token is not right.")
    device = session_of(request).get("device")
    set_session(request, admin=portal_of(request).admin_tag, sid=new_token(16), rater=None,  # one role per browser
                device=device if isinstance(device, str) else new_token(12))
    return see_other("/admin")


@router.post("/logout")
async def logout(request: Request) -> Response:
    await read_form(request)
    sid = session_of(request).get("sid")
    if isinstance(sid, str) and len(sid) <= 64:
        revoke_session(portal_of(request).db, sid)  # the old cookie, replayed, is no longer admin
    set_session(request, admin=None, sid=None)
    return see_other("/")


@router.get("")
def index(request: Request) -> Response:
    _require_admin(request)
    overview = admin_overview(portal_of(request).db)
    return page(request, "admin_index.html", rows=overview.tracks, raters=overview.raters,
                message=_notice(request), **_form_context())


@router.get("/new-track")
def new_track_page(request: Request) -> Response:
    """The "New track" form on a page of its own (the admin page has it too)."""
    _require_admin(request)
    return page(request, "admin_track_new.html", values=None, errors=[], **_form_context())


def _form_context() -> dict[str, Any]:
    """What the "New track" form shows beside the posted values: its sections and fields, from the settings'
    declarations (:func:`stableval.portal.admin.track_form.form_layout`)."""
    from stableval.portal.admin.track_form import form_layout

    return {"layout": form_layout()}


@router.post("/tracks")
async def new_track(request: Request) -> Response:
    """Create a track from the form: the fields are read by :mod:`stableval.portal.admin.track_form` and checked by
    :func:`create_track` (as ``stableval portal track``); problems re-show the form (422) with the error summary."""
    from stableval.errors import InputError
    from stableval.portal.admin.track_form import FIELDS, field_error, form_problems

    form = await _admin_form(request, files=True)
    uploads = {name: (Path(value.filename).name, await value.read()) for name, value in form.items()
               if name in FIELDS and hasattr(value, "read") and value.filename}
    values = {name: str(value) for name, value in form.items() if isinstance(value, str) and name != "csrf"}
    slug, settings, errors = form_problems(values, files=uploads)  # every problem at once
    if not errors:  # what only storing can find: a track of that name exists
        try:
            create_track(portal_of(request).db, slug, settings)
        except InputError as error:
            errors = [field_error(error)]
    if errors:
        return page(request, "admin_track_new.html", status_code=422, values=values,
                    errors=[(e.field, e.message) for e in errors], **_form_context())
    return _done("/admin", "track-created")


@router.get("/tracks/{slug}")
def track_page(request: Request, slug: str) -> Response:
    _require_admin(request)
    detail = track_detail(portal_of(request).db, slug)
    if detail is None:
        raise HTTPException(status_code=404, detail="No such track.")
    return page(request, "admin_track.html", track=detail.track, items=detail.questions, flagged=detail.flagged,
                kinds=EXPORT_KINDS, formats=EXPORT_FORMATS, message=_notice(request),
                quality=track_quality(portal_of(request).db, slug),
                diagnostics=track_diagnostics(portal_of(request).db, slug),
                quotas=track_quotas(portal_of(request).db, slug), **_task_track_context(request, detail.track))


def _task_track_context(request: Request, track: Any) -> dict[str, Any]:
    """What the track page shows beyond the common sections, as the track's task type describes it: per-rater
    progress, the known answers of gold questions, and for ranking types the agreement with the consensus order."""
    from stableval.portal.admin.order_agreement import MIN_COMPARED, track_order_agreement
    from stableval.portal.admin.track_raters import track_raters

    db = portal_of(request).db
    task = TASKS[track.task_type]
    order = track_order_agreement(db, track.slug) if task.ordering else None
    return {"task": task, "raters": track_raters(db, track.slug), "order_agreement": order,
            "order_min": MIN_COMPARED, "gold_text": lambda question: task.gold_text(track, question)}


def _routing_page(request: Request, slug: str, *, status_code: int = 200, values: dict[str, str] | None = None,
                  errors: list[tuple[str, str]] | None = None) -> Response:
    from stableval.portal.work.scope import routing_of

    try:
        routing = routing_of(portal_of(request).db, slug)
    except StableValError:
        raise HTTPException(status_code=404, detail="No such track.") from None
    return page(request, "admin_track_routing.html", status_code=status_code, routing=routing, values=values,
                errors=errors or [], message=_notice(request))


@router.get("/tracks/{slug}/routing")
def routing_page(request: Request, slug: str) -> Response:
    """A track's specialty list and fallback, editable (see :func:`stableval.portal.work.scope.set_routing`)."""
    _require_admin(request)
    return _routing_page(request, slug)


@router.post("/tracks/{slug}/routing")
async def change_routing(request: Request, slug: str) -> Response:
    """Save the routing form; a refused change re-shows it (422) with the error beside its field."""
    from stableval.errors import InputError
    from stableval.portal.work.scope import set_routing

    form = await _admin_form(request)
    values = {"specialties": str(form.get("specialties") or ""), "fallback": str(form.get("fallback") or "")}
    try:
        set_routing(portal_of(request).db, slug, specialties=values["specialties"] or None,
                    fallback=values["fallback"])
    except InputError as error:
        if error.column == "track":
            raise HTTPException(status_code=404, detail="No such track.") from None
        from stableval.portal.admin.track_form import field_error

        problem = field_error(error, "fallback" if error.column == "fallback" else "specialties")
        return _routing_page(request, slug, status_code=422, values=values,
                             errors=[(problem.field, problem.message)])
    return _done(f"/admin/tracks/{slug}/routing", "routing-saved")


def _about_page(request: Request, slug: str, *, status_code: int = 200, values: dict[str, Any] | None = None,
                errors: list[tuple[str, str]] | None = None) -> Response:
    from stableval.portal.admin.track_form import change_fields

    detail = track_detail(portal_of(request).db, slug)
    if detail is None:
        raise HTTPException(status_code=404, detail="No such track.")
    track = detail.track
    shown = values or {f.name: getattr(track, f.name) for f in change_fields()}
    return page(request, "admin_track_about.html", status_code=status_code, track=track, fields=change_fields(),
                values=shown, errors=errors or [], message=_notice(request))


@router.get("/tracks/{slug}/about")
def about_page(request: Request, slug: str) -> Response:
    """The track's "Edit" form: the settings that may change once it exists (its title, overview, rater
    instructions and whether it is public; see :func:`stableval.portal.admin.manage.change_track`)."""
    _require_admin(request)
    return _about_page(request, slug)


@router.post("/tracks/{slug}/about")
async def change_about(request: Request, slug: str) -> Response:
    """Save the "Edit" form; a refused change re-shows it (422) with the error beside its field."""
    from stableval.errors import InputError
    from stableval.portal.admin.track_form import change_arguments, field_error

    form = await _admin_form(request)
    changes = change_arguments({name: value for name, value in form.items() if isinstance(value, str)})
    try:
        change_track(portal_of(request).db, slug, **changes)
    except InputError as error:
        if error.column is None and error.problem == "no such track":
            raise HTTPException(status_code=404, detail="No such track.") from None
        problem = field_error(error)
        return _about_page(request, slug, status_code=422, values=changes, errors=[(problem.field, problem.message)])
    return _done(f"/admin/tracks/{slug}/about", "about-saved")


@router.post("/tracks/{slug}/quality/{rater_id}/{state}")
async def quality_override(request: Request, slug: str, rater_id: int, state: str) -> Response:
    """Quality control: allow a rater whatever their gold accuracy, pause them, or let the threshold decide."""
    await _admin_form(request)
    if state not in OVERRIDES:
        raise HTTPException(status_code=404, detail=f"Unknown decision; use one of {', '.join(OVERRIDES)}.")
    try:
        set_override(portal_of(request).db, slug, rater_id, state)
    except StableValError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    return _done(f"/admin/tracks/{slug}", f"qc-{state}", rater_id)


@router.get("/tracks/{slug}/results")
def results_page(request: Request, slug: str, criterion: str | None = None) -> Response:
    """The track's live results, as its task type shows them (agreement and leaderboards per criterion for a
    pairwise track, :mod:`stableval.portal.tasks.pairwise_results`; a summary of the answers for the others)."""
    _require_admin(request)
    db = portal_of(request).db
    try:
        template, context = TASKS[task_of(db, slug)].results(db, slug, criterion or None)
    except StableValError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    return page(request, template, **context)


@router.post("/tracks/{slug}/import")
async def import_file(request: Request, slug: str) -> Response:
    form = await _admin_form(request, files=True)
    upload = form.get("file")
    if upload is None or not hasattr(upload, "read") or not upload.filename:
        raise HTTPException(status_code=422, detail="Choose a CSV, TSV, JSONL or Parquet file to import.")
    with tempfile.TemporaryDirectory() as folder:
        path = await _saved_upload(upload, Path(folder))
        try:
            count = import_questions(portal_of(request).db, slug, path, source=Path(upload.filename).name)
        except StableValError as error:
            raise HTTPException(status_code=422, detail=f"Nothing imported: {error}") from None
    return _done(f"/admin/tracks/{slug}", "imported", count)


async def _saved_upload(upload: Any, folder: Path) -> Path:
    """The uploaded file written to ``folder`` under a name of the server's (``upload.csv``: the client's name
    only gives the format, one of the known suffixes; 422 otherwise)."""
    suffix = Path(upload.filename).suffix.lower()
    if suffix not in FORMATS:
        raise HTTPException(status_code=422, detail=f"Choose a file of a known format: {ALLOWED_FORMATS}.")
    path = folder / f"upload{suffix}"
    path.write_bytes(await upload.read())
    return path


@router.post("/items/{question_id}/{action}")
async def retire(request: Request, question_id: int, action: str) -> Response:
    await _admin_form(request)
    if action not in ("retire", "restore"):
        raise HTTPException(status_code=404, detail="Unknown action.")
    try:
        slug = set_retired(portal_of(request).db, question_id, action == "retire")
    except StableValError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    return see_other(f"/admin/tracks/{slug}")


@router.get("/proposals")
def proposals_page(request: Request) -> Response:
    """The review queue of questions proposed by raters (pending first), with accept and reject."""
    _require_admin(request)
    db = portal_of(request).db
    return page(request, "admin_proposals.html", pending=list_proposals(db, status="pending"),
                decided=[p for p in list_proposals(db, status=None) if p.status != "pending"][-50:],
                message=_notice(request))


@router.post("/proposals/{proposal_id}/{decision}")
async def proposal_decision(request: Request, proposal_id: int, decision: str) -> Response:
    """Accept a proposed question for its track, or reject it with a reason."""
    form = await _admin_form(request)
    if decision not in ("accept", "reject"):
        raise HTTPException(status_code=404, detail="Unknown decision; use accept or reject.")
    try:
        decide(portal_of(request).db, proposal_id, accept=decision == "accept", reason=str(form.get("reason") or ""))
    except StableValError as error:
        raise HTTPException(status_code=422, detail=f"Not decided: {error}") from None
    return _done("/admin/proposals", f"proposal-{decision}", proposal_id)


#: What the admin may do to a rater (each but new-invite ends with its notice of :data:`NOTICES`).
RATER_ACTIONS = ("revoke-invite", "end-sessions", "disable", "enable", "new-invite")


@router.post("/raters/{rater_id}/{action}")
async def rater_action(request: Request, rater_id: int, action: str) -> Response:
    """Revoke a rater's invite link, issue a new one, sign them out everywhere, disable or enable them."""
    await _admin_form(request)
    if action not in RATER_ACTIONS:
        raise HTTPException(status_code=404, detail=f"Unknown action; use one of {', '.join(RATER_ACTIONS)}.")
    db = portal_of(request).db
    try:
        if action == "new-invite":
            invite = reissue_invite(db, rater_id)
            base = str(request.base_url).rstrip("/")
            return page(request, "admin_invites.html", invites=[(invite.note or f"rater-{rater_id}",
                                                                 invite.link(base))])
        if action == "revoke-invite":
            revoke_invite(db, rater_id)
        elif action == "end-sessions":
            end_rater_sessions(db, rater_id)
        else:
            set_rater_disabled(db, rater_id, action == "disable")
    except StableValError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    return _done("/admin", action, rater_id)


@router.post("/invites")
async def invites(request: Request) -> Response:
    form = await _admin_form(request, files=True)
    notes = [line.strip() for line in str(form.get("notes") or "").splitlines() if line.strip()]
    upload = form.get("file")
    if upload is not None and hasattr(upload, "read") and upload.filename:
        with tempfile.TemporaryDirectory() as folder:
            path = await _saved_upload(upload, Path(folder))
            try:
                notes += read_invite_notes(path, source=Path(upload.filename).name)
            except StableValError as error:
                raise HTTPException(status_code=422, detail=f"No invites created: {error}") from None
    if not notes or len(notes) > 10_000:
        raise HTTPException(status_code=422, detail="Give one invitee per line (1 to 10,000), or a CSV file with "
                                                    "a note, email or name column.")
    try:
        created = create_invites(portal_of(request).db, notes,
                                 tracks=[str(slug) for slug in form.getlist("tracks")] or None)
    except StableValError as error:
        raise HTTPException(status_code=422, detail=f"No invites created: {error}") from None
    base = str(request.base_url).rstrip("/")
    return page(request, "admin_invites.html", invites=[(i.note, i.link(base)) for i in created])


@router.get("/tracks/{slug}/export")
def export_file(request: Request, slug: str, kind: str = "annotations", format: str = "csv",
                criterion: str | None = None) -> Response:
    _require_admin(request)
    if kind not in EXPORT_KINDS or format not in EXPORT_FORMATS:
        raise HTTPException(status_code=422, detail=f"kind must be one of {', '.join(EXPORT_KINDS)}; format one "
                                                    f"of {', '.join(EXPORT_FORMATS)}.")
    try:
        result = export_table(portal_of(request).db, kind, track=slug, criterion=criterion or None)  # any task type
    except StableValError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    name = f"{slug}-{kind}{'-' + criterion if criterion else ''}.{format}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if result.notes:
        headers["X-Stableval-Notes"] = " | ".join(result.notes)
    return Response(to_bytes(result.frame, format), media_type=MEDIA[format], headers=headers)
