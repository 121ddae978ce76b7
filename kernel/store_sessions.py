"""The store's session tables (kernel/store.py): sessions (DS019), their preferences, titles and committed
units (decoded units cached in memory, see `session_units`)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins

from .db import Database
from .errors import (
    SessionNotFound,
)
from .names import TITLE_MAX, checked_name
from .records import SessionRecord
from .store_kbs import KbTables
from .store_rows import (
    insert_session_units,
    new_id,
    now_iso,
    pins_decoder,
    pins_json,
    unit_decoder,
)

SESSION_CACHE_UNITS = 20_000  # decoded session units kept in memory (see SessionTables.session_units)


class SessionTables(KbTables):
    def __init__(self, database: Database | Path | str, *, node_id: str = "", home: Path | None = None):
        super().__init__(database, node_id=node_id, home=home)
        # session id -> (highest pk decoded, the session's units): see session_units
        self._session_cache: OrderedDict[str, tuple[int, list[KnowledgeUnit]]] = OrderedDict()
        self._cached_units = 0  # sum of the cached sessions' unit counts (kept as they change)

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
