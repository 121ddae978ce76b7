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
"""

from __future__ import annotations

from collections.abc import Iterable

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
    """Record that `plugin_id` indexed `source` as it is now; False if the source changed or left since."""
    with store.transaction() as conn:
        cursor = conn.execute(
            "INSERT OR REPLACE INTO source_acks (source_id, plugin_id, hash, acked_at)"
            " SELECT id, ?, hash, ? FROM sources WHERE id = ? AND hash = ? AND ingested_at = ?",
            (plugin_id, now_iso(), source.id, source.hash, source.ingestedAt),
        )
        return cursor.rowcount > 0


def record_removal_ack(store: Store, source_id: str, plugin_id: str) -> None:
    with store.transaction() as conn:
        conn.execute(
            "DELETE FROM source_removals WHERE source_id = ? AND plugin_id = ?", (source_id, plugin_id)
        )


def acknowledgements(store: Store, kb_id: str) -> dict[str, dict[str, str]]:
    """source id -> {plugin id: acknowledged hash} for every source of the KB."""
    rows = store._conn().execute(
        "SELECT a.source_id, a.plugin_id, a.hash FROM source_acks a"
        " JOIN sources s ON s.id = a.source_id WHERE s.kb_id = ?",
        (kb_id,),
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
    """Sources (of one KB, or of all) that some plugin of `required` has not acknowledged."""
    required = sorted(set(required))
    if not required:
        return []
    where, args = ("WHERE s.kb_id = ?", (kb_id,)) if kb_id is not None else ("", ())
    rows = store._conn().execute(
        f"SELECT {', '.join('s.' + c.strip() for c in Store._SOURCE_COLS.split(','))},"
        " group_concat(a.plugin_id, char(31))"
        " FROM sources s LEFT JOIN source_acks a ON a.source_id = s.id AND a.hash = s.hash"
        f" {where} GROUP BY s.id ORDER BY s.rowid",
        args,
    )
    out: list[PendingSource] = []
    for row in rows:
        source = Store._source(row[:8])
        acked = {p: source.hash for p in (row[8] or "").split("\x1f") if p}
        missing = missing_plugins(source, acked, required)
        if missing:
            out.append(PendingSource(source=source, missing=missing))
    return out


def pending_removals(store: Store, plugins: Iterable[str], kb_id: str | None = None) -> list[PendingRemoval]:
    """Removed sources that some plugin of `plugins` (the enabled ones) has not acknowledged."""
    wanted = set(plugins)
    where, args = ("WHERE kb_id = ?", (kb_id,)) if kb_id is not None else ("", ())
    rows = store._conn().execute(
        f"SELECT kb_id, source_id, source_name, plugin_id FROM source_removals {where}"
        " ORDER BY kb_id, source_id, plugin_id",
        args,
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
    """Drop the acknowledgements of a KB's sources (all, or those of `plugins`, `*` included), so every
    source is offered again: a full re-index (`check_kb(..., full=True)`)."""
    with store.transaction() as conn:
        query = "DELETE FROM source_acks WHERE source_id IN (SELECT id FROM sources WHERE kb_id = ?)"
        args: tuple = (kb_id,)
        if plugins is not None:
            names = [*plugins, EVERY_PLUGIN]
            query += f" AND plugin_id IN ({', '.join('?' for _ in names)})"
            args += tuple(names)
        return conn.execute(query, args).rowcount
