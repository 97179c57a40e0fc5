"""What the route handlers share: the :class:`Portal` record and the request helpers (session, CSRF, pages).

:mod:`stableval.portal.app` builds the FastAPI app and stores a :class:`Portal` in ``app.state``; the route
modules (``rater_routes``, ``admin_routes``) import only from here, so no route module imports the app factory.

>>> from types import SimpleNamespace
>>> request = SimpleNamespace(state=SimpleNamespace(session={"nonce": "n1", "admin": True}, session_changed=False))
>>> set_session(request, admin=None, rater=7)
>>> sorted(session_of(request)), session_of(request)["nonce"] != "n1", request.state.session_changed
(['nonce', 'rater'], True, True)
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from stableval.portal.db import Database
from stableval.portal.security import RateLimiter, Signer

__all__ = ["COOKIE", "Portal", "page", "portal_of", "read_form", "session_of", "set_session"]

#: Name of the signed session cookie.
COOKIE = "stableval_session"


@dataclass
class Portal:
    """What the routes share: the database, the signer, the admin token, the invite rate limiter."""

    db: Database
    signer: Signer
    admin_token: str
    templates: Jinja2Templates
    invite_limiter: RateLimiter
    secure_cookies: bool = False


def portal_of(request: Request) -> Portal:
    """The :class:`Portal` of the app serving ``request``."""
    portal: Portal = request.app.state.portal
    return portal


def session_of(request: Request) -> dict[str, Any]:
    """The request's (signed) session: ``nonce`` always; ``rater`` id and/or ``admin`` once signed in."""
    session: dict[str, Any] = request.state.session
    return session


def set_session(request: Request, **values: Any) -> None:
    """Change the session; a new nonce on sign-in (no fixation); the cookie is re-sent with the response."""
    session = {"nonce": secrets.token_hex(16), **{k: v for k, v in session_of(request).items() if k != "nonce"}}
    session.update(values)
    request.state.session = {k: v for k, v in session.items() if v is not None}
    request.state.session_changed = True


async def read_form(request: Request) -> Any:
    """The posted form, after checking its CSRF token against the session (403 otherwise)."""
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
    context.update(request=request, csrf=portal.signer.csrf(session["nonce"]), signed_in_admin=bool(
        session.get("admin")), signed_in_rater=session.get("rater"))
    response = portal.templates.TemplateResponse(request, template, context, status_code=status_code)
    response.headers["Cache-Control"] = "no-store"
    return response
