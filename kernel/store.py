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
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import msgspec
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins

from .db import DB_NAME as DB_NAME  # re-exported: tools and tests name the SQLite file through the store
from .db import URL_VARIABLE, Database, open_database
from .db.base import Connection
from .db.pg_schema import PG_MIGRATIONS
from .errors import (
    KbExists,
    KbNotFound,
    SessionNotFound,
    SourceNotFound,
    StoreError,
    TurnNotFound,
    ValidationFailed,
)
from .names import KB_NAME_MAX, SOURCE_NAME_MAX, TITLE_MAX, checked_name
from .node import LOCAL_NODE, node_id_for, node_stale_after_s
from .records import KbRecord, PlannerOutcome, SessionRecord, SourceRecord, TurnRecord, title_from_question
from .store_acks import IndexAcks
from .store_learning import PlannerLearning
from .store_nodes import NodeRegistry
from .store_rows import (
    MIGRATIONS,
    SCHEMA_VERSION,
    decode_json,
    insert_session_units,
    json_encoder,
    new_id,
    now_iso,
    pins_decoder,
    pins_json,
    slug,
    unit_decoder,
    unit_row,
)
from .store_stats import PlannerStatsAndCache

# An untitled session takes its first question as its title; a title set by hand is kept.
_TITLE_IF_UNTITLED = "title = CASE WHEN title = '' THEN ? ELSE title END"
SESSION_CACHE_UNITS = 20_000  # decoded session units kept in memory (see Store.session_units)
PAUSE_IN_COMMIT_S = 300.0  # the test kills the process long before (another turn may run meanwhile)
KB_CHANNEL = "mrpvm_kb"  # change notices: a KB's sources changed (payload: its id); knowledge/index_watch.py
_PAUSE_IN_COMMIT = os.environ.get("MRPVM_TEST_PAUSE_IN_COMMIT", "")  # test hook, see the module docstring


def _pause_in_commit() -> None:
    """MRPVM_TEST_PAUSE_IN_COMMIT (tests only): announce, then hold the open turn transaction."""
    Path(_PAUSE_IN_COMMIT).write_text(str(os.getpid()))
    time.sleep(PAUSE_IN_COMMIT_S)


