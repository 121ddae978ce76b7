"""kernel/db/sqlite_checkpoint.py: a process that asks for it (the daemon) commits without checkpointing the WAL
on the committing thread; a thread of its own moves the committed frames into the database file soon after,
at most once per interval, and stops when the database closes. Other processes keep SQLite's default."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from mrpvm.kernel.db.sqlite import SqliteDatabase
from mrpvm.kernel.db.sqlite_checkpoint import BackgroundCheckpoints

BLOB = b"x" * (6 << 20)  # 6 MiB: ~1,500 WAL frames, past SQLite's default autocheckpoint (1,000 pages)


def _autocheckpoint(db: SqliteDatabase) -> int:
    return int(db.connection().execute("PRAGMA wal_autocheckpoint").fetchone()[0])


def _wait(predicate, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def db(tmp_path: Path):
    database = SqliteDatabase(tmp_path / "t.db")
    with database.transaction() as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)")
    yield database
    database.close()


def test_by_default_a_commit_checkpoints_as_sqlite_does(db: SqliteDatabase, tmp_path: Path):
    assert _autocheckpoint(db) == 1000
    with db.transaction() as conn:
        conn.execute("INSERT INTO t (body) VALUES (?)", (BLOB,))
    # the commit that passed the threshold copied the frames into the database file before returning
    assert (tmp_path / "t.db").stat().st_size > len(BLOB)


def test_in_background_commits_leave_the_checkpoint_to_a_thread(db: SqliteDatabase, tmp_path: Path):
    other = threading.Thread(target=db.connection)  # a connection another thread opened before
    other.start()
    other.join()
    db.checkpoint_in_background()
    assert _autocheckpoint(db) == 0
    assert all(c.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0 for c in db._conns)
    seen: list[int] = []
    fresh = threading.Thread(target=lambda: seen.append(_autocheckpoint(db)))  # one opened after
    fresh.start()
    fresh.join()
    assert seen == [0]
    with db.transaction() as conn:
        conn.execute("INSERT INTO t (body) VALUES (?)", (BLOB,))
    # the thread copies the committed frames into the database file soon after
    checkpoints = db._checkpoints
    assert checkpoints is not None
    assert _wait(lambda: checkpoints.runs >= 1)
    assert (tmp_path / "t.db").stat().st_size > len(BLOB)
    assert db.connection().execute("SELECT length(body) FROM t").fetchone()[0] == len(BLOB)


def test_closing_stops_the_thread(tmp_path: Path):
    database = SqliteDatabase(tmp_path / "c.db")
    database.checkpoint_in_background()
    names = lambda: {t.name for t in threading.enumerate()}  # noqa: E731
    assert "sqlite-checkpoints" in names()
    with database.transaction() as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    database.close()
    assert "sqlite-checkpoints" not in names()
    database.checkpoint_in_background()  # a closed database starts nothing
    assert "sqlite-checkpoints" not in names()


class _Conn:
    def __init__(self, calls: list[float], fail: bool = False):
        self.calls, self.fail = calls, fail

    def execute(self, sql: str):
        assert sql == "PRAGMA wal_checkpoint(PASSIVE)"
        self.calls.append(time.monotonic())
        if self.fail:
            raise sqlite3.OperationalError("database is locked")
        return self

    def fetchall(self) -> list:
        return []


def test_a_burst_of_commits_checkpoints_at_most_once_per_interval():
    calls: list[float] = []
    checkpoints = BackgroundCheckpoints(lambda: _Conn(calls), interval_s=0.5)
    try:
        assert calls == []  # nothing committed: no checkpoint
        began = time.monotonic()
        for _ in range(50):
            checkpoints.committed()
            time.sleep(0.01)
        burst_s = time.monotonic() - began  # ~0.5 s; longer on a busy machine
        assert _wait(lambda: len(calls) >= 2, 5.0)
        # the first at once, then at most one per interval (and one for the burst's last commits)
        assert len(calls) <= 2 + burst_s / 0.5
        assert all(b - a >= 0.45 for a, b in zip(calls, calls[1:], strict=False))
    finally:
        checkpoints.stop()


def test_a_busy_checkpoint_is_tried_again_after_the_next_commit():
    calls: list[float] = []
    checkpoints = BackgroundCheckpoints(lambda: _Conn(calls, fail=True), interval_s=0.01)
    try:
        checkpoints.committed()
        assert _wait(lambda: len(calls) == 1, 5.0)
        checkpoints.committed()
        assert _wait(lambda: len(calls) == 2, 5.0)
        assert checkpoints.runs == 0
    finally:
        checkpoints.stop()


def test_an_ending_process_leaves_the_checkpoint_to_the_next_and_loses_no_commit(tmp_path: Path):
    """`close(ending=True)` (a one-turn `mrpvm ask` about to exit): no connection is closed, so the WAL is
    not copied into the database on the way out; the process ends (os._exit, as the console script does)
    and the next process reads every commit. A plain close checkpoints and removes the WAL."""
    import subprocess
    import sys

    path = tmp_path / "t.db"
    code = (
        "import os, sys; from mrpvm.kernel.db.sqlite import SqliteDatabase\n"
        "db = SqliteDatabase(sys.argv[1])\n"
        "with db.transaction() as conn:\n"
        "    conn.execute('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body BLOB)')\n"
        "    conn.execute('INSERT INTO t (body) VALUES (?)', (sys.argv[2].encode(),))\n"
        "db.close(ending=sys.argv[2] == 'ending')\n"
        "sys.stdout.flush(); os._exit(0)\n"
    )
    wal = Path(f"{path}-wal")
    subprocess.run([sys.executable, "-c", code, str(path), "plain"], check=True)
    assert not wal.exists() or wal.stat().st_size == 0  # the last close checkpointed it
    subprocess.run([sys.executable, "-c", code, str(path), "ending"], check=True)
    assert wal.stat().st_size > 0  # left for the next process
    db = SqliteDatabase(path)
    try:
        rows = db.connection().execute("SELECT body FROM t ORDER BY id").fetchall()
    finally:
        db.close()
    assert [bytes(r[0]) for r in rows] == [b"plain", b"ending"]


def test_a_long_process_closing_many_stores_as_ending_keeps_a_bounded_number_open(tmp_path: Path):
    from mrpvm.kernel.db import sqlite as sqlite_module

    before = len(sqlite_module._kept_open)
    for i in range(sqlite_module.KEPT_OPEN + 5):
        database = SqliteDatabase(tmp_path / f"s{i}.db")
        database.connection().execute("SELECT 1")
        database.close(ending=True)
    assert before <= len(sqlite_module._kept_open) <= sqlite_module.KEPT_OPEN
