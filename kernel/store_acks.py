"""The store's index acknowledgements (knowledge/index_ledger.py keeps the rules, this module the SQL): which
kb-plugin on which node indexed which version of a source, and removals a node's plugins still owe.

A mixin of `Store` (kernel/store.py). Every method is about this store's node (`self.node_id`) unless it
says otherwise; rows from before nodes existed carry the node ''.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from .db.base import Connection
from .store_rows import now_iso

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
        with self.transaction() as conn:
            conn.execute(
                "DELETE FROM source_removals WHERE source_id = ? AND plugin_id = ? AND node_id = ?",
                (source_id, plugin_id, self.node_id),
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

    def owed_removals(self, kb_id: str | None = None) -> list[tuple[str, str, str, str]]:
        """(kb id, source id, source name, plugin id) of removals this node's plugins still owe."""
        where, args = ("AND kb_id = ?", (kb_id,)) if kb_id is not None else ("", ())
        return [
            tuple(r)
            for r in self._conn().execute(
                f"SELECT kb_id, source_id, source_name, plugin_id FROM source_removals WHERE node_id = ? {where}"
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
