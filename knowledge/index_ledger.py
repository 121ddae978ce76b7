"""Which kb-plugin has indexed which version of which source: ingest that cannot half-land.

The store commits a source (its row and its whole KU tree, one transaction) before the kb-plugins hear of
it (`onSourceText`). A kernel killed between the two used to leave a source the store lists but no index
holds, and a plain re-ingest then said "unchanged". Now each plugin's acknowledgement of a version (it
answered success or skipped to the upsert) is recorded here, and:
- a source counts as indexed by a plugin only when acknowledged for its current hash (a re-ingest replaces
  the source row, and its acknowledgements go with it);
- a removed source stays owed to each plugin until the plugin acknowledges the remove (recorded in the
  transaction that deletes the source);
- what is owed is offered again (knowledge/reindex.py) on the next ingest, when a kernel opens (every CLI
  command, the daemon's start) and by `check_kb`.
Sources stored before this ledger existed carry the acknowledgement `*` (every plugin): the upgrade does
not re-index every KB; `check_kb(..., full=True)` does when wanted.

Acknowledgements and owed removals are per node (kernel/node.py): an index lives in one machine's artifact
folder, so a node that has not indexed a source owes it, whatever another node did. Rows recorded before
nodes existed carry the node '' and are adopted by a node that holds the index (`adopt_legacy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec
from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import Store, now_iso

EVERY_PLUGIN = "*"


class PendingSource(msgspec.Struct, kw_only=True):
    """A stored source some required kb-plugins have not acknowledged in its current version."""

    source: SourceRecord
    missing: list[str]


class PendingRemoval(msgspec.Struct, kw_only=True):
    """A removed source some kb-plugins have not yet dropped from their index."""

    kbId: str
    sourceId: str
    sourceName: str
    plugins: list[str]


def record_ack(store: Store, source: SourceRecord, plugin_id: str) -> bool:
    """Record that `plugin_id` indexed `source` as it is now on this node; False if the source changed or
    left since."""
    with store.transaction() as conn:
        cursor = conn.execute(
            "INSERT INTO source_acks (source_id, plugin_id, node_id, hash, acked_at)"
            " SELECT id, ?, ?, hash, ? FROM sources WHERE id = ? AND hash = ? AND ingested_at = ?"
            " ON CONFLICT (source_id, plugin_id, node_id)"
            " DO UPDATE SET hash = excluded.hash, acked_at = excluded.acked_at",
            (plugin_id, store.node_id, now_iso(), source.id, source.hash, source.ingestedAt),
        )
        return cursor.rowcount > 0


def record_removal_ack(store: Store, source_id: str, plugin_id: str) -> None:
    with store.transaction() as conn:
        conn.execute(
            "DELETE FROM source_removals WHERE source_id = ? AND plugin_id = ? AND node_id = ?",
            (source_id, plugin_id, store.node_id),
        )


def acknowledgements(store: Store, kb_id: str) -> dict[str, dict[str, str]]:
    """source id -> {plugin id: acknowledged hash} for every source of the KB, on this node."""
    rows = store._conn().execute(
        "SELECT a.source_id, a.plugin_id, a.hash FROM source_acks a"
        " JOIN sources s ON s.id = a.source_id WHERE s.kb_id = ? AND a.node_id = ?",
        (kb_id, store.node_id),
    )
    out: dict[str, dict[str, str]] = {}
    for source_id, plugin_id, digest in rows:
        out.setdefault(source_id, {})[plugin_id] = digest
    return out


def missing_plugins(source: SourceRecord, acked: dict[str, str], required: Iterable[str]) -> list[str]:
    """The required plugins that have not acknowledged this version of the source."""
    if acked.get(EVERY_PLUGIN) == source.hash:
        return []
    return sorted(p for p in required if acked.get(p) != source.hash)


def pending_sources(store: Store, required: Iterable[str], kb_id: str | None = None) -> list[PendingSource]:
    """Sources (of one KB, or of all) that some plugin of `required` has not acknowledged on this node."""
    required = sorted(set(required))
    if not required:
        return []
    where, args = ("WHERE s.kb_id = ?", (kb_id,)) if kb_id is not None else ("", ())
    conn = store._conn()
    acked: dict[str, dict[str, str]] = {}
    for source_id, plugin_id, digest in conn.execute(
        "SELECT a.source_id, a.plugin_id, a.hash FROM source_acks a JOIN sources s ON s.id = a.source_id"
        f" {where} {'AND' if where else 'WHERE'} a.node_id = ?",
        (*args, store.node_id),
    ):
        acked.setdefault(source_id, {})[plugin_id] = digest
    columns = ", ".join("s." + c.strip() for c in Store._SOURCE_COLS.split(","))
    out: list[PendingSource] = []
    for row in conn.execute(f"SELECT {columns} FROM sources s {where} ORDER BY s.rowid", args):
        source = Store._source(row)
        missing = missing_plugins(source, acked.get(source.id, {}), required)
        if missing:
            out.append(PendingSource(source=source, missing=missing))
    return out


def pending_removals(store: Store, plugins: Iterable[str], kb_id: str | None = None) -> list[PendingRemoval]:
    """Removed sources that some plugin of `plugins` (the enabled ones) has not dropped on this node."""
    wanted = set(plugins)
    where, args = ("AND kb_id = ?", (kb_id,)) if kb_id is not None else ("", ())
    rows = store._conn().execute(
        f"SELECT kb_id, source_id, source_name, plugin_id FROM source_removals WHERE node_id = ? {where}"
        " ORDER BY kb_id, source_id, plugin_id",
        (store.node_id, *args),
    )
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for kb, source_id, name, plugin_id in rows:
        if plugin_id in wanted:
            grouped.setdefault((kb, source_id, name), []).append(plugin_id)
    return [
        PendingRemoval(kbId=kb, sourceId=source_id, sourceName=name, plugins=plugins_)
        for (kb, source_id, name), plugins_ in grouped.items()
    ]


def forget_acknowledgements(store: Store, kb_id: str, plugins: Iterable[str] | None = None) -> int:
    """Drop this node's acknowledgements of a KB's sources (all, or those of `plugins`, `*` included), so
    every source is offered again: a full re-index (`check_kb(..., full=True)`)."""
    with store.transaction() as conn:
        query = "DELETE FROM source_acks WHERE node_id = ? AND source_id IN (SELECT id FROM sources WHERE kb_id = ?)"
        args: tuple = (store.node_id, kb_id)
        if plugins is not None:
            names = [*plugins, EVERY_PLUGIN]
            query += f" AND plugin_id IN ({', '.join('?' for _ in names)})"
            args += tuple(names)
        return conn.execute(query, args).rowcount


def adopt_legacy(store: Store, required: Iterable[str], holds_index: Callable[[str, str], bool]) -> int:
    """Take over what was recorded before nodes existed (node ''), as far as this node can vouch for it:
    an acknowledgement (`*`: every plugin of `required`) counts for this node only where
    `holds_index(kb_id, plugin_id)` (its artifact folder for that KB and plugin is there); owed removals
    become this node's. Legacy rows stay for other nodes to adopt. Returns the acknowledgements taken."""
    required = sorted(set(required))
    conn = store._conn()
    rows = conn.execute(
        "SELECT a.source_id, a.plugin_id, a.hash, a.acked_at, s.kb_id FROM source_acks a"
        " JOIN sources s ON s.id = a.source_id WHERE a.node_id = ''"
    ).fetchall()
    adopted = [
        (source_id, plugin, store.node_id, digest, acked_at)
        for source_id, plugin_id, digest, acked_at, kb_id in rows
        for plugin in (required if plugin_id == EVERY_PLUGIN else [plugin_id])
        if holds_index(kb_id, plugin)
    ]
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO source_acks (source_id, plugin_id, node_id, hash, acked_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (source_id, plugin_id, node_id) DO NOTHING",
            adopted,
        )
        conn.execute(
            "INSERT INTO source_removals (source_id, plugin_id, node_id, kb_id, source_name, removed_at)"
            " SELECT source_id, plugin_id, ?, kb_id, source_name, removed_at FROM source_removals"
            " WHERE node_id = '' ON CONFLICT (source_id, plugin_id, node_id) DO NOTHING",
            (store.node_id,),
        )
        conn.execute("DELETE FROM source_removals WHERE node_id = ''")
    return len(adopted)
