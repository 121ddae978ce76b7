"""Keeping this node's kb indexes current with a store other nodes write (README "Running on several
machines").

Each node's kb-plugins index into its own artifact folder, so a source another node ingests (or removes)
is owed to this node's plugins until they acknowledge it (knowledge/index_ledger.py). `IndexWatch.run` is the
daemon's background task that pays those debts: it offers what is owed (knowledge/reindex.py `reoffer`)
whenever another node changes a KB — PostgreSQL delivers the store's `pg_notify` on KB_CHANNEL at once —
and every POLL_S seconds as the fallback (missed notices, a lost listener connection, SQLite). A KB that
another node deleted has its artifact folder removed here too. `owed` is what `/ready` reports: a node
that owes an index is not ready.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import msgspec
from mrpvm.kernel.store import KB_CHANNEL

from . import index_ledger as ledger
from .notify import kb_listeners
from .reindex import drop_local_indexes, reoffer

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

POLL_S = 5.0
HEARTBEAT_S = 300.0  # how often a running daemon tells the store it is alive (kernel/store_nodes.py)
log = logging.getLogger("mrpvm.index_watch")


class Owed(msgspec.Struct, kw_only=True):
    """What this node's kb-plugins have not indexed (or not dropped) yet."""

    node: str
    sources: int = 0
    removals: int = 0
    partial: int = 0  # sources indexed in part (searchable; their index is completed by the next rounds)

    @property
    def nothing(self) -> bool:
        return not self.sources and not self.removals


def owed(ctx: KernelContext) -> Owed:
    """Sources and removals this node's enabled kb-plugins still owe (a blocking store read)."""
    store, required = ctx.store, [entry.id for entry in kb_listeners(ctx)]
    pending = ledger.pending_sources(store, required)
    partial = sum(1 for item in pending if set(item.missing) <= set(item.partial))
    return Owed(
        node=store.node_id,
        sources=len(pending) - partial,
        removals=len(ledger.pending_removals(store, required)),
        partial=partial,
    )


class IndexWatch:
    """The daemon's watch over the shared store: catch-up rounds, and the node's heartbeat."""

    def __init__(self, ctx: KernelContext, poll_s: float = POLL_S):
        self.ctx = ctx
        self.poll_s = poll_s
        self.rounds = 0  # catch-up rounds run (tests and /ready read it)
        self._beat_at = time.monotonic()  # the node registered when the kernel opened

    async def run(self) -> None:
        """Until cancelled: wait for a notice or the poll interval, then catch up."""
        listener = await self._listen()
        try:
            while True:
                kb_ids = await self._wait(listener)
                await self.catch_up(kb_ids)
        finally:
            if listener is not None:
                listener.close()

    async def _listen(self) -> Any:
        make = getattr(self.ctx.store._db, "listener", None)
        if make is None:
            return None
        try:
            return await anyio.to_thread.run_sync(make, KB_CHANNEL)
        except Exception as err:  # noqa: BLE001 - polling still catches up
            log.warning("no change notices (%s); polling every %.0f s", err, self.poll_s)
            return None

    async def _wait(self, listener: Any) -> list[str]:
        if listener is None:
            await anyio.sleep(self.poll_s)
            return []
        try:
            return await anyio.to_thread.run_sync(listener.wait, self.poll_s, abandon_on_cancel=True)
        except Exception as err:  # noqa: BLE001 - a lost connection: poll until the next round
            log.warning("change notices stopped (%s); polling", err)
            await anyio.sleep(self.poll_s)
            return []

    async def catch_up(self, kb_ids: Iterable[str] = ()) -> None:
        """Drop the artifacts of KBs deleted elsewhere, then offer everything this node owes."""
        store = self.ctx.store
        if time.monotonic() - self._beat_at >= min(HEARTBEAT_S, store.stale_after_s / 4):
            await self.heartbeat()
        for kb_id in sorted(set(kb_ids)):
            if await anyio.to_thread.run_sync(store.find_kb, kb_id) is None:
                folder = self.ctx.home / "artifacts" / kb_id
                await anyio.to_thread.run_sync(partial(shutil.rmtree, folder, ignore_errors=True))
        try:
            report = await reoffer(self.ctx)
        except Exception as err:  # noqa: BLE001 - the next round tries again
            log.warning("catching up the indexes failed: %s", err)
            return
        self.rounds += 1
        for line in report.offered + report.removed:
            log.info("index caught up: %s", line)

    async def heartbeat(self) -> None:
        """Tell the store this node is alive (it forgets nodes gone stale); a node that had been
        forgotten meanwhile (suspended past the window) drops its indexes, which the round rebuilds."""
        self._beat_at = time.monotonic()
        try:
            forgotten = await anyio.to_thread.run_sync(self.ctx.store.register_node)
        except Exception as err:  # noqa: BLE001 - the next beat tries again
            log.warning("the node heartbeat failed: %s", err)
            return
        if forgotten:
            await drop_local_indexes(self.ctx)
