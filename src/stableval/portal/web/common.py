"""What the route handlers share: the :class:`Portal` record and the request helpers (session, CSRF, pages, the
signed-in rater and their assignment).

:mod:`stableval.portal.web.app` builds the FastAPI app and stores a :class:`Portal` in ``app.state``; the route
modules (``rater_routes``, ``step_routes``, ``admin_routes``) import only from here, so no route module imports
the app factory.

>>> from types import SimpleNamespace
>>> request = SimpleNamespace(state=SimpleNamespace(session={"nonce": "n1", "admin": True}, session_changed=False))
>>> set_session(request, admin=None, rater=7)
>>> sorted(session_of(request)), session_of(request)["nonce"] != "n1", request.state.session_changed
(['iat', 'nonce', 'rater'], True, True)
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from starlette.datastructures import FormData

from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question
from stableval.portal.store.security import RateLimiter, Signer, same_secret
from stableval.portal.tasks.records import without_controls
from stableval.portal.work.access import session_access
from stableval.portal.work.flow import Opened, open_assignment

__all__ = [
    "ADMIN_SESSION_HOURS",
    "COOKIE",
    "LOGIN_RATE",
    "LOGIN_RATE_ALL",
    "MAX_FORM_BYTES",
    "MAX_UPLOAD_BYTES",
    "NOT_YOURS",
    "PROPOSE_RATE",
    "RATER_IDLE_DAYS",
    "Portal",
    "admin_credential",
    "check_body",
    "client_address",
    "load_assignment",
    "page",
    "portal_of",
    "read_form",
    "refuse_closed",
    "see_other",
    "session_of",
    "set_session",
    "signed_in_rater",
    "storable_form",
]

logger = logging.getLogger("stableval.portal")

#: Name of the signed session cookie.
COOKIE = "stableval_session"
#: Failed admin credential checks (the sign-in form and ``Authorization: Bearer`` alike) allowed per client and
#: minute; a client is a browser that signed in before (its session's ``device``), else an address.
LOGIN_RATE = 10
#: ... and from every client together per minute (browsers that signed in before are exempt): past it, everyone
#: else's admin credentials are refused unchecked until the minute is over.
LOGIN_RATE_ALL = 100
#: An admin session ends this many hours after its sign-in (its ``iat``), whatever its use.
ADMIN_SESSION_HOURS = 12
#: A rater session ends after this many days without use; each use renews it (at most once a day).
RATER_IDLE_DAYS = 30
#: How old a rater session's ``iat`` may get before a request renews it (ms): a day.
_RENEW_MS = 24 * 3600 * 1000
#: Questions anyone may send from the landing page ("Submit a question") per client address and hour.
PROPOSE_RATE = 10
#: Largest body of a plain form post (bytes); larger ones are refused (413) before they are read.
MAX_FORM_BYTES = 1024 * 1024
#: Largest body of an admin file upload (question import, invite list), bytes.
MAX_UPLOAD_BYTES = 64 * 1024 * 1024


@dataclass
class Portal:
    """What the routes share: the database, the signer, the admin token, the rate limiters (invite links, admin
    sign-in and questions sent from the landing page)."""

    db: Database
    signer: Signer
    admin_token: str
    templates: Jinja2Templates
    invite_limiter: RateLimiter
    secure_cookies: bool = False
    login_limiter: RateLimiter = field(default_factory=lambda: RateLimiter(limit=LOGIN_RATE, window=60.0,
                                                                           total=LOGIN_RATE_ALL))
    propose_limiter: RateLimiter = field(default_factory=lambda: RateLimiter(limit=PROPOSE_RATE, window=3600.0))

    @property
    def admin_tag(self) -> str:
        """What an admin session must carry: tied to the current admin token (see :meth:`Signer.admin_tag`)."""
        return self.signer.admin_tag(self.admin_token)


def portal_of(request: Request) -> Portal:
    """The :class:`Portal` of the app serving ``request``."""
    portal: Portal = request.app.state.portal
    return portal


def session_of(request: Request) -> dict[str, Any]:
    """The request's (signed) session: ``nonce`` always; ``rater`` id and/or ``admin`` once signed in."""
    session: dict[str, Any] = request.state.session
    return session


def client_address(request: Request) -> str:
    """The client's address as the server sees it (a proxy's ``X-Forwarded-For`` only when ``stableval serve``
    was told to trust that proxy with ``--forwarded-allow-ips``)."""
    return request.client.host if request.client else "unknown"


def admin_credential(request: Request, given: str) -> bool:
    """Whether ``given`` is the admin token, checked within the limits on failed admin credentials
    (:data:`LOGIN_RATE` per client, :data:`LOGIN_RATE_ALL` from every client but the browsers that signed in
    before); past them 429, the token unchecked. Each failure is logged with the client's address."""
    portal = portal_of(request)
    device = session_of(request).get("device")
    known = isinstance(device, str) and 0 < len(device) <= 64
    key = f"device:{device}" if known else f"address:{client_address(request)}"
    result = portal.login_limiter.attempt(key, lambda: same_secret(given, portal.admin_token), trusted=known)
    if result is None:
        raise HTTPException(status_code=429, detail="Too many failed admin sign-ins; wait a minute and try again.",
                            headers={"Retry-After": "60"})
    if not result:
        logger.warning("failed admin credential from %s (%s)", client_address(request), request.url.path)
    return result


def set_session(request: Request, **values: Any) -> None:
    """Change the session; a new nonce and issue time (``iat``, Unix ms) on every change (no fixation; revocation
    compares ``iat``); the cookie is re-sent with the response."""
    session = {"nonce": secrets.token_hex(16), **{k: v for k, v in session_of(request).items() if k != "nonce"}}
    session.update(values)
    session["iat"] = int(time.time() * 1000)  # Unix milliseconds
    request.state.session = {k: v for k, v in session.items() if v is not None}
    request.state.session_changed = True


