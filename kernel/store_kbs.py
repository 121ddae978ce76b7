"""The store's KB tables (kernel/store.py): KB repositories (DS026), their sources and the KB units
(DS018). A change to a KB's sources is announced on KB_CHANNEL (knowledge/index_watch.py listens)."""

from __future__ import annotations

import secrets
from collections.abc import Iterable

import msgspec
from mrpvm.protocol.document import KnowledgeUnit

from .errors import (
    KbExists,
    KbNotFound,
    SourceNotFound,
    ValidationFailed,
)
from .names import KB_NAME_MAX, SOURCE_NAME_MAX, checked_name
from .records import KbRecord, SourceRecord
from .store_conn import StoreConnection
from .store_rows import (
    OWE_REMOVAL,
    new_id,
    now_iso,
    slug,
    unit_decoder,
    unit_row,
)

KB_CHANNEL = "mrpvm_kb"  # change notices: a KB's sources changed (payload: its id); knowledge/index_watch.py


class KbTables(StoreConnection):
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
        self,
        kb_id: str,
        source: SourceRecord,
        units: list[KnowledgeUnit],
        text: str | None = None,
        holder: str | None = None,
    ) -> SourceRecord:
        """Store a source and its whole KU tree (and its raw `text`, when given), replacing every unit it
        had, in ONE transaction.

        A source of the same name under another id is replaced too. Returns the stored record
        (unitCount = len(units)). `holder`: this node's removals of the source that process held while
        its kb-plugins indexed this version (knowledge/in_flight.py) are settled by the same transaction.
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
                if holder is not None:
                    conn.execute(
                        "DELETE FROM source_removals WHERE source_id = ? AND node_id = ? AND holder = ?",
                        (stored.id, self.node_id, holder),
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
            conn.executemany(  # owed outright, whatever an ingest in flight held (holder NULL)
                OWE_REMOVAL,
                [
                    (record.id, p, node, kb_id, record.name, stamp, None)
                    for p in plugins
                    for node in sorted(nodes)
                ],
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
