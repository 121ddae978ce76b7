"""The kernel's one database (docs/ARCHITECTURE.md §6): KBs, sources, KUs, sessions, turns, planner stats,
LLM cache, index acknowledgements, LLM settings — on SQLite (default) or PostgreSQL (kernel/db/).

- The schema is versioned and brought up to date by the ordered migrations on open (SQLite's MIGRATIONS,
  PostgreSQL's PG_MIGRATIONS: the same versions); each migration is one transaction, so a crash
  mid-migration leaves the previous version.
- Every write that matters is ONE transaction, rolled back on any error: a process killed mid-ingest or
  mid-turn leaves the last committed state (SQLite: WAL, `synchronous = NORMAL`; PostgreSQL: the server
  rolls back a transaction whose client died).
- SQLite serializes writers with one lock; PostgreSQL runs READ COMMITTED, so a read-then-write takes a row
  lock first (`_lock_row`): the KB's row around its sources (replace/remove), the session's row around its
  units (the session-units cache counts on a session's later commits having higher pks).
- A KU is stored as its msgspec JSON plus columns (id, kb_id or session_id, source_id, ku_type, hash,
  claim_key); the JSON is the truth, the columns serve lookups and deduplication. Only indexes some query
  (or a foreign-key cascade) uses exist, partial where a column is NULL for half the rows.
- A turn is ONE transaction: `commit_turn` creates a drafted session (`draft_session`), promotes the staged
  units, appends the turn and updates the planner-level EWMA together.
- Test hook: when the process starts with MRPVM_TEST_PAUSE_IN_COMMIT=<file>, `commit_turn` writes <file>
  after its rows, inside the open transaction, and sleeps PAUSE_IN_COMMIT_S before COMMIT, so
  tests/kernel/test_store_crash.py can SIGKILL a kernel mid-commit. Read once at import; never set outside tests.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .db import DB_NAME as DB_NAME  # re-exported: tools and tests name the SQLite file through the store
from .db import URL_VARIABLE, open_database
from .node import node_id_for
from .store_conn import StoreConnection
from .store_kbs import KB_CHANNEL, KbTables
from .store_rows import SCHEMA_VERSION, new_id, now_iso
from .store_sessions import SESSION_CACHE_UNITS, SessionTables
from .store_turns import TurnTables

__all__ = [
    "DB_NAME",
    "KB_CHANNEL",
    "SCHEMA_VERSION",
    "SESSION_CACHE_UNITS",
    "KbTables",
    "SessionTables",
    "Store",
    "StoreConnection",
    "new_id",
    "now_iso",
]


class Store(TurnTables):
    """The kernel's store. `Store.open(home)` uses `<home>/mrpvm.db`, or the PostgreSQL database
    MRPVM_STORE_URL names (kernel/db/); `node_id` is this machine's identity (kernel/node.py).

    One class of one job each, stacked: the connection, transactions, migrations and checks
    (store_conn.py), KBs, sources and KB units (store_kbs.py), sessions (store_sessions.py), turns
    (store_turns.py), planner stats and the LLM cache (store_stats.py), index acknowledgements
    (store_acks.py); the row codecs and the SQLite schema are in store_rows.py, the backends in kernel/db/.
    """

    @classmethod
    def open(cls, home: Path | str, environ: Mapping[str, str] | None = None) -> Store:
        """The store of a home: MRPVM_STORE_URL (PostgreSQL) or `<home>/mrpvm.db`; the node is
        MRPVM_NODE_ID or the home's stable default."""
        env = os.environ if environ is None else environ
        database = open_database(home, env.get(URL_VARIABLE, ""))
        try:
            node = node_id_for(Path(home), env)
        except BaseException:
            database.close()
            raise
        return cls(database, node_id=node, home=Path(home))
