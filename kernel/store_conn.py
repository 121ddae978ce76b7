"""The store's connection layer (kernel/store.py): one SQLite connection per thread, write
transactions, the schema migrations run on open, and SQLite's own checks.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from .errors import (
    DISK_FULL_REMEDY,
    DiskFull,
    StoreError,
    as_disk_full,
)
from .store_rows import (
    MIGRATIONS,
    SCHEMA_VERSION,
)

DB_NAME = "mrpvm.db"
BUSY_TIMEOUT_MS = 10_000


def _no_space(path: Path) -> bool:
    """Whether the filesystem holding `path` has no block left for this user."""
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False


class StoreConnection:
    """The store's connections (one per thread), write transactions, schema migrations and checks."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._migrate()

    # ------------------------------------------------------------------ connections and transactions

    def _conn(self) -> sqlite3.Connection:
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
        """One write transaction (BEGIN IMMEDIATE takes the write lock up front); rollback on any error."""
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
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

    def close(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
            self._closed = True
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        return int(self._conn().execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}; this kernel understands up to {SCHEMA_VERSION}",
                {"version": version, "supported": SCHEMA_VERSION},
            )
        while version < SCHEMA_VERSION:
            with self.transaction() as conn:
                # Re-read inside the write lock: another process may have migrated meanwhile.
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version >= SCHEMA_VERSION:
                    break
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {version + 1}")
            version += 1

    def integrity_check(self) -> list[str]:
        """SQLite's own integrity and foreign-key checks; an empty list means consistent."""
        conn = self._conn()
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
        problems += [f"foreign key: {tuple(row)}" for row in conn.execute("PRAGMA foreign_key_check")]
        return problems
