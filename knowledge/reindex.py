"""Offering kb-plugins what their index owes, and `check_kb`: the repair side of knowledge/index_ledger.py.

- `reoffer_source`: one source to the plugins that have not acknowledged its current version (the
  ingest of unchanged text calls it with the text; otherwise the text is not stored, so plugins get the
  stored KU tree with an empty `text`, as they already do when the raw text does not fit a request).
- `reoffer`: every owed source and removal of one KB, or of all KBs (`knowledge.context.open_context` runs it, so
  every CLI command and the daemon's start repair what a killed kernel left owed). A source a plugin indexed
  in part (`partial`: searchable) is offered again by the daemon's index watch, any ingest into its KB and
  `check_kb` (once; `complete`: until whole), not at a kernel's start: `mrpvm ask` does not wait for a dense view's next share.
- `check_kb`: the report behind `mrpvm kb check NAME` (per source: units stored, acknowledged and missing
  plugins; removals owed; indexes in a format their plugin no longer writes) and, with `repair`, the repair
  (`full`: re-index every source).
- `rebuild_formats`: the indexes whose format changed (knowledge/index_format.py) dropped and owed again;
  a kernel's start and `check_kb`'s repair run it before they offer what is owed.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

import anyio.to_thread
import msgspec
from mrpvm.kernel.records import KbRecord, SourceRecord

from . import index_format
from . import index_ledger as ledger
from .notify import PARTIAL_NOTE, kb_listeners, notify_source

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

log = logging.getLogger("mrpvm.reindex")
PARTIAL_ROUNDS = (
    100  # `kb check`: offers of a partially indexed source at most (kb-balanced: ~1,000 units each)
)


class ReofferReport(msgspec.Struct, kw_only=True):
    """What was offered again: `offered` lists "<kb>/<source> -> plugin, ..." lines."""

    offered: list[str] = []
    removed: list[str] = []
    rebuilt: list[str] = []  # "<kb> -> <plugin>: ..." indexes dropped to be rebuilt (index_format.StaleIndex)
    warnings: list[str] = []


class SourceIndexState(msgspec.Struct, kw_only=True):
    """One source as `kb check` sees it."""

    sourceId: str
    name: str
    hash: str
    unitCount: int  # what the source row says
    storedUnits: int  # what the units table holds for it
    acknowledged: list[str]  # plugins whose index holds this version ("*": before the ledger existed)
    missing: list[str]  # required plugins that have not acknowledged it
    partial: list[str] = []  # of `missing`: those whose index holds it in part (offered again until whole)


class KbCheckReport(msgspec.Struct, kw_only=True):
    """`mrpvm kb check NAME`: the state before repair, what the repair did, and whether all is well now,
    on this node (`node`: each node holds its own indexes)."""

    kb: KbRecord
    node: str = ""
    plugins: list[str]  # the kb-plugins every source must reach (enabled, implementing onSourceText)
    sources: list[SourceIndexState]
    pendingRemovals: list[ledger.PendingRemoval]
    problems: list[str]  # store inconsistencies (a source whose unit count does not match its units)
    staleIndexes: list[str] = []  # before the repair: indexes to rebuild (a changed format, a folder gone)
    repaired: ReofferReport | None = None
    ok: bool = False  # after the repair (if any): nothing owed, no problem
    partial: list[str] = []  # when the check ends: "<source> (<plugins>)" indexed in part (searchable)


def _label(kb: KbRecord, source: SourceRecord | str) -> str:
    name = source.name if isinstance(source, SourceRecord) else source
    return f"{kb.name}/{name}"


async def reoffer_source(
    ctx: KernelContext, kb: KbRecord, source: SourceRecord, text: str = ""
) -> tuple[list[str], list[str]]:
    """Offer one stored source to the plugins that have not acknowledged it: (notified, warnings)."""
    required = [entry.id for entry in kb_listeners(ctx)]
    acked = await anyio.to_thread.run_sync(ledger.acknowledgements, ctx.store, kb.id)
    missing = ledger.missing_plugins(source, acked.get(source.id, {}), required)
    if not missing:
        return [], []
    units = await anyio.to_thread.run_sync(ctx.store.kb_units, kb.id, source.id)
    return await notify_source(ctx, kb, source, text, units, "upsert", only=missing)


async def drop_local_indexes(ctx: KernelContext) -> None:
    """This node was forgotten (kernel/store_nodes.py): its kb-plugins' indexes may hold sources removed
    while it was away, so they go, and `reoffer` rebuilds them from the store (nothing is acknowledged
    for this node any more)."""
    plugins = [entry.id for entry in kb_listeners(ctx)]
    kb_ids = [kb.id for kb in await anyio.to_thread.run_sync(ctx.store.list_kbs)]
    for kb_id in kb_ids:
        for plugin_id in plugins:
            folder = ctx.artifacts_dir(kb_id, plugin_id)
            await anyio.to_thread.run_sync(partial(shutil.rmtree, folder, ignore_errors=True))
    log.warning("node %s had been forgotten: its kb indexes are rebuilt from the store", ctx.store.node_id)


async def start_node(ctx: KernelContext, *, repair: bool = True) -> ReofferReport:
    """A kernel opening: register this node, adopt what it held before nodes existed, and (`repair`)
    rebuild every index it owes from the shared store."""
    store = ctx.store
    if await anyio.to_thread.run_sync(store.register_node):
        await drop_local_indexes(ctx)
    required = [entry.id for entry in kb_listeners(ctx)]
    await anyio.to_thread.run_sync(
        ledger.adopt_legacy, store, required, partial(index_format.holds_index, ctx)
    )
    if not repair:
        return ReofferReport()
    rebuilt = await rebuild_formats(ctx)
    report = await reoffer(ctx, partial=False)
    report.rebuilt = rebuilt
    return report


async def _stale(
    ctx: KernelContext, kb: KbRecord | None, adopt: bool = True
) -> list[index_format.StaleIndex]:
    kb_ids = [kb.id] if kb is not None else [k.id for k in await anyio.to_thread.run_sync(ctx.store.list_kbs)]
    return await anyio.to_thread.run_sync(index_format.stale, ctx, kb_listeners(ctx), kb_ids, adopt)


async def rebuild_formats(ctx: KernelContext, kb: KbRecord | None = None) -> list[str]:
    """Drop the indexes (of `kb`, or of every KB) whose format changed or whose folder went, and make
    their plugins owe every source (the re-offer that follows rebuilds them): what was dropped."""
    lines: list[str] = []
    for index in await _stale(ctx, kb):
        name = kb.name if kb is not None else ctx.store.get_kb(index.kbId).name
        await anyio.to_thread.run_sync(index_format.rebuild, ctx, index)
        lines.append(index.describe(name))
        log.warning("index rebuilt from the store: %s", lines[-1])
    return lines


async def reoffer(
    ctx: KernelContext, kb: KbRecord | None = None, *, skip: Iterable[str] = (), partial: bool = True
) -> ReofferReport:
    """Offer every owed source and removal (of `kb`, or of every KB) again; a no-op when nothing is owed.
    `partial=False`: not the sources only owed to plugins that indexed them in part."""
    report = ReofferReport()
    required = [entry.id for entry in kb_listeners(ctx)]
    if not required:
        return report
    store, skipped = ctx.store, set(skip)
    kb_id = kb.id if kb is not None else None
    kbs: dict[str, KbRecord] = {kb.id: kb} if kb is not None else {}
    # removals first: a removal owed for a source the store still holds (an ingest in flight that died,
    # knowledge/in_flight.py) drops a version the store never committed, and paying it makes the stored
    # version owed, offered below
    removals = await anyio.to_thread.run_sync(ledger.pending_removals, store, required, kb_id)
    for removal in removals:
        owner = kbs.get(removal.kbId) or kbs.setdefault(removal.kbId, store.get_kb(removal.kbId))
        gone = SourceRecord(id=removal.sourceId, kbId=removal.kbId, name=removal.sourceName)
        notified, warnings = await notify_source(ctx, owner, gone, "", [], "remove", only=removal.plugins)
        report.removed.append(f"{_label(owner, gone)} -> {', '.join(notified) or 'none acknowledged'}")
        report.warnings.extend(warnings)
    pending = await anyio.to_thread.run_sync(ledger.pending_sources, store, required, kb_id)
    for item in pending:
        source = item.source
        if source.id in skipped or (not partial and set(item.missing) <= set(item.partial)):
            continue
        owner = kbs.get(source.kbId) or kbs.setdefault(source.kbId, store.get_kb(source.kbId))
        units = await anyio.to_thread.run_sync(store.kb_units, source.kbId, source.id)
        notified, warnings = await notify_source(ctx, owner, source, "", units, "upsert", only=item.missing)
        report.offered.append(f"{_label(owner, source)} -> {', '.join(notified) or 'none acknowledged'}")
        report.warnings.extend(warnings)
    return report


def _state(ctx: KernelContext, kb: KbRecord, required: list[str]) -> tuple[list[SourceIndexState], list[str]]:
    store = ctx.store
    acked = ledger.acknowledgements(store, kb.id)
    counts = store.unit_counts(kb.id)
    states: list[SourceIndexState] = []
    problems: list[str] = []
    for source in store.list_sources(kb.id):
        mine = acked.get(source.id, {})
        stored = int(counts.get(source.id, 0))
        states.append(
            SourceIndexState(
                sourceId=source.id,
                name=source.name,
                hash=source.hash,
                unitCount=source.unitCount,
                storedUnits=stored,
                acknowledged=sorted(p for p, digest in mine.items() if digest == source.hash),
                missing=ledger.missing_plugins(source, mine, required),
                partial=ledger.partial_plugins(source, mine),
            )
        )
        if stored != source.unitCount:
            problems.append(
                f"source '{source.name}' records {source.unitCount} units but the store holds {stored}"
            )
    return states, problems


def _owed(state: SourceIndexState) -> bool:
    """Does some plugin's index lack this source (not only hold it in part)?"""
    return bool(set(state.missing) - set(state.partial))


