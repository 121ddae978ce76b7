"""The store's connection layer (kernel/store.py): the database backend (kernel/db/), write transactions,
row locks, the schema migrations run on open, the consistency checks, and the nodes using the store."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Self

from .db import Database, open_database
from .db.base import Connection
from .db.pg_schema import PG_MIGRATIONS
from .errors import (
    StoreError,
)
from .node import LOCAL_NODE
from .store_acks import IndexAcks
from .store_learning import PlannerLearning
from .store_nodes import NodeRegistry
from .store_rows import (
    MIGRATIONS,
    SCHEMA_VERSION,
)
from .store_stats import PlannerStatsAndCache


class StoreConnection(PlannerStatsAndCache, IndexAcks, NodeRegistry, PlannerLearning):
    """The database behind the store (a kernel/db backend), its transactions, migrations and checks, the
    nodes (store_nodes.py) and what planners learned (store_learning.py)."""

    def __init__(self, database: Database | Path | str, *, node_id: str = "", home: Path | None = None):
        self._db: Database = (
            database
            if not isinstance(database, Path | str)
            else open_database(Path(database).parent, f"sqlite:{database}")
        )
        self.path: Path | None = getattr(self._db, "path", None)  # the SQLite file (None: a server)
        # the home this store serves (its artifacts, node id); a SQLite store defaults to its file's folder
        self.home: Path = Path(home) if home is not None else (self.path.parent if self.path else Path.cwd())
        self.node_id = node_id or LOCAL_NODE
        self._lock = threading.Lock()
        self._init_learning()
        try:
            self._migrate()
        except BaseException:
            self._db.close()
            raise

    @property
    def backend(self) -> str:
        """ "sqlite" or "postgresql"."""
        return self._db.kind

    def describe(self) -> str:
        """Where the store is, without credentials."""
        return self._db.describe()

    # ------------------------------------------------------------------ connections and transactions

    def _conn(self) -> Connection:
        return self._db.connection()

    def transaction(self) -> AbstractContextManager[Connection]:
        """One write transaction; rollback on any error (SQLite: the write lock is taken up front;
        PostgreSQL: take row locks with `_lock_row` before a read-then-write)."""
        return self._db.transaction()

    def _lock_row(self, conn: Connection, table: str, key: str) -> bool:
        return self._db.lock_row(conn, table, key)

    def _change_stamp(self) -> object | None:
        return self._db.change_stamp()

    @property
    def integrity_errors(self) -> tuple[type[BaseException], ...]:
        return self._db.integrity_errors

    def checkpoint_in_background(self) -> None:
        """A long-running process (the daemon): commits never checkpoint the journal themselves (kernel/db)."""
        self._db.checkpoint_in_background()

    def close(self, *, ending: bool = False) -> None:
        """`ending`: the process ends right after (db/sqlite.py: no WAL checkpoint on the way out)."""
        self._db.close(ending=ending)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        return self._db.schema_version()

    def _migrate(self) -> None:
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.describe()} has schema version {version}; this kernel understands up to {SCHEMA_VERSION}",
                {"version": version, "supported": SCHEMA_VERSION},
            )
        if version < SCHEMA_VERSION:
            self._db.migrate((MIGRATIONS if self.backend == "sqlite" else PG_MIGRATIONS)[:SCHEMA_VERSION])

    def integrity_check(self) -> list[str]:
        """The backend's own checks (SQLite: integrity and foreign keys) and the store's: every source
        holds the units its row counts, every turn index of a session is there once; [] = consistent."""
        conn = self._conn()
        problems = self._db.integrity_check()
        problems += [
            f"source {r[0]} records {r[1]} units but holds {r[2]}"
            for r in conn.execute(
                "SELECT s.id, s.unit_count, COUNT(u.pk) FROM sources s LEFT JOIN units u ON u.source_id = s.id"
                " GROUP BY s.id, s.unit_count HAVING COUNT(u.pk) <> s.unit_count"
            )
        ]
        problems += [
            f"session {r[0]} counts {r[1]} turns but holds {r[2]} (indexes {r[3]}..{r[4]})"
            for r in conn.execute(
                "SELECT s.id, s.turn_count, COUNT(t.request_id), MIN(t.turn_index), MAX(t.turn_index)"
                " FROM sessions s LEFT JOIN turns t ON t.session_id = s.id GROUP BY s.id, s.turn_count"
                " HAVING COUNT(t.request_id) <> s.turn_count OR (COUNT(t.request_id) > 0"
                " AND (MIN(t.turn_index) <> 0 OR MAX(t.turn_index) <> s.turn_count - 1))"
            )
        ]
        return problems
