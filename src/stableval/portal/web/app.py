"""The FastAPI application factory: database, signed session cookie, CSRF check, templates, routes.

The request helpers the routes share live in :mod:`stableval.portal.web.common`; this module only assembles the app.

>>> import tempfile, pathlib
>>> from fastapi.testclient import TestClient
>>> url = f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}"
>>> client = TestClient(create_app(url, admin_token="s3cret-admin-token"))
>>> client.get("/").status_code, client.get("/admin").status_code
(200, 401)
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stableval.portal.settings import MAX_STUDY_TEXT
from stableval.portal.store.db import Database
from stableval.portal.store.security import RateLimiter, Signer
from stableval.portal.tasks.render import escape_text, markdown_to_html, radio_options
from stableval.portal.tasks.transcripts import answer_to_html
from stableval.portal.web.admin_routes import router as admin_router
from stableval.portal.web.common import (
    COOKIE,
    LOGIN_RATE,
    LOGIN_RATE_ALL,
    MAX_FORM_BYTES,
    PROPOSE_RATE,
    Portal,
    page,
    portal_of,
    read_form,
)
from stableval.portal.web.rater_routes import router as rater_router
from stableval.portal.web.step_routes import router as step_router

# Portal and the request helpers are re-exported for code that imported them from here (stableval.portal.web.common)
__all__ = ["COOKIE", "Portal", "create_app", "page", "portal_of", "read_form"]

#: The portal package: its templates and static files.
HERE = Path(__file__).resolve().parents[1]
MIN_ADMIN_TOKEN = 12
#: Headers every response gets (unless the route set its own).
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"), (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"form-action 'self'; frame-ancestors 'none'"))


class SignedSession:
    """ASGI middleware: the signed session cookie into ``request.state.session`` (a new session with a fresh nonce
    when the cookie is missing or forged), the cookie re-sent when the session changed, the security headers, and
    the body counted as it arrives: past the route's limit (``state["body_limit"]``, set by
    :func:`~stableval.portal.web.common.check_body`; else :data:`~stableval.portal.web.common.MAX_FORM_BYTES`) the
    read is refused with 413, whether the client sent a ``Content-Length`` or a chunked body.

    A plain ASGI wrapper rather than Starlette's ``BaseHTTPMiddleware``, which runs every request through an extra
    task and memory streams (about a third of a millisecond of CPU per request).
    """

    def __init__(self, app: ASGIApp, portal: Portal) -> None:
        self.app = app
        self.portal = portal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        cookies = cookie_parser(next((v.decode("latin-1") for k, v in scope["headers"] if k == b"cookie"), ""))
        payload = self.portal.signer.loads(cookies.get(COOKIE))
        state = scope.setdefault("state", {})
        state["session_changed"] = payload is None
        state["session"] = payload or {"nonce": secrets.token_hex(16)}

        async def send_with_session(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in SECURITY_HEADERS if name not in present]
                if state["session_changed"]:
                    headers.append((b"set-cookie", self._cookie(state["session"])))
                elapsed = (time.perf_counter() - started) * 1000
                headers.append((b"server-timing", f"app;dur={elapsed:.2f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        received = 0

        async def receive_limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                limit = state.get("body_limit", MAX_FORM_BYTES)
                if received > limit:
                    raise HTTPException(status_code=413, detail=f"The form is too large (more than {limit:,} "
                                                                "bytes).")
            return message

        await self.app(scope, receive_limited, send_with_session)

    def _cookie(self, session: dict[str, Any]) -> bytes:
        carrier = Response()
        carrier.set_cookie(COOKIE, self.portal.signer.dumps(session), httponly=True, samesite="lax",
                           secure=self.portal.secure_cookies, max_age=90 * 24 * 3600)
        return carrier.raw_headers[-1][1]


def create_app(database_url: str, admin_token: str, *, migrate: bool = True, secure_cookies: bool = False,
               invite_rate: int = 20, rate_limit_file: str | None = None) -> FastAPI:
    """Build the portal app on a database (schema upgraded on start unless ``migrate=False``).

    ``admin_token`` is the admin credential (at least 12 characters); ``invite_rate`` the invite-link attempts
    allowed per client address and minute; ``rate_limit_file``: keep the invite and sign-in rate limits in this
    SQLite file, shared by every process given it (``stableval serve --workers N``), instead of in memory.
    """
    if len(admin_token) < MIN_ADMIN_TOKEN:
        raise ValueError(f"admin token must have at least {MIN_ADMIN_TOKEN} characters")
    db = Database(database_url)
    if migrate:
        db.upgrade()
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["markdown"] = lambda text: Markup(markdown_to_html(text))
    templates.env.filters["answer"] = lambda text: Markup(answer_to_html(text))  # Markdown or agent transcript
    templates.env.globals["radio_options"] = radio_options
    templates.env.globals["max_study_text"] = MAX_STUDY_TEXT
    templates.env.finalize = escape_text
    templates.env.auto_reload = False  # compiled templates are kept: no file checks on every page
    portal = Portal(db=db, signer=Signer(db.secret()), admin_token=admin_token, templates=templates,
                    invite_limiter=RateLimiter(limit=invite_rate, window=60.0, shared=rate_limit_file, name="invite"),
                    login_limiter=RateLimiter(limit=LOGIN_RATE, window=60.0, total=LOGIN_RATE_ALL,
                                              shared=rate_limit_file, name="login"),
                    propose_limiter=RateLimiter(limit=PROPOSE_RATE, window=3600.0, shared=rate_limit_file,
                                                name="propose"),
                    secure_cookies=secure_cookies)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        db.dispose()

    app = FastAPI(title="stableval evaluation portal", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    app.state.portal = portal
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    app.add_middleware(SignedSession, portal=portal)

    @app.exception_handler(HTTPException)  # Starlette's: also unknown paths (404) and unreadable forms (400)
    async def http_error(request: Request, error: HTTPException) -> Response:
        headers = dict(error.headers or {})
        message = "There is no page at this address." if error.status_code == 404 and error.detail == "Not Found" \
            else str(error.detail)
        if not hasattr(request.state, "session"):
            return Response(message, status_code=error.status_code, headers=headers)
        response = page(request, "error.html", status_code=error.status_code, message=message)
        response.headers.update(headers)
        return response

    @app.exception_handler(RequestValidationError)  # e.g. /a/abc/pairwise: a readable page, not FastAPI's JSON
    async def bad_request(request: Request, error: RequestValidationError) -> Response:
        where = ", ".join(".".join(str(p) for p in e.get("loc", ())[1:]) or "request" for e in error.errors())
        message = f"This address or form is not valid ({where}): check the link."
        if not hasattr(request.state, "session"):
            return Response(message, status_code=422)
        return page(request, "error.html", status_code=422, message=message)

    app.include_router(rater_router)
    app.include_router(step_router)
    app.include_router(admin_router)
    return app
