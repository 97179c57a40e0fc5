"""The per-request check that a signed-in rater may still act: one primary-key lookup of two columns.

Every rater request runs it before any form is read, so it is built for speed: a prepared Core statement on a plain
connection (no ORM session, no objects), about a quarter of the cost of loading the rater. The rule itself
(:func:`access_state`) is the one :func:`stableval.portal.admin.manage.rater_access` applies: a disabled rater is
refused, and a session issued before the rater's ``sessions_after`` (signed out by the study team) is ended.

>>> from datetime import datetime
>>> access_state(None, None, 0), access_state(datetime(2026, 1, 1), None, 0)
('ok', 'disabled')
>>> signed_out = datetime(2026, 1, 1)
>>> access_state(None, signed_out, 1767225599999), access_state(None, signed_out, 1767225600000)
('ended', 'ok')
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import bindparam, select

from stableval.portal.store.db import Database
from stableval.portal.store.models import Rater

__all__ = ["access_state", "session_access"]

_ACCESS = select(Rater.disabled_at, Rater.sessions_after).where(Rater.id == bindparam("rater_id"))


def access_state(disabled_at: datetime | None, sessions_after: datetime | None, issued_ms: int) -> str:
    """"ok", "disabled", or "ended" (the session was issued, in Unix ms, before the rater was signed out)."""
    if disabled_at is not None:
        return "disabled"
    if sessions_after is not None and issued_ms < int(sessions_after.replace(tzinfo=UTC).timestamp() * 1000):
        return "ended"
    return "ok"


def session_access(db: Database, rater_id: int, issued_ms: int) -> str:
    """Whether a session of this rater issued at ``issued_ms`` may act: "ok", "unknown" (no such rater),
    "disabled" or "ended"."""
    with db.engine.connect() as connection:
        row = connection.execute(_ACCESS, {"rater_id": rater_id}).first()
    return "unknown" if row is None else access_state(row.disabled_at, row.sessions_after, issued_ms)
