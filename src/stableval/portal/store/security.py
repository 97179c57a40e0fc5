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
from collections.abc import Callable
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

    :meth:`allow` counts every attempt (invite links); :meth:`attempt` checks a credential and counts only the
    failures, and with ``total`` also caps the failures of all keys together, except for ``trusted`` keys (a
    browser that signed in before), so a guesser can neither guess fast nor lock such a key out.

    With ``shared`` (a file path) the events are kept in that SQLite file instead, so every server process of one
    ``stableval serve --workers N`` counts against the same limit (``name`` tells the limiters sharing the file
    apart; the keys are stored hashed, so the file holds no client address); in memory, each process would allow
    ``limit`` on its own.

    >>> limiter = RateLimiter(limit=2, window=60)
    >>> [limiter.allow("1.2.3.4", now=t) for t in (0, 1, 2, 61.5)]
    [True, True, False, True]
    >>> guesses = RateLimiter(limit=2, window=60, total=3)
    >>> [guesses.attempt(key, lambda: False, now=0) for key in ("a", "a", "a", "b", "c")]
    [False, False, None, False, None]
    >>> guesses.attempt("a", lambda: True, now=1), guesses.attempt("d", lambda: True, trusted=True, now=1)
    (None, True)
    """

    def __init__(self, limit: int = 20, window: float = 60.0, *, total: int | None = None,
                 shared: str | Path | None = None, name: str = "") -> None:
        self.limit = limit
        self.window = window
        self.total = total
        self.shared = None if shared is None else str(shared)
        self.name = name
        self._events: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
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
            self._forget_idle()
            return True

    def _forget_idle(self) -> None:
        """Drop the keys without events once there are many (the caller holds the lock)."""
        if len(self._events) > 10_000:
            for idle in [k for k, v in self._events.items() if not v]:
                del self._events[idle]

    def attempt(self, key: str, check: Callable[[], bool], *, trusted: bool = False, now: float | None = None
                ) -> bool | None:
        """Run a credential ``check`` within the limits: None (refused, not checked) when ``key`` had ``limit``
        failures in the window or, unless ``trusted``, every key together had ``total``; else the check's result,
        a failure being counted. The check runs under the limiter's lock, so parallel guesses cannot overrun it."""
        if self.shared is not None:
            return self._attempt_shared(key, check, trusted, time.time() if now is None else now)
        now = time.monotonic() if now is None else now
        with self._lock:
            events = self._events.setdefault(key, deque())
            for queue in (events, self._all):
                while queue and queue[0] <= now - self.window:
                    queue.popleft()
            if len(events) >= self.limit or (not trusted and self.total is not None and len(self._all) >= self.total):
                return None
            if check():
                return True
            events.append(now)
            self._all.append(now)
            self._forget_idle()
            return False

    def _attempt_shared(self, key: str, check: Callable[[], bool], trusted: bool, now: float) -> bool | None:
        key = self._stored(key)
        with closing(self._connect()) as connection:
            connection.execute("BEGIN IMMEDIATE")  # one process at a time counts, checks and records
            connection.execute("DELETE FROM rate_events WHERE limiter = ? AND at <= ?", (self.name, now - self.window))
            (mine,) = connection.execute("SELECT count(*) FROM rate_events WHERE limiter = ? AND key = ?",
                                         (self.name, key)).fetchone()
            (everyone,) = connection.execute("SELECT count(*) FROM rate_events WHERE limiter = ?",
                                             (self.name,)).fetchone()
            result: bool | None = None
            if mine < self.limit and (trusted or self.total is None or everyone < self.total):
                result = bool(check())
                if not result:
                    connection.execute("INSERT INTO rate_events (limiter, key, at) VALUES (?, ?, ?)",
                                        (self.name, key, now))
            connection.execute("COMMIT")
            return result

    @staticmethod
    def _stored(key: str) -> str:
        """A key as the shared file keeps it: hashed (the file outlives a request; client addresses stay out)."""
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def _connect(self) -> sqlite3.Connection:
        """A connection to the shared file in autocommit mode (transactions are begun explicitly); events need not
        survive a crash, so nothing is synced to disk."""
        assert self.shared is not None
        connection = sqlite3.connect(self.shared, timeout=30.0, isolation_level=None)
        connection.execute("PRAGMA synchronous=OFF")
        return connection

    def _allow_shared(self, key: str, now: float) -> bool:
        key = self._stored(key)
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
