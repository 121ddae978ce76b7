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
  command, the daemon's start) and by `check_kb`; removals first.
- an ingest tells its kb-plugins while the store commits (knowledge/in_flight.py): until the commit, the
  removal of the new version is recorded as owed, held by the ingesting process (kernel/holder.py), and
  the stored version's acknowledgements are dropped; a held removal is not owed while its holder runs.
- a plugin that indexed a source only in part (it answered `partial`: searchable, but some of its index of
  the source is still to be built, e.g. kb-balanced's dense vectors of a large source) is recorded with the
  hash marked PARTIAL: the source stays owed to it, so the same paths offer it again until it answers
  `success`; `kb check` shows it as partial, and the daemon's `/ready` does not wait for it.
Sources stored before this ledger existed carry the acknowledgement `*` (every plugin): the upgrade does
not re-index every KB; `check_kb(..., full=True)` does when wanted.

Acknowledgements and owed removals are per node (kernel/node.py): an index lives in one machine's artifact
folder, so a node that has not indexed a source owes it, whatever another node did. Rows recorded before
nodes existed carry the node '' and are adopted by a node that holds the index (`adopt_legacy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec
from mrpvm.kernel.holder import alive
from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import Store

EVERY_PLUGIN = "*"
PARTIAL = "partial:"  # prefix of the recorded hash of a partial index


class PendingSource(msgspec.Struct, kw_only=True):
    """A stored source some required kb-plugins have not acknowledged in its current version."""

    source: SourceRecord
    missing: list[str]
    partial: list[str] = []  # of `missing`: the plugins whose index of this version is partial


class PendingRemoval(msgspec.Struct, kw_only=True):
    """A removed source some kb-plugins have not yet dropped from their index."""

    kbId: str
    sourceId: str
    sourceName: str
    plugins: list[str]


def record_ack(store: Store, source: SourceRecord, plugin_id: str, partial: bool = False) -> bool:
    """Record that `plugin_id` indexed `source` as it is now on this node (`partial`: in part, so it stays
    owed); False if the source changed or left since."""
    return store.record_ack(source.id, source.hash, source.ingestedAt, plugin_id, PARTIAL if partial else "")


def record_removal_ack(store: Store, source_id: str, plugin_id: str) -> None:
    """`plugin_id` dropped the source on this node: the removal is paid (and a version still stored owed)."""
    store.record_removal_ack(source_id, plugin_id)


def acknowledgements(store: Store, kb_id: str) -> dict[str, dict[str, str]]:
    """source id -> {plugin id: acknowledged hash} for every source of the KB, on this node."""
    return store.acknowledgements(kb_id)


def missing_plugins(source: SourceRecord, acked: dict[str, str], required: Iterable[str]) -> list[str]:
    """The required plugins that have not acknowledged this version of the source."""
    if acked.get(EVERY_PLUGIN) == source.hash:
        return []
    return sorted(p for p in required if acked.get(p) != source.hash)


def partial_plugins(source: SourceRecord, acked: dict[str, str]) -> list[str]:
    """The plugins whose index holds this version of the source in part."""
    return sorted(p for p, digest in acked.items() if digest == PARTIAL + source.hash)


def pending_sources(store: Store, required: Iterable[str], kb_id: str | None = None) -> list[PendingSource]:
    """Sources (of one KB, or of all) that some plugin of `required` has not acknowledged on this node."""
    required = sorted(set(required))
    if not required:
        return []
    acked = store.acknowledgements(kb_id)
    sources = store.list_sources(kb_id) if kb_id is not None else store.all_sources()
    out: list[PendingSource] = []
    for source in sources:
        mine = acked.get(source.id, {})
        missing = missing_plugins(source, mine, required)
        if missing:
            partial = [p for p in partial_plugins(source, mine) if p in missing]
            out.append(PendingSource(source=source, missing=missing, partial=partial))
    return out


def pending_removals(store: Store, plugins: Iterable[str], kb_id: str | None = None) -> list[PendingRemoval]:
    """Removed sources that some plugin of `plugins` (the enabled ones) has not dropped on this node."""
    wanted = set(plugins)
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for kb, source_id, name, plugin_id, holder in store.owed_removals(kb_id):
        if plugin_id in wanted and not alive(holder):  # a running ingest's own marker is not owed yet
            grouped.setdefault((kb, source_id, name), []).append(plugin_id)
    return [
        PendingRemoval(kbId=kb, sourceId=source_id, sourceName=name, plugins=plugins_)
        for (kb, source_id, name), plugins_ in grouped.items()
    ]


def forget_acknowledgements(store: Store, kb_id: str, plugins: Iterable[str] | None = None) -> int:
    """Drop this node's acknowledgements of a KB's sources (all, or those of `plugins`, `*` included), so
    every source is offered again: a full re-index (`check_kb(..., full=True)`)."""
    return store.forget_acknowledgements(kb_id, None if plugins is None else [*plugins, EVERY_PLUGIN])


def adopt_legacy(store: Store, required: Iterable[str], holds_index: Callable[[str, str], bool]) -> int:
    """Take over what was recorded before nodes existed (node ''), as far as this node can vouch for it:
    an acknowledgement (`*`: every plugin of `required`) counts for this node only where
    `holds_index(kb_id, plugin_id)` (its artifact folder for that KB and plugin is there); owed removals
    become this node's. Legacy rows stay for other nodes to adopt. Returns the acknowledgements taken."""
    required = sorted(set(required))
    adopted = [
        (source_id, plugin, digest, acked_at)
        for source_id, plugin_id, digest, acked_at, kb_id in store.legacy_acks()
        for plugin in (required if plugin_id == EVERY_PLUGIN else [plugin_id])
        if holds_index(kb_id, plugin)
    ]
    store.adopt_legacy(adopted)
    return len(adopted)