class Store(PlannerStatsAndCache, IndexAcks, NodeRegistry, PlannerLearning):
    """The kernel's store. `Store.open(home)` uses `<home>/mrpvm.db`, or the PostgreSQL database
    MRPVM_STORE_URL names (kernel/db/); `node_id` is this machine's identity (kernel/node.py)."""

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
        # session id -> (highest pk decoded, the session's units): see session_units
        self._session_cache: OrderedDict[str, tuple[int, list[KnowledgeUnit]]] = OrderedDict()
        self._cached_units = 0  # sum of the cached sessions' unit counts (kept as they change)
        try:
            self._migrate()
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def open(cls, home: Path | str, environ: Mapping[str, str] | None = None) -> Store:
        """The store of a home: MRPVM_STORE_URL (PostgreSQL) or `<home>/mrpvm.db`; the node is
        MRPVM_NODE_ID or the home's stable default."""
        env = os.environ if environ is None else environ
        database = open_database(home, env.get(URL_VARIABLE, ""))
        try:
            node = node_id_for(Path(home), env)
            stale_after_s = node_stale_after_s(env)
        except BaseException:
            database.close()
            raise
        store = cls(database, node_id=node, home=Path(home))
        store.stale_after_s = stale_after_s
        return store

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

    @property
    def integrity_errors(self) -> tuple[type[BaseException], ...]:
        return self._db.integrity_errors

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
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

    # ------------------------------------------------------------------ KB repositories (DS026)

    @staticmethod
    def _kb(row: tuple) -> KbRecord:
        return KbRecord(id=row[0], name=row[1], createdAt=row[2])

    def create_kb(self, name: str) -> KbRecord:
        name = checked_name("a KB name", name, KB_NAME_MAX)
        record = KbRecord(id=new_id("kb"), name=name, createdAt=now_iso())
        try:
            with self.transaction() as conn:
                conn.execute(
                    "INSERT INTO kbs (id, name, created_at) VALUES (?, ?, ?)",
                    (record.id, record.name, record.createdAt),
                )
        except self.integrity_errors:
            raise KbExists(f"a KB named '{name}' already exists", {"name": name}) from None
        return record

    def find_kb(self, name_or_id: str) -> KbRecord | None:
        row = (
            self._conn()
            .execute(
                "SELECT id, name, created_at FROM kbs WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1",
                (name_or_id, name_or_id, name_or_id),
            )
            .fetchone()
        )
        return self._kb(row) if row else None

    def get_kb(self, name_or_id: str) -> KbRecord:
        record = self.find_kb(name_or_id)
        if record is None:
            raise KbNotFound(f"no KB named or with id '{name_or_id}'", {"kb": name_or_id})
        return record

    def list_kbs(self) -> list[KbRecord]:
        rows = self._conn().execute("SELECT id, name, created_at FROM kbs ORDER BY rowid")
        return [self._kb(r) for r in rows]

    def delete_kb(self, name_or_id: str) -> KbRecord:
        """Delete a KB with its sources and units (sessions mounting it keep working without a KB)."""
        with self.transaction() as conn:
            record = self.get_kb(name_or_id)
            conn.execute("DELETE FROM kbs WHERE id = ?", (record.id,))
            self._forget_learning(conn, record.id)
            self._db.notify(conn, KB_CHANNEL, record.id)
        return record

    # ------------------------------------------------------------------ sources and KB units (DS018)

    @staticmethod
    def _source(row: tuple) -> SourceRecord:
        return SourceRecord(
            id=row[0],
            kbId=row[1],
            name=row[2],
            sourceType=row[3],
            hash=row[4],
            bytes=row[5],
            unitCount=row[6],
            ingestedAt=row[7],
        )

    _SOURCE_COLS = "id, kb_id, name, source_type, hash, bytes, unit_count, ingested_at"

    def find_source(self, kb_id: str, name_or_id: str) -> SourceRecord | None:
        row = (
            self._conn()
            .execute(
                f"SELECT {self._SOURCE_COLS} FROM sources WHERE kb_id = ? AND (id = ? OR name = ?)"
                " ORDER BY id = ? DESC LIMIT 1",
                (kb_id, name_or_id, name_or_id, name_or_id),
            )
            .fetchone()
        )
        return self._source(row) if row else None

    def get_source(self, kb_id: str, name_or_id: str) -> SourceRecord:
        record = self.find_source(kb_id, name_or_id)
        if record is None:
            raise SourceNotFound(
                f"KB {kb_id} has no source '{name_or_id}'", {"kb": kb_id, "source": name_or_id}
            )
        return record

    def source_id_for(self, kb_id: str, name: str) -> str:
        """The id a source of this name has in the KB, or a fresh one (`<slug>-<8 hex>`) if it is new.

        Keeping the id across re-ingests keeps KU ids stable, so kb-plugins replace rather than add.
        """
        existing = self.find_source(kb_id, name)
        return existing.id if existing else f"{slug(name)}-{secrets.token_hex(4)}"

    def all_sources(self) -> list[SourceRecord]:
        """Every source of every KB, in stored order."""
        return [
            self._source(r)
            for r in self._conn().execute(f"SELECT {self._SOURCE_COLS} FROM sources ORDER BY rowid")
        ]

    def list_sources(self, kb_id: str) -> list[SourceRecord]:
        rows = self._conn().execute(
            f"SELECT {self._SOURCE_COLS} FROM sources WHERE kb_id = ? ORDER BY rowid", (kb_id,)
        )
        return [self._source(r) for r in rows]

    def replace_source(
        self, kb_id: str, source: SourceRecord, units: list[KnowledgeUnit], text: str | None = None
    ) -> SourceRecord:
        """Store a source and its whole KU tree (and its raw `text`, when given), replacing every unit it
        had, in ONE transaction.

        A source of the same name under another id is replaced too. Returns the stored record
        (unitCount = len(units)).
        """
        stored = msgspec.structs.replace(
            source,
            name=checked_name("a source name", source.name, SOURCE_NAME_MAX),
            kbId=kb_id,
            unitCount=len(units),
            ingestedAt=source.ingestedAt or now_iso(),
        )
        rows = [unit_row(u, kb_id=kb_id, session_id=None, source_id=stored.id) for u in units]
        try:
            with self.transaction() as conn:
                # the KB's row lock orders concurrent writers of its sources (PostgreSQL; SQLite's
                # write lock already does): two ingests of one name replace, never collide
                if not self._lock_row(conn, "kbs", kb_id):
                    raise KbNotFound(f"no KB with id '{kb_id}'", {"kb": kb_id})
                # ON DELETE CASCADE removes the old units with their source row.
                conn.execute(
                    "DELETE FROM sources WHERE kb_id = ? AND (id = ? OR name = ?)",
                    (kb_id, stored.id, stored.name),
                )
                conn.execute(
                    f"INSERT INTO sources ({self._SOURCE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        stored.id,
                        kb_id,
                        stored.name,
                        stored.sourceType,
                        stored.hash,
                        stored.bytes,
                        stored.unitCount,
                        stored.ingestedAt,
                    ),
                )
                conn.executemany(
                    "INSERT INTO units (id, kb_id, session_id, source_id, ku_type, hash, claim_key, data)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                if text is not None:
                    conn.execute(
                        "INSERT INTO source_texts (source_id, text) VALUES (?, ?)", (stored.id, text)
                    )
                self._db.notify(conn, KB_CHANNEL, kb_id)
        except self.integrity_errors as err:
            raise ValidationFailed(
                f"source '{stored.name}' cannot be stored: {err} (duplicate unit id or a source id used by another KB)",
                {"kb": kb_id, "source": stored.id},
            ) from None
        return stored

    def remove_source(self, kb_id: str, source_id: str, pending_for: Iterable[str] = ()) -> SourceRecord:
        """Remove a source (by id or name) and all its units. In the same transaction, record that each
        kb-plugin of `pending_for` still has to drop it from its index on every node that has opened the
        store (knowledge/index_ledger.py)."""
        plugins = sorted(set(pending_for))
        with self.transaction() as conn:
            if not self._lock_row(conn, "kbs", kb_id):
                raise KbNotFound(f"no KB with id '{kb_id}'", {"kb": kb_id})
            record = self.get_source(kb_id, source_id)
            nodes = self._live_nodes(conn)
            conn.execute("DELETE FROM sources WHERE id = ?", (record.id,))
            stamp = now_iso()
            conn.executemany(
                "INSERT INTO source_removals (source_id, plugin_id, node_id, kb_id, source_name, removed_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, plugin_id, node_id)"
                " DO UPDATE SET source_name = excluded.source_name, removed_at = excluded.removed_at",
                [(record.id, p, node, kb_id, record.name, stamp) for p in plugins for node in sorted(nodes)],
            )
            self._db.notify(conn, KB_CHANNEL, kb_id)
        return record

    def source_exists(self, source_id: str) -> bool:
        """Is a source with this id stored in any KB (source ids are unique across the store)?"""
        return self._conn().execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone() is not None

    def source_text(self, source_id: str) -> str | None:
        """The raw text a source was ingested from (None: stored without it, e.g. before schema 4)."""
        row = (
            self._conn().execute("SELECT text FROM source_texts WHERE source_id = ?", (source_id,)).fetchone()
        )
        return row[0] if row else None

    def kb_units(self, kb_id: str, source_id: str | None = None) -> list[KnowledgeUnit]:
        """Every KU of the KB (or of one source), in stored order."""
        if source_id is None:
            rows = self._conn().execute("SELECT data FROM units WHERE kb_id = ? ORDER BY pk", (kb_id,))
        else:
            rows = self._conn().execute(
                "SELECT data FROM units WHERE kb_id = ? AND source_id = ? ORDER BY pk", (kb_id, source_id)
            )
        return [unit_decoder.decode(r[0]) for r in rows]

    def source_by_id(self, source_id: str) -> SourceRecord | None:
        """A source by its id alone (source ids are unique across KBs; a KU id starts with its source's)."""
        row = (
            self._conn()
            .execute(f"SELECT {self._SOURCE_COLS} FROM sources WHERE id = ?", (source_id,))
            .fetchone()
        )
        return self._source(row) if row else None

    def kb_unit(self, kb_id: str, unit_id: str) -> KnowledgeUnit | None:
        row = (
            self._conn()
            .execute("SELECT data FROM units WHERE kb_id = ? AND id = ?", (kb_id, unit_id))
            .fetchone()
        )
        return unit_decoder.decode(row[0]) if row else None

    def kb_stats(self, kb_id: str) -> dict[str, int]:
        conn = self._conn()
        sources = conn.execute("SELECT COUNT(*) FROM sources WHERE kb_id = ?", (kb_id,)).fetchone()[0]
        units = conn.execute("SELECT COUNT(*) FROM units WHERE kb_id = ?", (kb_id,)).fetchone()[0]
        return {"sources": int(sources), "units": int(units)}

    # ------------------------------------------------------------------ sessions (DS019)

    _SESSION_COLS = "id, kb_id, preferences, created_at, updated_at, turn_count, deliberation, title"

    @staticmethod
    def _session(row: tuple) -> SessionRecord:
        return SessionRecord(
            id=row[0],
            kbId=row[1],
            preferences=pins_decoder.decode(row[2]),
            createdAt=row[3],
            updatedAt=row[4],
            turnCount=row[5],
            deliberationLevel=row[6],
            title=row[7],
        )

    _INSERT_SESSION = f"INSERT INTO sessions ({_SESSION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

    def create_session(
        self, kb_id: str | None = None, preferences: Pins | None = None, deliberation_level: int = 0
    ) -> SessionRecord:
        """A new session, optionally mounting a KB (name or id), with plugin and deliberation preferences."""
        with self.transaction() as conn:
            record = self.draft_session(kb_id, preferences, deliberation_level)
            conn.execute(
                self._INSERT_SESSION,
                (
                    record.id,
                    record.kbId,
                    pins_json(record.preferences),
                    record.createdAt,
                    record.updatedAt,
                    0,
                    record.deliberationLevel,
                    record.title,
                ),
            )
        return record

    def draft_session(
        self, kb_id: str | None = None, preferences: Pins | None = None, deliberation_level: int = 0
    ) -> SessionRecord:
        """A new session record NOT stored yet: `commit_turn(..., session=record)` stores it in the turn's
        own transaction, so a turn in a fresh session is one transaction and a turn that never commits
        leaves no empty session behind."""
        stamp = now_iso()
        kb = self.get_kb(kb_id).id if kb_id else None
        return SessionRecord(
            id=new_id("ses"),
            kbId=kb,
            preferences=preferences or Pins(),
            createdAt=stamp,
            updatedAt=stamp,
            deliberationLevel=deliberation_level,
        )

    def get_session(self, session_id: str) -> SessionRecord:
        row = (
            self._conn()
            .execute(f"SELECT {self._SESSION_COLS} FROM sessions WHERE id = ?", (session_id,))
            .fetchone()
        )
        if row is None:
            raise SessionNotFound(f"no session '{session_id}'", {"session": session_id})
        return self._session(row)

    def list_sessions(self) -> list[SessionRecord]:
        rows = self._conn().execute(f"SELECT {self._SESSION_COLS} FROM sessions ORDER BY rowid")
        return [self._session(r) for r in rows]

    def last_session(self) -> SessionRecord | None:
        """The session used last (the latest turn or change), or None when there is none."""
        row = (
            self._conn()
            .execute(
                f"SELECT {self._SESSION_COLS} FROM sessions ORDER BY updated_at DESC, rowid DESC LIMIT 1"
            )
            .fetchone()
        )
        return self._session(row) if row else None

    def set_session_preferences(self, session_id: str, preferences: Pins) -> SessionRecord:
        with self.transaction() as conn:
            self.get_session(session_id)
            conn.execute(
                "UPDATE sessions SET preferences = ?, updated_at = ? WHERE id = ?",
                (pins_json(preferences), now_iso(), session_id),
            )
        return self.get_session(session_id)

    def set_session_deliberation(self, session_id: str, level: int) -> SessionRecord:
        return self._set_session_column(session_id, "deliberation", int(level))

    def set_session_title(self, session_id: str, title: str) -> SessionRecord:
        """Name a session (an empty title makes it untitled again)."""
        title = checked_name("a session title", title, TITLE_MAX, blank_ok=True)
        return self._set_session_column(session_id, "title", title)

    def _set_session_column(self, session_id: str, column: str, value: object) -> SessionRecord:
        with self.transaction() as conn:
            self.get_session(session_id)
            conn.execute(
                f"UPDATE sessions SET {column} = ?, updated_at = ? WHERE id = ?",
                (value, now_iso(), session_id),
            )
        return self.get_session(session_id)

    def set_session_kb(self, session_id: str, kb: str | None) -> SessionRecord:
        """Mount a KB (name or id) into a session, or unmount it with None; one transaction."""
        with self.transaction() as conn:
            self.get_session(session_id)
            kb_id = self.get_kb(kb).id if kb else None
            conn.execute(
                "UPDATE sessions SET kb_id = ?, updated_at = ? WHERE id = ?", (kb_id, now_iso(), session_id)
            )
        return self.get_session(session_id)

    def delete_session(self, session_id: str) -> None:
        with self.transaction() as conn:
            self.get_session(session_id)
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        with self._lock:
            dropped = self._session_cache.pop(session_id, None)
            if dropped is not None:
                self._cached_units -= len(dropped[1])

    def session_units(self, session_id: str) -> list[KnowledgeUnit]:
        """The committed units of a session, in commit order.

        Session units are append-only (only deleting the session removes them) and a later commit always
        gets higher pks, so the decoded units of recently read sessions are kept (up to SESSION_CACHE_UNITS
        in all, least recently read dropped first) and a call decodes only the rows added since (every
        turn of a continuing session reads its units). The returned units are shared with that cache:
        treat them as immutable (replace, never assign).
        """
        with self._lock:
            last_pk, units = self._session_cache.get(session_id, (0, []))
        # one query: no row = no such session; one row with a NULL pk = no units added since
        rows = (
            self._conn()
            .execute(
                "SELECT u.pk, u.data FROM sessions s LEFT JOIN units u ON u.session_id = s.id AND u.pk > ?"
                " WHERE s.id = ? ORDER BY u.pk",
                (last_pk, session_id),
            )
            .fetchall()
        )
        if not rows:
            raise SessionNotFound(f"no session '{session_id}'", {"session": session_id})
        if rows[0][0] is not None:
            units = [*units, *(unit_decoder.decode(r[1]) for r in rows)]
            last_pk = rows[-1][0]
        with self._lock:
            cache = self._session_cache
            before = cache.get(session_id)
            if before is not None and before[1] is units:  # nothing new: no bookkeeping
                cache.move_to_end(session_id)
                return list(units)
            self._cached_units += len(units) - (len(before[1]) if before is not None else 0)
            cache[session_id] = (last_pk, units)
            cache.move_to_end(session_id)
            while cache and self._cached_units > SESSION_CACHE_UNITS:
                self._cached_units -= len(cache.popitem(last=False)[1][1])
        return list(units)

    def add_session_units(self, session_id: str, units: list[KnowledgeUnit]) -> int:
        """Context load: add units to the session (deduplicated) in one transaction; returns #added."""
        return len(self.add_session_units_list(session_id, units))

    def add_session_units_list(self, session_id: str, units: list[KnowledgeUnit]) -> list[KnowledgeUnit]:
        """As add_session_units, returning the units actually added (duplicates left out)."""
        with self.transaction() as conn:
            # the session's row lock orders its unit writers, so a later commit has higher pks (the
            # session_units cache relies on it) and deduplication sees every earlier commit
            if not self._lock_row(conn, "sessions", session_id):
                raise SessionNotFound(f"no session '{session_id}'", {"session": session_id})
            added = insert_session_units(conn, session_id, units)
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now_iso(), session_id))
        return added

    # ------------------------------------------------------------------ turns

    _TURN_COLS = (
        "request_id, session_id, turn_index, user_message, response_markdown, response_document, trace,"
        " status, plugin_ids, llm_calls, duration_ms, created_at, answer_truncated"
    )

    _INSERT_TURN = f"INSERT INTO turns ({_TURN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    @staticmethod
    def _turn(row: tuple) -> TurnRecord:
        return TurnRecord(
            requestId=row[0],
            sessionId=row[1],
            turnIndex=row[2],
            userMessage=row[3],
            responseMarkdown=row[4],
            responseDocument=decode_json(row[5]),
            trace=decode_json(row[6]),
            status=row[7],
            pluginIds=decode_json(row[8]),
            llmCalls=row[9],
            durationMs=row[10],
            createdAt=row[11],
            answerTruncated=bool(row[12]),
        )

    def commit_turn(
        self,
        turn: TurnRecord,
        units: list[KnowledgeUnit],
        preferences: Pins | None = None,
        *,
        session: SessionRecord | None = None,
        planner_outcomes: Iterable[PlannerOutcome] = (),
        alpha: float = 0.3,
    ) -> TurnRecord:
        """ONE transaction: store `session` if given and new (a `draft_session()` record), promote the
        staged turn units (deduplicated), append the turn with its response document and trace, bump the
        session's turn count, update its preferences if given, and fold `planner_outcomes` into the
        planner-level EWMA (as `record_planner_outcome`).

        The turn index is the session's turn count (the store's, not the caller's). Returns the stored turn.
        """
        stamp = now_iso()
        outcomes = list(planner_outcomes)
        if outcomes and not 0.0 < alpha <= 1.0:
            raise ValidationFailed(f"alpha must be in (0, 1], got {alpha}")
        if session is not None and session.id != turn.sessionId:
            raise ValidationFailed(
                f"turn {turn.requestId} belongs to session {turn.sessionId}, not {session.id}",
                {"request": turn.requestId, "session": session.id},
            )
        created_at = turn.createdAt or stamp
        first_title = title_from_question(turn.userMessage)  # names an untitled session
        turn_row = [
            turn.requestId,
            turn.sessionId,
            0,  # the turn index, set below from the session's turn count
            turn.userMessage,
            turn.responseMarkdown,
            json_encoder.encode(turn.responseDocument),
            json_encoder.encode(turn.trace),
            turn.status,
            json_encoder.encode(turn.pluginIds),
            turn.llmCalls,
            turn.durationMs,
            created_at,
            int(turn.answerTruncated),
        ]
        try:
            with self.transaction() as conn:
                # A drafted session is inserted already holding this turn (turn_count 1, its preferences).
                created = (
                    session is not None
                    and conn.execute(
                        self._INSERT_SESSION + " ON CONFLICT(id) DO NOTHING",
                        (
                            session.id,
                            session.kbId,
                            pins_json(session.preferences if preferences is None else preferences),
                            session.createdAt,
                            stamp,
                            1,
                            session.deliberationLevel,
                            session.title or title_from_question(turn.userMessage),
                        ),
                    ).rowcount
                    == 1
                )
                if not created:  # one statement bumps the count and returns the turn's index
                    if preferences is not None:
                        rows = conn.execute(
                            "UPDATE sessions SET preferences = ?, turn_count = turn_count + 1, updated_at = ?,"
                            f" {_TITLE_IF_UNTITLED} WHERE id = ? RETURNING turn_count - 1",
                            (pins_json(preferences), stamp, first_title, turn.sessionId),
                        ).fetchall()
                    else:
                        rows = conn.execute(
                            "UPDATE sessions SET turn_count = turn_count + 1, updated_at = ?,"
                            f" {_TITLE_IF_UNTITLED} WHERE id = ? RETURNING turn_count - 1",
                            (stamp, first_title, turn.sessionId),
                        ).fetchall()  # fetchall: the statement runs to its end before the next one
                    if not rows:
                        raise SessionNotFound(f"no session '{turn.sessionId}'", {"session": turn.sessionId})
                    turn_row[2] = rows[0][0]
                insert_session_units(conn, turn.sessionId, units, empty=created)
                conn.execute(self._INSERT_TURN, turn_row)
                for outcome in outcomes:
                    self._apply_planner_outcome(conn, outcome, alpha, stamp)
                if _PAUSE_IN_COMMIT:
                    _pause_in_commit()
        except self.integrity_errors as err:
            raise ValidationFailed(
                f"turn {turn.requestId} cannot be committed: {err}", {"request": turn.requestId}
            ) from None
        return msgspec.structs.replace(turn, turnIndex=turn_row[2], createdAt=created_at)

    def update_turn_trace(self, request_id: str, trace: dict[str, Any]) -> None:
        """Replace a committed turn's trace (a call the turn left running has ended: see
        `overlap.Background`); one transaction. TurnNotFound when no such turn is stored."""
        updated = (
            self._conn()  # one statement: its own transaction (autocommit)
            .execute(
                "UPDATE turns SET trace = ? WHERE request_id = ?", (json_encoder.encode(trace), request_id)
            )
            .rowcount
        )
        if updated == 0:
            raise TurnNotFound(f"no turn with request id '{request_id}'", {"request": request_id})

    def get_turn(self, request_id: str) -> TurnRecord:
        row = (
            self._conn()
            .execute(f"SELECT {self._TURN_COLS} FROM turns WHERE request_id = ?", (request_id,))
            .fetchone()
        )
        if row is None:
            raise TurnNotFound(f"no turn with request id '{request_id}'", {"request": request_id})
        return self._turn(row)

    def list_turns(
        self, session_id: str, *, start: int | None = None, limit: int | None = None, descending: bool = False
    ) -> list[TurnRecord]:
        """The session's turns with their decoded document and trace (for display; see
        `recent_user_messages` for the history a turn needs), in turn order (`descending`: newest first),
        from turn index `start` on (down, when descending), at most `limit`."""
        self.get_session(session_id)
        order, bound = ("DESC", "<=") if descending else ("ASC", ">=")
        where = f" AND turn_index {bound} ?" if start is not None else ""
        params: tuple[Any, ...] = (session_id,) + ((start,) if start is not None else ())
        rows = self._conn().execute(
            f"SELECT {self._TURN_COLS} FROM turns WHERE session_id = ?{where} ORDER BY turn_index {order}"
            + ("" if limit is None else f" LIMIT {max(0, int(limit))}"),
            params,
        )
        return [self._turn(r) for r in rows]

    def recent_user_messages(self, session_id: str, limit: int) -> list[str]:
        """The user messages of the session's last `limit` turns, oldest first; no trace is read."""
        rows = (
            self._conn()
            .execute(
                "SELECT user_message FROM turns WHERE session_id = ? ORDER BY turn_index DESC LIMIT ?",
                (session_id, max(0, limit)),
            )
            .fetchall()
        )
        if not rows:
            self.get_session(session_id)  # SessionNotFound for an unknown session
        return [r[0] for r in reversed(rows)]

    # ------------------------------------------------------------------ generic

    def run_in_transaction(self, work: Callable[[Connection], Any]) -> Any:
        """Run `work(conn)` inside one write transaction (for callers composing several writes)."""
        with self.transaction() as conn:
            return work(conn)
