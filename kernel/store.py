"""The kernel's one SQLite database (docs/ARCHITECTURE.md §6): KBs, sources, KUs, sessions, turns, planner stats, LLM cache.

- WAL journal, foreign keys on, a busy timeout; the schema is versioned by `PRAGMA user_version` and
  brought up to date by the ordered MIGRATIONS on open (each migration is one transaction, so a crash
  mid-migration leaves the previous version).
- Every write that matters is ONE `BEGIN IMMEDIATE ... COMMIT` transaction, rolled back on any error:
  a process killed mid-ingest or mid-turn leaves the last committed state.
- One connection per thread (threading.local): the engine may call from its event-loop thread or from
  worker threads; each call is short.
- A KU is stored as its msgspec JSON plus columns (id, kb_id or session_id, source_id, ku_type, hash,
  claim_key); the JSON is the truth, the columns serve lookups and deduplication. Only indexes some query
  (or a foreign-key cascade) uses exist, partial where a column is NULL for half the rows: a KB unit
  updates 2 indexes, a session unit 3 (schema 2; check with EXPLAIN QUERY PLAN before adding one).
- Durability: `synchronous = NORMAL` under WAL. A committed transaction survives the process dying at any
  point (SIGKILL, OOM, a crash): its WAL frames are in the OS, and the next open replays them. An OS crash
  or power loss may roll back the last few commits (never to a torn state). That is the promise (docs/ARCHITECTURE.md
  §6: "a crash mid-ingest or mid-turn leaves the previous committed state intact"); FULL would add an
  fsync to every commit.
- A turn is ONE transaction: `commit_turn` creates a drafted session (`draft_session`), promotes the staged
  units, appends the turn and updates the planner-level EWMA together.
- Test hook: when the process starts with MRPVM_TEST_PAUSE_IN_COMMIT=<file>, `commit_turn` writes <file>
  after its rows, inside the open transaction, and sleeps PAUSE_IN_COMMIT_S before COMMIT, so
  tests/kernel/test_store_crash.py can SIGKILL a kernel mid-commit. Read once at import; never set outside tests.
"""

from __future__ import annotations

from pathlib import Path

from .store_conn import BUSY_TIMEOUT_MS, DB_NAME, StoreConnection
from .store_rows import SCHEMA_VERSION, new_id, now_iso
from .store_turns import TurnTables

__all__ = ["BUSY_TIMEOUT_MS", "DB_NAME", "SCHEMA_VERSION", "Store", "StoreConnection", "new_id", "now_iso"]


class Store(TurnTables):
    """The kernel's SQLite store. `Store.open(home)` uses `<home>/mrpvm.db`.

    One class of one job each: connections and migrations (store_conn.py), KBs, sources and KB units
    (store_kbs.py), sessions (store_sessions.py), turns (store_turns.py), planner stats and the LLM
    cache (store_stats.py); the row codecs and the schema are in store_rows.py.
    """

    @classmethod
    def open(cls, home: Path | str) -> Store:
        return cls(Path(home) / DB_NAME)