async def _complete_partial(ctx: KernelContext, kb: KbRecord, report: ReofferReport) -> None:
    """Offer the KB's partially indexed sources again until their plugins answer `success` (each offer
    makes progress, protocol/SPEC.md `partial`; at most PARTIAL_ROUNDS rounds), adding to `report` its
    warnings: of the "indexed in part" ones, only the last round's (the state the check ends with)."""
    required = [entry.id for entry in kb_listeners(ctx)]
    for _ in range(PARTIAL_ROUNDS):
        pending = await anyio.to_thread.run_sync(ledger.pending_sources, ctx.store, required, kb.id)
        if not any(item.partial for item in pending):
            return
        more = await reoffer(ctx, kb)
        kept = {w for w in report.warnings if PARTIAL_NOTE not in w}
        report.warnings = sorted(kept | set(more.warnings))
        if not more.offered:
            return


async def check_kb(
    ctx: KernelContext, name_or_id: str, *, repair: bool = True, full: bool = False, complete: bool = False
) -> KbCheckReport:
    """Report a KB's index state; with `repair`, offer what is owed (with `full`, every source to every
    plugin: a complete re-index; with `complete`, a source indexed in part until it is whole) and report
    the state after. A source only indexed in part (searchable) does not make the KB not ok. A repair registers the node first: one that
    had been forgotten (kernel/store_nodes.py) owes, and rebuilds, every index."""
    if repair and await anyio.to_thread.run_sync(ctx.store.register_node):
        await drop_local_indexes(ctx)
    kb = ctx.store.get_kb(name_or_id)
    required = [entry.id for entry in kb_listeners(ctx)]
    states, problems = await anyio.to_thread.run_sync(_state, ctx, kb, required)
    removals = await anyio.to_thread.run_sync(ledger.pending_removals, ctx.store, required, kb.id)
    stale = [index.describe(kb.name) for index in await _stale(ctx, kb, adopt=repair)]
    report = KbCheckReport(
        kb=kb,
        node=ctx.store.node_id,
        plugins=required,
        sources=states,
        pendingRemovals=removals,
        problems=problems,
        staleIndexes=stale,
    )
    if repair:
        rebuilt = await rebuild_formats(ctx, kb)
        if full:
            await anyio.to_thread.run_sync(ledger.forget_acknowledgements, ctx.store, kb.id)
        report.repaired = await reoffer(ctx, kb)
        report.repaired.rebuilt = rebuilt
        if complete:
            await _complete_partial(ctx, kb, report.repaired)
        after, problems = await anyio.to_thread.run_sync(_state, ctx, kb, required)
        left = await anyio.to_thread.run_sync(ledger.pending_removals, ctx.store, required, kb.id)
        report.ok = not problems and not left and not any(_owed(s) for s in after)
    else:
        report.ok = not problems and not removals and not stale and not any(_owed(s) for s in states)
        after = states
    report.partial = [f"{s.name} ({', '.join(s.partial)})" for s in after if s.partial]
    return report
