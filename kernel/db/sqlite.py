"""The embedded backend: one SQLite file in WAL mode (the default; one machine, any number of processes).

- One connection per thread (threading.local); WAL journal, foreign keys on, a busy timeout.
- A write transaction is `BEGIN IMMEDIATE`: it takes SQLite's one write lock up front, so every
  read-then-write inside it is already serialized (`lock_row` only checks the row exists).
- Durability: `synchronous = NORMAL` under WAL. A committed transaction survives the process dying at any
  point (its WAL frames are in the OS); an OS crash may roll back the last few commits, never to a torn
  state.
- The schema version is `PRAGMA user_version`; each migration is one transaction that re-reads the
  version under the write lock (another process may have migrated meanwhile).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import DISK_FULL_REMEDY, DiskFull, StoreError, as_disk_full
from .base import Connection
from .sqlite_checkpoint import BackgroundCheckpoints

BUSY_TIMEOUT_MS = 10_000


def _no_space(path: Path) -> bool:
    """Whether the filesystem holding `path` has no block left for this user."""
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False


KEPT_OPEN = 8
_kept_open: list[sqlite3.Connection] = []  # closed when the process ends (`close(ending=True)`)


class SqliteDatabase:
    kind = "sqlite"
    integrity_errors: tuple[type[BaseException], ...] = (sqlite3.IntegrityError,)

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._checkpoints: BackgroundCheckpoints | None = None  # `checkpoint_in_background`

    def describe(self) -> str:
        return f"sqlite:{self.path}"

    def connection(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"the store at {self.path} is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(
                    self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
                )
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes in WAL mode
                conn.execute("PRAGMA foreign_keys = ON")
                if self._checkpoints is not None:
                    conn.execute("PRAGMA wal_autocheckpoint = 0")
            except sqlite3.DatabaseError as err:
                if _no_space(self.path):  # SQLite says "disk I/O error" when it cannot create its -shm
                    raise DiskFull(f"disk full: cannot open {self.path}: {DISK_FULL_REMEDY}") from None
                raise StoreError(f"cannot open the database {self.path}: {err}") from None
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self.connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
            if self._checkpoints is not None:
                self._checkpoints.committed()
        except BaseException as err:
            # SQLite may have rolled back already (SQLITE_FULL does): a second ROLLBACK would fail with
            # "no transaction is active" and hide the cause.
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            full = as_disk_full(err, str(self.path))
            if full is not None and full is not err:
                raise full from None
            raise

    def change_stamp(self) -> tuple[int, int]:
        """The calling thread's connection (its identity) and its `PRAGMA data_version`."""
        conn = self.connection()
        return id(conn), int(conn.execute("PRAGMA data_version").fetchone()[0])

    def checkpoint_in_background(self) -> None:
        """From now on this process's commits never checkpoint the WAL themselves: a thread does, after them
        (sqlite_checkpoint.py; a long-running process whose commits run on its event loop)."""
        if self._checkpoints is None and not self._closed:
            self._checkpoints = BackgroundCheckpoints(self.connection)
            with self._lock:
                conns = list(self._conns)
            for conn in conns:  # idle now: opened by this thread, or by one that finished its work
                conn.execute("PRAGMA wal_autocheckpoint = 0")

    def schema_version(self) -> int:
        return int(self.connection().execute("PRAGMA user_version").fetchone()[0])

    def migrate(self, migrations: list[list[str]]) -> None:
        version = self.schema_version()
        while version < len(migrations):
            with self.transaction() as conn:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version >= len(migrations):
                    break
                for statement in migrations[version]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {version + 1}")
            version += 1

    def integrity_check(self) -> list[str]:
        conn = self.connection()
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
        problems += [f"foreign key: {tuple(row)}" for row in conn.execute("PRAGMA foreign_key_check")]
        return problems

    def lock_row(self, conn: Connection, table: str, key: str) -> bool:
        # BEGIN IMMEDIATE already holds the database's write lock
        return conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (key,)).fetchone() is not None

    def notify(self, conn: Connection, channel: str, payload: str) -> None:
        """No push on SQLite: other processes on this machine poll (knowledge/index_watch.py)."""

    def close(self, *, ending: bool = False) -> None:
        """Close every connection. `ending` (a one-turn process about to exit): the connections stay open
        until the process ends, because the last connection's close copies the WAL into the database file
        and syncs both (3-20 ms at the end of a cold `mrpvm ask`); the next process's commits checkpoint
        it (wal_autocheckpoint), and a commit is durable in the WAL either way. At most KEPT_OPEN
        connections are kept so (a long process closing many stores closes the oldest)."""
        if self._checkpoints is not None:
            self._checkpoints.stop()
        with self._lock:
            conns, self._conns = self._conns, []
            self._closed = True
        if ending:
            _kept_open.extend(conns)
            conns = _kept_open[:-KEPT_OPEN] if len(_kept_open) > KEPT_OPEN else []
            del _kept_open[: len(conns)]
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()
