"""One SQLite writer at a time, across the threads of a process and across processes (``serve --workers N``).

SQLite lets one connection write at a time. Left to itself, a writer that finds the file locked sleeps and retries
(its busy handler backs off up to 100 ms per try, in no order), which is what made the tail latency under load.
:class:`WriteLock` queues the writers instead: a thread lock within the process, then an exclusive ``flock`` on a
small companion file (``<database>.write-lock``) across processes. The kernel wakes a waiting process as soon as
the lock is released, with no polling. Correctness does not depend on it (every write transaction still starts
with ``BEGIN IMMEDIATE``, and SQLite's own lock decides); it only decides who goes next, and fast.

Where ``flock`` does not exist (Windows) only the thread lock is taken, and ``serve --workers N`` is refused on
SQLite there.

>>> import tempfile, pathlib
>>> lock = WriteLock(pathlib.Path(tempfile.mkdtemp()) / "portal.db")
>>> with lock:
...     lock.held_by_this_thread()
True
>>> lock.held_by_this_thread(), lock.path.name
(False, 'portal.db.write-lock')
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["CROSS_PROCESS", "WriteLock"]

#: Whether writers of several processes can be queued (``flock`` exists on this platform).
CROSS_PROCESS = fcntl is not None


class WriteLock:
    """Exclusive write lock for one SQLite database file: threads of this process first, then processes."""

    def __init__(self, database: str | Path) -> None:
        self.path = Path(f"{database}.write-lock")
        self._threads = threading.Lock()
        self._owner: int | None = None
        self._fd: int | None = None
        self._pid = -1  # the process that opened _fd (a forked child must open its own)

    def _file(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            self._pid = os.getpid()
        return self._fd

    def __enter__(self) -> WriteLock:
        self._threads.acquire()
        try:
            if fcntl is not None:
                fcntl.flock(self._file(), fcntl.LOCK_EX)  # blocks (without the GIL) until the holder releases
        except BaseException:
            self._threads.release()
            raise
        self._owner = threading.get_ident()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._owner = None
        try:
            if fcntl is not None and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()

    def held_by_this_thread(self) -> bool:
        """Whether the calling thread holds the lock (for assertions and tests)."""
        return self._owner == threading.get_ident()

    def close(self) -> None:
        """Close the lock file (the lock must not be held)."""
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)
        self._fd = None
