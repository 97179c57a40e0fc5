"""Secrets and tokens: hashed invite tokens, signed session cookies, CSRF tokens, a sliding-window rate limit.

Session cookies are ``base64(json).hmac`` signed with HMAC-SHA256 (stdlib only); the CSRF token of a session is
an HMAC of its random nonce, so it needs no storage and is checked in constant time.

>>> signer = Signer("k" * 32)
>>> cookie = signer.dumps({"nonce": "n1", "rater": 7})
>>> signer.loads(cookie)
{'nonce': 'n1', 'rater': 7}
>>> signer.loads(cookie[:-1] + ("0" if cookie[-1] != "0" else "1")) is None
True
>>> signer.csrf("n1") == signer.csrf("n1") != signer.csrf("n2")
True
>>> signer.loads(cookie[:-1] + "é") is None, signer.check_csrf("n1", "é")  # non-ASCII: refused, not a 500
(True, False)
>>> same_secret("s3cret-token", "s3cret-token"), same_secret("s3cret-token", "ß")
(True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import secrets
import sqlite3
import threading
import time
from collections import deque
from contextlib import closing
from pathlib import Path
from typing import Any

__all__ = ["RateLimiter", "RedactTokens", "Signer", "hash_token", "new_token", "same_secret"]


def new_token(nbytes: int = 24) -> str:
    """A random URL-safe token (192 bits by default)."""
    return secrets.token_urlsafe(nbytes)


def hash_token(token: str) -> str:
    """SHA-256 hex digest of a token: what the database stores instead of the invite token itself.

    >>> hash_token("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison of two secrets as UTF-8 bytes (any text, non-ASCII included, compares safely)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


class Signer:
    """Sign and verify small JSON payloads (session cookies) and derive CSRF tokens from a secret."""

    def __init__(self, secret: str) -> None:
        self._key = secret.encode("utf-8")

    def _mac(self, data: bytes) -> str:
        return hmac.new(self._key, data, hashlib.sha256).hexdigest()

    def dumps(self, payload: dict[str, Any]) -> str:
        body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode()
        return f"{body}.{self._mac(body.encode())}"

    def loads(self, cookie: str | None) -> dict[str, Any] | None:
        """The payload, or None when the cookie is missing, malformed or its signature is wrong."""
        if not cookie or "." not in cookie:
            return None
        body, mac = cookie.rsplit(".", 1)
        if not same_secret(mac, self._mac(body.encode("utf-8", "surrogatepass"))):
            return None
        try:
            payload = json.loads(base64.urlsafe_b64decode(body.encode()))
        except ValueError:
            return None
        return payload if isinstance(payload, dict) else None

    def csrf(self, nonce: str) -> str:
        return self._mac(b"csrf:" + nonce.encode())

    def check_csrf(self, nonce: str, token: str | None) -> bool:
        return bool(token) and same_secret(str(token), self.csrf(nonce))

    def admin_tag(self, admin_token: str) -> str:
        """What an admin session stores instead of ``True``: a MAC of the current admin token, so changing the
        token ends every admin session signed in with the old one."""
        return self._mac(b"admin:" + admin_token.encode("utf-8", "surrogatepass"))[:32]


class RateLimiter:
    """At most ``limit`` events per ``window`` seconds per key (thread-safe, in memory).

    With ``shared`` (a file path) the events are kept in that SQLite file instead, so every server process of one
    ``stableval serve --workers N`` counts against the same limit (``name`` tells the limiters sharing the file
    apart); in memory, each process would allow ``limit`` on its own.

    >>> limiter = RateLimiter(limit=2, window=60)
    >>> [limiter.allow("1.2.3.4", now=t) for t in (0, 1, 2, 61.5)]
    [True, True, False, True]
    """

    def __init__(self, limit: int = 20, window: float = 60.0, *, shared: str | Path | None = None,
                 name: str = "") -> None:
        self.limit = limit
        self.window = window
        self.shared = None if shared is None else str(shared)
        self.name = name
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        if self.shared is not None:
            with closing(self._connect()) as connection:
                connection.execute("CREATE TABLE IF NOT EXISTS rate_events (limiter TEXT NOT NULL, key TEXT NOT NULL, "
                                   "at REAL NOT NULL)")
                connection.execute("CREATE INDEX IF NOT EXISTS rate_events_by_key ON rate_events (limiter, key, at)")

    def allow(self, key: str, now: float | None = None) -> bool:
        if self.shared is not None:
            return self._allow_shared(key, time.time() if now is None else now)
        now = time.monotonic() if now is None else now
        with self._lock:
            events = self._events.setdefault(key, deque())
            while events and events[0] <= now - self.window:
                events.popleft()
            if len(events) >= self.limit:
                return False
            events.append(now)
            if len(self._events) > 10_000:  # forget idle clients
                for idle in [k for k, v in self._events.items() if not v]:
                    del self._events[idle]
            return True

    def _connect(self) -> sqlite3.Connection:
        """A connection to the shared file in autocommit mode (transactions are begun explicitly); events need not
        survive a crash, so nothing is synced to disk."""
        assert self.shared is not None
        connection = sqlite3.connect(self.shared, timeout=30.0, isolation_level=None)
        connection.execute("PRAGMA synchronous=OFF")
        return connection

    def _allow_shared(self, key: str, now: float) -> bool:
        with closing(self._connect()) as connection:
            connection.execute("BEGIN IMMEDIATE")  # one process at a time counts and records
            connection.execute("DELETE FROM rate_events WHERE limiter = ? AND at <= ?", (self.name, now - self.window))
            (count,) = connection.execute("SELECT count(*) FROM rate_events WHERE limiter = ? AND key = ?",
                                          (self.name, key)).fetchone()
            allowed = count < self.limit
            if allowed:
                connection.execute("INSERT INTO rate_events (limiter, key, at) VALUES (?, ?, ?)", (self.name, key, now))
            connection.execute("COMMIT")
            return bool(allowed)


_SECRET_PATH = re.compile(r"(/i/)[^/?#\s\"]+|([?&](?:token|csrf)=)[^&#\s\"]*")


class RedactTokens(logging.Filter):
    """Logging filter for the web server's access log: invite tokens in paths (``/i/<token>``) and ``token`` /
    ``csrf`` query values are replaced by ``<redacted>`` before the line is written.

    >>> record = logging.LogRecord("uvicorn.access", 20, "", 0, '%s - "%s %s HTTP/%s" %d', (
    ...     "127.0.0.1:5", "GET", "/i/YjQidJ80TRxhLFQSf63IC?x=1", "1.1", 303), None)
    >>> RedactTokens().filter(record), record.getMessage()
    (True, '127.0.0.1:5 - "GET /i/<redacted>?x=1 HTTP/1.1" 303')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def redact(text: str) -> str:
    """``text`` with invite tokens in paths and token query values replaced by ``<redacted>``."""
    return _SECRET_PATH.sub(lambda m: f"{m[1] or m[2]}<redacted>", text)
