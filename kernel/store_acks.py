"""The store's index acknowledgements (knowledge/index_ledger.py keeps the rules, this module the SQL): which
kb-plugin on which node indexed which version of a source, and removals a node's plugins still owe.

A mixin of `Store` (kernel/store.py). Every method is about this store's node (`self.node_id`) unless it
says otherwise; rows from before nodes existed carry the node ''.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from .db.base import Connection
from .store_rows import OWE_REMOVAL, now_iso

LEGACY_NODE = ""


class IndexAcks:
    if TYPE_CHECKING:
        node_id: str

        def _conn(self) -> Connection: ...

        def transaction(self) -> AbstractContextManager[Connection]: ...

    def record_ack(
        self, source_id: str, digest: str, ingested_at: str, plugin_id: str, prefix: str = ""
    ) -> bool:
        """This node's `plugin_id` indexed the source in this version; False if it changed or left since.
        `prefix` marks the recorded hash (knowledge/index_ledger.py: a partial index)."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO source_acks (source_id, plugin_id, node_id, hash, acked_at)"
                " SELECT id, ?, ?, ? || hash, ? FROM sources WHERE id = ? AND hash = ? AND ingested_at = ?"
                " ON CONFLICT (source_id, plugin_id, node_id)"
                " DO UPDATE SET hash = excluded.hash, acked_at = excluded.acked_at",
                (plugin_id, self.node_id, prefix, now_iso(), source_id, digest, ingested_at),
            )
            return cursor.rowcount > 0

    def record_removal_ack(self, source_id: str, plugin_id: str) -> None:
        """This node's `plugin_id` dropped the source from its index: the removal is paid, and a version
        the store still holds (an ingest in flight that died, knowledge/in_flight.py) is owed again."""
        with self.transaction() as conn:
            for table in ("source_removals", "source_acks"):
                conn.execute(
                    f"DELETE FROM {table} WHERE source_id = ? AND plugin_id = ? AND node_id = ?",
                    (source_id, plugin_id, self.node_id),
                )

    def hold_removals(
        self, kb_id: str, source_id: str, source_name: str, plugins: list[str], holder: str
    ) -> None:
        """Before this node's `plugins` index a version the store has not committed: record their removal
        of the source as owed, held by `holder` (kernel/holder.py), and drop their acknowledgements of the
        version stored now (their index will no longer hold it as it is); one transaction. The commit of
        the new version settles the held removals (`replace_source(..., holder=...)`)."""
        stamp = now_iso()
        with self.transaction() as conn:
            conn.executemany(
                OWE_REMOVAL,
                [(source_id, p, self.node_id, kb_id, source_name, stamp, holder) for p in plugins],
            )
            conn.executemany(
                "DELETE FROM source_acks WHERE source_id = ? AND plugin_id = ? AND node_id = ?",
                [(source_id, p, self.node_id) for p in plugins],
            )

    def release_removals(self, source_id: str, holder: str) -> None:
        """The held removals of a source whose new version was not committed become owed like any other."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE source_removals SET holder = NULL WHERE source_id = ? AND node_id = ? AND holder = ?",
                (source_id, self.node_id, holder),
            )

    def acknowledgements(self, kb_id: str | None = None) -> dict[str, dict[str, str]]:
        """source id -> {plugin id: acknowledged hash} on this node, for the KB's sources (or all)."""
        where, args = (" AND s.kb_id = ?", (kb_id,)) if kb_id is not None else ("", ())
        rows = self._conn().execute(
            "SELECT a.source_id, a.plugin_id, a.hash FROM source_acks a JOIN sources s ON s.id = a.source_id"
            f" WHERE a.node_id = ?{where}",
            (self.node_id, *args),
        )
        out: dict[str, dict[str, str]] = {}
        for source_id, plugin_id, digest in rows:
            out.setdefault(source_id, {})[plugin_id] = digest
        return out

    def owed_removals(self, kb_id: str | None = None) -> list[tuple[str, str, str, str, str | None]]:
        """(kb id, source id, source name, plugin id, holder or None) of removals this node's plugins still
        owe (`holder`: the process whose ingest holds it, kernel/holder.py)."""
        where, args = ("AND kb_id = ?", (kb_id,)) if kb_id is not None else ("", ())
        return [
            tuple(r)
            for r in self._conn().execute(
                "SELECT kb_id, source_id, source_name, plugin_id, holder FROM source_removals"
                f" WHERE node_id = ? {where}"
                " ORDER BY kb_id, source_id, plugin_id",
                (self.node_id, *args),
            )
        ]

    def forget_acknowledgements(self, kb_id: str, plugins: list[str] | None = None) -> int:
        """Drop this node's acknowledgements of a KB's sources (all, or those of `plugins`)."""
        with self.transaction() as conn:
            query = (
                "DELETE FROM source_acks WHERE node_id = ?"
                " AND source_id IN (SELECT id FROM sources WHERE kb_id = ?)"
            )
            args: tuple = (self.node_id, kb_id)
            if plugins is not None:
                query += f" AND plugin_id IN ({', '.join('?' for _ in plugins)})"
                args += tuple(plugins)
            return conn.execute(query, args).rowcount

    def legacy_acks(self) -> list[tuple[str, str, str, str, str]]:
        """(source id, plugin id or '*', hash, acked at, kb id) recorded before nodes existed."""
        return [
            tuple(r)
            for r in self._conn().execute(
                "SELECT a.source_id, a.plugin_id, a.hash, a.acked_at, s.kb_id FROM source_acks a"
                " JOIN sources s ON s.id = a.source_id WHERE a.node_id = ?",
                (LEGACY_NODE,),
            )
        ]

    def adopt_legacy(self, acks: list[tuple[str, str, str, str]]) -> None:
        """Record `acks` (source id, plugin id, hash, acked at) as this node's, and make the removals owed
        before nodes existed this node's; one transaction."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO source_acks (source_id, plugin_id, node_id, hash, acked_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (source_id, plugin_id, node_id) DO NOTHING",
                [(s, p, self.node_id, h, at) for s, p, h, at in acks],
            )
            conn.execute(
                "INSERT INTO source_removals (source_id, plugin_id, node_id, kb_id, source_name, removed_at)"
                " SELECT source_id, plugin_id, ?, kb_id, source_name, removed_at FROM source_removals"
                " WHERE node_id = ? ON CONFLICT (source_id, plugin_id, node_id) DO NOTHING",
                (self.node_id, LEGACY_NODE),
            )
            conn.execute("DELETE FROM source_removals WHERE node_id = ?", (LEGACY_NODE,))

    def unit_counts(self, kb_id: str) -> dict[str, int]:
        """source id -> how many units the store holds for it (kb check compares with the source rows)."""
        rows = self._conn().execute(
            "SELECT source_id, COUNT(*) FROM units WHERE kb_id = ? GROUP BY source_id", (kb_id,)
        )
        return {r[0]: int(r[1]) for r in rows}
