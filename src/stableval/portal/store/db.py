"""Database connection: SQLite by default (one file, WAL, busy timeout, ``BEGIN IMMEDIATE`` for writes) or
PostgreSQL (``postgresql+psycopg://...``); schema created and upgraded by the bundled Alembic migrations.

>>> import tempfile, pathlib
>>> folder = tempfile.mkdtemp()
>>> db = Database(f"sqlite:///{pathlib.Path(folder) / 'portal.db'}")
>>> db.upgrade()
>>> with db.reading() as session:
...     session.execute(text("PRAGMA journal_mode")).scalar()
'wal'
>>> db.dispose()
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from stableval.portal.store.models import Setting
from stableval.portal.store.write_lock import WriteLock

__all__ = ["MIGRATIONS", "Database", "default_url", "sqlite_file", "text"]

#: Folder of the Alembic migrations shipped inside the package.
MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"

#: SQLite busy timeout (ms): how long a writer waits for the write lock before failing.
BUSY_TIMEOUT_MS = 30_000


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL; None for another database or an in-memory (or URI-named) one.

    >>> sqlite_file("sqlite:///portal.db"), sqlite_file("sqlite://"), sqlite_file("postgresql://h/db")
    (PosixPath('portal.db'), None, None)
    """
    parsed = make_url(url)
    file = parsed.database
    if parsed.get_backend_name() != "sqlite" or not file or file == ":memory:" or file.startswith("file:"):
        return None
    return Path(file)


def default_url(path: str | Path = "stableval-portal.db") -> str:
    """The SQLite URL of a database file."""
    return f"sqlite:///{Path(path)}"


def _sqlite_engine(url: str, *, synchronous: str = "FULL") -> Engine:
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
                           pool_size=8, max_overflow=8)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # pysqlite: we emit BEGIN ourselves (below)
        cursor = dbapi_connection.cursor()
        for pragma in ("journal_mode=WAL", f"busy_timeout={BUSY_TIMEOUT_MS}", "foreign_keys=ON",
                       f"synchronous={synchronous}"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


class Database:
    """Engine plus two session factories: ``reading()`` (plain transaction) and ``writing()`` (SQLite:
    ``BEGIN IMMEDIATE``, so a write transaction takes the lock up front and never dead-locks on upgrade;
    PostgreSQL: row locks are taken explicitly with ``SELECT ... FOR UPDATE``)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._file = sqlite_file(url)
        if url.startswith("sqlite"):
            # a database file: commits write the WAL without syncing it under the write lock; writing() syncs it
            # after the lock is released and before it returns (see _sync_wal)
            self.engine = _sqlite_engine(url, synchronous="FULL" if self._file is None else "NORMAL")
        else:
            self.engine = create_engine(url, pool_pre_ping=True, pool_size=20, max_overflow=40)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        writer = self.engine.execution_options(sqlite_begin="IMMEDIATE") if self.is_sqlite else self.engine
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(writer, expire_on_commit=False)
        # SQLite has one writer at a time; queueing the writers (threads, then `serve --workers` processes) on a
        # lock instead of in SQLite's busy handler (sleep-and-retry, unordered) cuts the tail latency under load.
        self._write_lock: AbstractContextManager[Any] = (
            WriteLock(self._file) if self._file is not None else
            threading.Lock() if self.is_sqlite else nullcontext())

    @contextmanager
    def reading(self) -> Iterator[Session]:
        with self._read.begin() as session:
            yield session

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """One short write transaction, committed on exit, rolled back on error (SQLite: one writer at a time)."""
        with self._write_lock, self._write.begin() as session:
            yield session
        self._sync_wal()

    def _sync_wal(self) -> None:
        """Make the committed transaction durable before the caller acknowledges it: fsync the SQLite database's
        write-ahead log, outside the write lock (the next writer need not wait for the disk, and writers finishing
        together share one flush). Equivalent to ``synchronous=FULL`` (which syncs the log inside every commit):
        the commit record is on disk when this returns; frames a checkpoint already copied were synced by it."""
        if self._file is None:
            return
        try:
            descriptor = os.open(f"{self._file}-wal", os.O_RDONLY)
        except FileNotFoundError:  # no log (all connections closed and checkpointed): sync the database itself
            descriptor = os.open(self._file, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def upgrade(self, revision: str = "head") -> None:
        """Create or upgrade the schema with the bundled Alembic migrations (idempotent)."""
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)

    def secret(self) -> str:
        """The cookie-signing secret, created once and kept in the database (restarts keep sessions valid)."""
        with self.writing() as session:
            found = session.get(Setting, "secret")
            if found is None:
                found = Setting(key="secret", value=secrets.token_hex(32))
                session.add(found)
            return found.value

    def dispose(self) -> None:
        self.engine.dispose()
        if isinstance(self._write_lock, WriteLock):
            self._write_lock.close()
