"""What the route handlers share: the :class:`Portal` record and the request helpers (session, CSRF, pages).

:mod:`stableval.portal.app` builds the FastAPI app and stores a :class:`Portal` in ``app.state``; the route
modules (``rater_routes``, ``admin_routes``) import only from here, so no route module imports the app factory.

>>> from types import SimpleNamespace
>>> request = SimpleNamespace(state=SimpleNamespace(session={"nonce": "n1", "admin": True}, session_changed=False))
>>> set_session(request, admin=None, rater=7)
>>> sorted(session_of(request)), session_of(request)["nonce"] != "n1", request.state.session_changed
(['iat', 'nonce', 'rater'], True, True)
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from stableval.portal.db import Database
from stableval.portal.security import RateLimiter, Signer

__all__ = ["COOKIE", "MAX_FORM_BYTES", "MAX_UPLOAD_BYTES", "Portal", "check_body", "client_address", "page",
           "portal_of", "read_form", "session_of", "set_session"]

#: Name of the signed session cookie.
COOKIE = "stableval_session"
#: admin sign-in attempts allowed per client address and minute
LOGIN_RATE = 10
#: Largest body of a plain form post (bytes); larger ones are refused (413) before they are read.
MAX_FORM_BYTES = 1024 * 1024
#: Largest body of an admin file upload (question import, invite list), bytes.
MAX_UPLOAD_BYTES = 64 * 1024 * 1024


@dataclass
class Portal:
    """What the routes share: the database, the signer, the admin token, the rate limiters (invite links and
    admin sign-in)."""

    db: Database
    signer: Signer
    admin_token: str
    templates: Jinja2Templates
    invite_limiter: RateLimiter
    secure_cookies: bool = False
    login_limiter: RateLimiter = field(default_factory=lambda: RateLimiter(limit=LOGIN_RATE, window=60.0))

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


def set_session(request: Request, **values: Any) -> None:
    """Change the session; a new nonce and issue time (``iat``, Unix ms) on every change (no fixation; revocation
    compares ``iat``); the cookie is re-sent with the response."""
    session = {"nonce": secrets.token_hex(16), **{k: v for k, v in session_of(request).items() if k != "nonce"}}
    session.update(values)
    session["iat"] = int(time.time() * 1000)  # Unix milliseconds
    request.state.session = {k: v for k, v in session.items() if v is not None}
    request.state.session_changed = True


def check_body(request: Request, *, files: bool = False) -> None:
    """Refuse, before reading it, a body that is too large (413) or a file upload where none is expected (415)."""
    limit = MAX_UPLOAD_BYTES if files else MAX_FORM_BYTES
    length = request.headers.get("content-length", "")
    if length.isdecimal() and len(length) < 20 and int(length) > limit:
        raise HTTPException(status_code=413, detail=f"The form is too large ({int(length):,} bytes; at most "
                                                    f"{limit:,}).")
    if not files and request.headers.get("content-type", "").lower().startswith("multipart/"):
        raise HTTPException(status_code=415, detail="This form takes no files: send it as a plain form "
                                                    "(application/x-www-form-urlencoded).")


async def read_form(request: Request, *, files: bool = False) -> Any:
    """The posted form, after checking its size and kind (:func:`check_body`) and its CSRF token against the
    session (403 otherwise)."""
    check_body(request, files=files)
    form = await request.form()
    nonce = session_of(request)["nonce"]
    if not portal_of(request).signer.check_csrf(nonce, str(form.get("csrf") or "")):
        raise HTTPException(status_code=403, detail="The form expired or did not come from this site. Go back, "
                                                    "reload the page and try again.")
    return form


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