def check_body(request: Request, *, files: bool = False) -> None:
    """Refuse, before reading it, a body that says it is too large (413) or a file upload where none is expected
    (415); and set the limit at which the app's body counter refuses a body while it is read (a chunked body has
    no length to check)."""
    limit = MAX_UPLOAD_BYTES if files else MAX_FORM_BYTES
    request.state.body_limit = limit
    length = request.headers.get("content-length", "")
    if length.isdecimal() and len(length) < 20 and int(length) > limit:
        raise HTTPException(status_code=413, detail=f"The form is too large ({int(length):,} bytes; at most "
                                                    f"{limit:,}).")
    if not files and request.headers.get("content-type", "").lower().startswith("multipart/"):
        raise HTTPException(status_code=415, detail="This form takes no files: send it as a plain form "
                                                    "(application/x-www-form-urlencoded).")


async def read_form(request: Request, *, files: bool = False) -> Any:
    """The posted form, after checking its size and kind (:func:`check_body`) and its CSRF token against the
    session (403 otherwise); its text without control characters (:func:`storable_form`)."""
    check_body(request, files=files)
    form = storable_form(await request.form())
    nonce = session_of(request)["nonce"]
    if not portal_of(request).signer.check_csrf(nonce, str(form.get("csrf") or "")):
        raise HTTPException(status_code=403, detail="The form expired or did not come from this site. Go back, "
                                                    "reload the page and try again.")
    return form


def storable_form(form: FormData) -> FormData:
    """The form with every text field stripped of control characters (all but tab and line breaks:
    :func:`~stableval.portal.tasks.records.without_controls`; PostgreSQL cannot store NUL), files as they are."""
    if all(not isinstance(value, str) or value == without_controls(value) for _, value in form.multi_items()):
        return form
    return FormData([(name, without_controls(value) if isinstance(value, str) else value)
                     for name, value in form.multi_items()])


def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render a template with the CSRF token and the signed-in state."""
    portal = portal_of(request)
    session = session_of(request)
    field_errors: dict[str, str] = {}  # inline messages: criterion key or field name -> message(s)
    for error in context.get("errors") or []:
        key, message = (error.criterion, error.message) if hasattr(error, "criterion") else (error[0], error[1])
        field_errors[key] = f"{field_errors[key]} {message}" if key in field_errors else message
    context.setdefault("field_errors", field_errors)
    context.update(request=request, csrf=portal.signer.csrf(session["nonce"]),
                   signed_in_admin=session.get("admin") == portal.admin_tag, signed_in_rater=session.get("rater"))
    response = portal.templates.TemplateResponse(request, template, context, status_code=status_code)
    response.headers["Cache-Control"] = "no-store"
    return response


def see_other(url: str) -> RedirectResponse:
    """Redirect after a POST (or to the right page): 303 See Other."""
    return RedirectResponse(url, status_code=303)


def signed_in_rater(request: Request) -> int:
    """The signed-in rater's id; 401 when not signed in or signed out by the study team, 403 when disabled."""
    session = session_of(request)
    rater = session.get("rater")
    if not isinstance(rater, int):
        raise HTTPException(status_code=401, detail="Open the invite link you were sent to start.")
    issued = session.get("iat")
    issued = issued if isinstance(issued, int) else 0
    age = int(time.time() * 1000) - issued
    if age > RATER_IDLE_DAYS * 24 * 3600 * 1000:
        raise HTTPException(status_code=401, detail="Your session expired (unused for a long time). Open the invite "
                                                    "link you were sent to sign in again.")
    access = session_access(portal_of(request).db, rater, issued)
    if access == "disabled":
        raise HTTPException(status_code=403, detail="Your access to this study has ended. Contact the study team "
                                                    "if you think this is a mistake.")
    if access != "ok":
        raise HTTPException(status_code=401, detail="You were signed out. Open the invite link you were sent to "
                                                    "sign in again.")
    if age > _RENEW_MS:  # in use: renewed (same nonce, so the CSRF token of an open page still holds)
        request.state.session = {**session, "iat": int(time.time() * 1000)}
        request.state.session_changed = True
    return rater


def load_assignment(request: Request, assignment_id: int, rater: int | None = None) -> Opened:
    """The rater's own assignment with its question, track and draft (404 for anyone else's: raters see only their
    own work). ``rater``: the rater this request already checked with :func:`signed_in_rater` (else it is checked
    here)."""
    opened = open_assignment(portal_of(request).db, assignment_id, signed_in_rater(request) if rater is None else rater)
    if opened is None:
        raise HTTPException(status_code=404, detail="No such question in your list.")
    return opened


def refuse_retired(question: Question) -> None:
    """410 for a question the study team withdrew."""
    if question.retired:
        raise HTTPException(status_code=410, detail="The study team withdrew this question; your answers to it are "
                                                    "not needed. Go to your progress page for the next one.")


#: Why a lease given back (its time ran out and the slot went to another rater, the rater was disabled, a submit
#: was refused) is refused: it never comes back.
NOT_YOURS = ("This question is no longer yours (your time on it ran out and it went to another rater, or the study "
             "team took it back), so your answers to it were not saved. Go to your progress page for the next one.")


def refuse_closed(assignment: Assignment, question: Question) -> RedirectResponse | None:
    """The guards of a question page, in order: a submitted assignment goes to the progress page (the redirect
    returned), a withdrawn question is refused (410), and so is a lease lost to another rater (410)."""
    if assignment.status == "done":
        return see_other("/progress?saved=1")
    refuse_retired(question)
    if assignment.status != "open":
        raise HTTPException(status_code=410, detail=NOT_YOURS)
    return None
