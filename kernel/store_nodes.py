"""The nodes sharing one store (kernel/node.py): who they are, when each was last seen, and forgetting
the ones that are gone.

A node registers when a kernel opens and, while its daemon runs, again every few minutes (the
heartbeat, knowledge/index_watch.py). A node not seen for `stale_after_s` (MRPVM_NODE_STALE_HOURS,
default a week) counts as gone: removals are no longer recorded for it, and the next registration of any
node forgets it for good — its acknowledgements and owed removals are deleted, so nothing is owed to a
machine that no longer exists. A forgotten node that comes back is told so by `register_node`: its
local indexes may hold sources removed meanwhile, so it rebuilds them from the store
(knowledge/reindex.py `start_node`).

Times are the nodes' own UTC clocks (ISO strings compare in time order); a skew of minutes is far below
the staleness window. A mixin of `Store` (kernel/store.py).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec

from .db.base import Connection
from .node import DEFAULT_STALE_HOURS
from .store_rows import now_iso


class NodeRecord(msgspec.Struct, kw_only=True):
    """One node as `mrpvm store nodes` lists it."""

    id: str
    startedAt: str
    seenAt: str
    forgottenAt: str | None = None
    stale: bool = False  # not seen within the staleness window (forgotten, or about to be)
    current: bool = False  # the node this store was opened as


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class NodeRegistry:
    stale_after_s: float = DEFAULT_STALE_HOURS * 3600.0  # Store.open reads MRPVM_NODE_STALE_HOURS

    if TYPE_CHECKING:
        node_id: str

        def _conn(self) -> Connection: ...

        def transaction(self) -> AbstractContextManager[Connection]: ...

    def stale_before(self) -> str:
        """The `seen_at` below which a node counts as gone."""
        return _iso(datetime.now(UTC) - timedelta(seconds=self.stale_after_s))

    def register_node(self) -> bool:
        """Record that this node uses the store (now), and forget the nodes gone stale. True when this node
        had been forgotten itself (or gone stale): what it indexed locally must be rebuilt."""
        stamp, cutoff = now_iso(), self.stale_before()
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT seen_at, forgotten_at FROM nodes WHERE id = ?", (self.node_id,)
            ).fetchone()
            returning = row is not None and (row[1] is not None or row[0] < cutoff)
            conn.execute(
                "INSERT INTO nodes (id, started_at, seen_at) VALUES (?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, forgotten_at = NULL",
                (self.node_id, stamp, stamp),
            )
            if returning:  # whatever it still has recorded predates what it missed
                self._drop_node_rows(conn, [self.node_id])
            self._forget_stale(conn, cutoff, stamp)
        return returning

    def _forget_stale(self, conn: Connection, cutoff: str, stamp: str) -> list[str]:
        gone = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM nodes WHERE forgotten_at IS NULL AND seen_at < ? AND id <> ? ORDER BY id",
                (cutoff, self.node_id),
            )
        ]
        if gone:
            marks = ", ".join("?" for _ in gone)
            conn.execute(f"UPDATE nodes SET forgotten_at = ? WHERE id IN ({marks})", (stamp, *gone))
            self._drop_node_rows(conn, gone)
        return gone

    @staticmethod
    def _drop_node_rows(conn: Connection, nodes: list[str]) -> None:
        marks = ", ".join("?" for _ in nodes)
        conn.execute(f"DELETE FROM source_acks WHERE node_id IN ({marks})", tuple(nodes))
        conn.execute(f"DELETE FROM source_removals WHERE node_id IN ({marks})", tuple(nodes))

    def _live_nodes(self, conn: Connection) -> set[str]:
        """The nodes a change is owed to: seen within the window, and always this one."""
        rows = conn.execute(
            "SELECT id FROM nodes WHERE forgotten_at IS NULL AND seen_at >= ?", (self.stale_before(),)
        )
        return {r[0] for r in rows} | {self.node_id}

    def nodes(self) -> list[str]:
        """The ids of the registered nodes not gone stale, sorted."""
        rows = self._conn().execute(
            "SELECT id FROM nodes WHERE forgotten_at IS NULL AND seen_at >= ? ORDER BY id",
            (self.stale_before(),),
        )
        return [r[0] for r in rows]

    def node_records(self) -> list[NodeRecord]:
        """Every node the store knows, with when it was last seen, most recently seen first."""
        cutoff = self.stale_before()
        rows = self._conn().execute(
            "SELECT id, started_at, seen_at, forgotten_at FROM nodes ORDER BY seen_at DESC, id"
        )
        return [
            NodeRecord(
                id=r[0],
                startedAt=r[1],
                seenAt=r[2],
                forgottenAt=r[3],
                stale=r[3] is not None or r[2] < cutoff,
                current=r[0] == self.node_id,
            )
            for r in rows
        ]
