"""An ingest's kb-plugins index the new version while the store commits it (issue 22: the notice no
longer waits for the commit), without an index ever vouched for that the store does not hold.

1. Before the notice, one transaction records this node's removal of the source as owed to every notified
   kb-plugin, held by this process (kernel/holder.py), and drops their acknowledgements of the version
   stored now (`Store.hold_removals`): from here their index may hold a version the store has not got.
2. The units file is encoded (the kb calls' last step before they start), then the notice (`onSourceText`
   upsert, as knowledge/notify.py sends it) and the commit
   (`Store.replace_source(..., holder=...)`, which settles the held removals in its transaction) run side
   by side; the acknowledgements wait for the commit (an acknowledgement names the stored row) and are
   recorded after it.
3. A commit that fails (or never runs: cancelled, the process ends) releases the hold; the removal is then
   owed like any other and `reoffer` (knowledge/reindex.py) pays it first — the index drops the version the
   store never got — then offers the stored version, whose acknowledgements step 1 dropped. An ingest that
   fails this way does so at once; a process killed in between leaves the hold to a holder that no longer
   runs, which every payer (the next CLI command's open, a daemon's index watch, `kb check`) ignores.
A marker whose holder still runs is not owed yet (`index_ledger.pending_removals`): another process on the
same node (a CLI command opening, a daemon's index watch) must not pay it while the notice runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from mrpvm.kernel.holder import this_process
from mrpvm.kernel.records import KbRecord, SourceRecord
from mrpvm.kernel.registry import PluginEntry
from mrpvm.protocol.document import KnowledgeUnit

from . import index_ledger as ledger
from .notify import UnitsFile, kb_listeners, notify_source
from .reindex import reoffer

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


async def store_and_notify(
    ctx: KernelContext,
    kb: KbRecord,
    record: SourceRecord,
    text: str,
    units: list[KnowledgeUnit],
    units_file: UnitsFile | None,
) -> tuple[SourceRecord, list[str], list[str]]:
    """Commit the source and tell its kb-plugins at the same time: (stored record, notified plugin ids,
    warnings). The commit's error is raised after the notice ended and its effect was taken back."""
    store, holder = ctx.store, this_process()
    plugins = [entry.id for entry in kb_listeners(ctx)]
    acks: list[tuple[str, bool]] = []

    def acknowledged(entry: PluginEntry, partial: bool) -> None:
        acks.append((entry.id, partial))

    if plugins:
        await anyio.to_thread.run_sync(store.hold_removals, kb.id, record.id, record.name, plugins, holder)
    told: tuple[list[str], list[str]] = ([], [])
    stored: SourceRecord | None = None
    failed: Exception | None = None

    async def notice() -> None:
        nonlocal told
        told = await notify_source(
            ctx, kb, record, text, units, "upsert", units_file=units_file, on_ack=acknowledged
        )

    async def commit() -> None:  # its failure must not cancel the notice: the plugins finish, then forget
        nonlocal stored, failed
        try:
            stored = await anyio.to_thread.run_sync(store.replace_source, kb.id, record, units, text, holder)
        except Exception as err:
            failed = err

    try:
        if units_file is not None:  # encoded before the commit's thread runs: see `_handoff_first`
            await _handoff_first(units_file)
        async with anyio.create_task_group() as group:
            group.start_soon(notice)
            await commit()
    except BaseException:  # cancelled, or the notice itself broke
        if stored is None:
            await _take_back(ctx, kb, record, holder)
        raise
    if failed is not None:
        await _take_back(ctx, kb, record, holder)
        raise failed
    assert stored is not None  # the commit returned
    for plugin_id, partial in acks:
        await anyio.to_thread.run_sync(ledger.record_ack, store, stored, plugin_id, partial)
    return stored, *told


async def _handoff_first(units_file: UnitsFile) -> None:
    """Encode the units file the kb-plugins are handed before the commit starts. The encode runs in a thread
    and the commit's thread holds the GIL for much of its work (its rows, claim keys, each unit's JSON): started
    together, the encode — the kb calls' last step before they can start — ended later (bench/
    handoff_beside_commit.py). The commit, which ends long before the kb calls, starts ~0.03 s later instead."""
    await units_file.get(True)


async def _take_back(ctx: KernelContext, kb: KbRecord, record: SourceRecord, holder: str) -> None:
    """The commit did not happen: release the hold, so the removal is owed like any other, and pay it
    now (then the stored version, if any, is offered again); shielded, as a cancelled ingest ends here."""
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(ctx.store.release_removals, record.id, holder)
        await reoffer(ctx, kb)
