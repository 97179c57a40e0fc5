"""The SQLite write lock queues writers across processes (``serve --workers N`` on a SQLite file)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from portal_helpers import PATIENCE

from stableval.portal.store.db import Database, text
from stableval.portal.store.write_lock import CROSS_PROCESS, WriteLock

pytestmark = pytest.mark.skipif(not CROSS_PROCESS, reason="flock(2) is not available on this platform")

HOLD = textwrap.dedent("""
    import sys, time
    from stableval.portal.store.write_lock import WriteLock
    with WriteLock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
        print(repr(time.time()), flush=True)
""")


@pytest.mark.slow  # a real server or several processes
def test_a_writer_in_another_process_waits_for_the_holder(tmp_path: Path) -> None:
    database = tmp_path / "portal.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(database), "0.6"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    with WriteLock(database):
        acquired = time.time()
    released = float(holder.stdout.readline())
    holder.wait(timeout=PATIENCE)
    assert acquired >= released  # this process got the lock only once the other let it go


@pytest.mark.slow  # a real server or several processes
def test_threads_and_processes_write_without_losing_an_increment(tmp_path: Path) -> None:
    """Two processes × 4 threads increment one row 25 times each through Database.writing: the lock (and
    SQLite's BEGIN IMMEDIATE) leave no lost update and no "database is locked" error."""
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    db = Database(url)
    db.upgrade()
    db.secret()
    db.dispose()
    script = textwrap.dedent("""
        import sys
        from concurrent.futures import ThreadPoolExecutor
        from stableval.portal.store.db import Database, text
        db = Database(sys.argv[1])
        def bump(_):
            with db.writing() as session:
                value = int(session.execute(text("SELECT value FROM settings WHERE key = 'n'")).scalar() or 0)
                session.execute(text("DELETE FROM settings WHERE key = 'n'"))
                session.execute(text("INSERT INTO settings (key, value) VALUES ('n', :v)"), {"v": str(value + 1)})
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(bump, range(100)))
        db.dispose()
    """)
    workers = [subprocess.Popen([sys.executable, "-c", script, url]) for _ in range(2)]
    assert [w.wait(timeout=PATIENCE) for w in workers] == [0, 0]
    db = Database(url)
    with db.reading() as session:
        assert session.execute(text("SELECT value FROM settings WHERE key = 'n'")).scalar() == "200"
    db.dispose()
    assert (tmp_path / "portal.db.write-lock").exists()


def test_a_closed_lock_reopens_its_file(tmp_path: Path) -> None:
    lock = WriteLock(tmp_path / "portal.db")
    with lock:
        assert lock.held_by_this_thread()
    assert not lock.held_by_this_thread()
    lock.close()
    with lock:  # reopens its file
        assert lock.held_by_this_thread()
    lock.close()


def test_a_write_is_synced_to_disk_after_the_lock_and_before_it_returns(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Durability as with ``synchronous=FULL``: the write-ahead log is fsynced before ``writing()`` returns (so
    before any acknowledgement), but outside the write lock, so the next writer does not wait for the disk."""
    import os

    from stableval.portal.store import db as db_module

    db = Database(f"sqlite:///{tmp_path / 'portal.db'}")
    db.upgrade()
    with db.reading() as session:
        assert session.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL: the commit itself does not sync
    synced: list[tuple[str, bool]] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append((os.readlink(f"/proc/self/fd/{descriptor}"), db._write_lock.held_by_this_thread()))  # type: ignore[attr-defined]
        real_fsync(descriptor)

    monkeypatch.setattr(db_module.os, "fsync", fsync)
    with db.writing() as session:
        session.execute(text("INSERT INTO settings (key, value) VALUES ('x', '1')"))
        assert synced == []  # not yet: still inside the transaction
    assert synced == [(str(tmp_path / "portal.db-wal"), False)]
    with pytest.raises(RuntimeError), db.writing() as session:  # a failed write is rolled back: nothing to sync
        session.execute(text("INSERT INTO settings (key, value) VALUES ('y', '1')"))
        raise RuntimeError
    assert len(synced) == 1
    db.dispose()
