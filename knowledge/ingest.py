"""Ingest (DS018, DS026): a source becomes a KU tree in a KB; session context loads take the same path.

Steps 1-2 (the sd stage) live in knowledge/normalize.py.
1. The text is chunked to fit the sd-plugin's `maxInputSizeBytes` (knowledge/chunking.py: the chunks tile
   the text, nothing is dropped or capped); each chunk carries `chunkIndex` and `charOffset`. With an
   LLM sd-plugin and an LLM upstream, a chunk is also at most `MRPVM_LLM_CONTEXT_CHARS` (6000) characters,
   so it is ONE model part: each chunk call gets its own LLM token allowing the plugin's `maxLLMCalls`
   (one call + one corrective retry), the ingest's budget is maxLLMCalls × chunks, and every chunk has
   the plugin's full `timeoutMs` (a 4 MiB chunk would need hundreds of calls within one deadline).
2. `normalizePersistentContext` runs per chunk through the supervisor (bounded by the plugin's
   `concurrency`); any failure fails the whole ingest and nothing is stored.
3. The chunk trees are merged into one tree (knowledge/ku_tree.py) and stored with `Store.replace_source`
   in ONE transaction: a changed source replaces its units atomically; the same text (hash) is a no-op.
4. Every enabled kb-plugin gets `onSourceText` (action upsert, the whole tree, the raw text) with its
   private artifacts folder, while the store commits (knowledge/in_flight.py: a removal held by this
   process covers the index until the commit; the acknowledgements are recorded after it). A plugin that
   fails is reported as a warning; the source stays committed, owed to that plugin in the index ledger
   (knowledge/index_ledger.py), and is offered again on the next ingest, when a kernel opens, and by
   `check_kb` (knowledge/reindex.py). The same text again is "unchanged" only for the store: plugins that
   have not acknowledged it hear of it again.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
import msgspec
from mrpvm.kernel.errors import DISK_FULL_REMEDY, DiskFull, IngestError
from mrpvm.kernel.records import KbRecord, SourceRecord
from mrpvm.kernel.registry import PluginEntry
from mrpvm.kernel.store_rows import slug, text_hash
from mrpvm.kernel.supervisor.errors import PluginCallError
from mrpvm.protocol.cnl_compact import ShippedAnalysis
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import (
    NormalizePayload,
    OnSessionEventPayload,
    Paths,
    Request,
)

from . import kept_units
from .in_flight import store_and_notify
from .normalize import Progress, normalize_text
from .notify import (
    UnitsFile,
    _notify,
    hold_session_notices,
    kb_listeners,
    notify_source,
    wants_units_file,
)
from .reindex import reoffer, reoffer_source

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


# A source this large (UTF-8 bytes) keeps the kernel busy after its sd stage (parse, commit and analysis of
# its tree: ~0.5 s per MB on a 2-core machine) for longer than a kb worker takes to start (~0.2 s).
LATE_KB_START_BYTES = 256 * 1024


class IngestResult(SourceRecord, kw_only=True):
    """The stored source record plus what happened: a SourceRecord, so it can be used as one."""

    unchanged: bool = False
    chunks: int = 0
    warnings: list[str] = []
    notified: list[str] = []


class LoadedUnits(list):  # noqa: FURB189 - a list with the load's warnings attached
    """The units a session context load added (a list), with `.warnings` and `.source_id`."""

    def __init__(self, units: list[KnowledgeUnit], warnings: list[str], source_id: str):
        super().__init__(units)
        self.warnings = warnings
        self.source_id = source_id


# --------------------------------------------------------------------------- entry points


async def ingest_source(
    ctx: KernelContext,
    kb: KbRecord,
    name: str,
    text: str,
    *,
    sd_plugin: str = "sd-symbolic",
    source_type: str = "text",
    author: str | None = None,
    knowledge_date: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    on_units: Callable[[int], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> IngestResult:
    """Ingest one source into a KB. Same name and same text: a no-op (`unchanged`), unless `force`.

    `progress(bytes_done, bytes_total)` follows the chunks; `on_units(n)` the units produced so far;
    `on_phase(text)` names the step after them that has no byte count: the kb-plugins indexing the units
    (kb-balanced embeds every unit there, the longest step of a large ingest).
    """
    store = ctx.store
    limit = ctx.config.engine.limits.maxSourceBytes
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise IngestError(
            f"source '{name}' is {size} bytes, over engine.limits.maxSourceBytes ({limit}); split it, or "
            "raise the limit (MRPVM_MAX_SOURCE_BYTES) and the kb-plugins' maxInputSizeBytes with it",
            {"source": name, "bytes": size, "maxSourceBytes": limit},
        )
    digest = text_hash(text)
    existing = store.find_source(kb.id, name)
    if existing is not None and existing.hash == digest and not force:
        if progress:
            size = len(text.encode("utf-8", "surrogatepass"))
            progress(size, size)
        # The text is stored already; the indexes that have not acknowledged it hear of it now (a kernel
        # killed between the commit and the notification left it owed), as do other owed sources.
        # removals first (reoffer's order): one an ingest in flight left for this source drops the version
        # the store never got, and the stored one is offered after it
        others = await reoffer(ctx, kb, skip={existing.id})
        notified, warnings = await reoffer_source(ctx, kb, existing, text)
        return IngestResult(
            **msgspec.structs.asdict(existing),
            unchanged=True,
            notified=notified,
            warnings=warnings + others.warnings,
        )
    early = size < LATE_KB_START_BYTES  # a large source: the kb workers start when its sd stage ends
    await _start_workers(ctx, [sd_plugin], kb, with_kb=early)
    source_id = existing.id if existing is not None else store.source_id_for(kb.id, name)
    source = NormalizePayload(
        sourceId=source_id,
        sourceName=name,
        sourceType=source_type,
        text=text,
        author=author,
        knowledgeDate=knowledge_date,
        scope="kb",
    )
    shipped: list[ShippedAnalysis] = []  # the sd-plugin's analysis of the units, if it shipped one

    async def start_kb_workers() -> None:
        await _start_workers(ctx, [], kb, with_kb=True)

    # a large source's kb workers start once its sd stage is over: as its reply arrives, beside the
    # kernel's parse of the tree (one chunk), or after the last chunk
    units, chunks, warnings = await normalize_text(
        ctx,
        sd_plugin,
        source,
        progress=progress,
        on_units=on_units,
        on_analysis=shipped.append,
        on_last_reply=None if early else start_kb_workers,
    )
    if not early:
        await start_kb_workers()  # started already, unless the source was cut into chunks
    record = SourceRecord(
        id=source_id,
        kbId=kb.id,
        name=name,
        sourceType=source_type,
        hash=digest,
        bytes=len(text.encode("utf-8", "surrogatepass")),
    )
    units_file = (
        UnitsFile(source_id, name, text, units, shipped[0] if shipped else None)
        if wants_units_file(ctx)
        else None
    )
    if on_phase:
        listeners = ", ".join(e.manifest.id for e in kb_listeners(ctx)) or "no kb-plugin"
        on_phase(f"indexing {len(units):,} units ({listeners})")
    # the kb-plugins index the units while the store commits them (knowledge/in_flight.py)
    stored, notified, notify_warnings = await store_and_notify(ctx, kb, record, text, units, units_file)
    if not notified and kb_listeners(ctx):
        await _take_back(ctx, kb, stored, notify_warnings)
    others = await reoffer(ctx, kb, skip={stored.id})
    return IngestResult(
        **msgspec.structs.asdict(stored),
        chunks=chunks,
        warnings=warnings + notify_warnings + others.warnings,
        notified=notified,
    )


async def _start_workers(ctx: KernelContext, plugin_ids: list[str], kb: KbRecord, *, with_kb: bool) -> None:
    """Start the workers this ingest calls before their first call: `plugin_ids` (the sd-plugin's), and with
    `with_kb` one for each kb-plugin, whose interpreter start and imports then run beside other work
    instead of on the ingest's critical path: beside the sd stage for a small source; at its end for a large
    one (LATE_KB_START_BYTES: as its reply arrives), beside the kernel's parse, commit and analysis of its
    tree, so they do not take CPU from the sd-plugin's (sd-symbolic builds a large tree on every core). A
    kb-plugin's workers start with the KB's artifacts folder bound (a new KB's folder would otherwise retire
    them at the notification, for fresh ones started then). Running ones are reused; one that cannot start
    is left to its call, which reports why."""
    try:  # an advisory start: what fails here (a spawn, a folder) fails again in the call, as itself
        folders = (
            {entry.id: str(ctx.artifacts_dir(kb.id, entry.id)) for entry in kb_listeners(ctx)}
            if with_kb
            else {}
        )
    except OSError:
        folders = {}
    for plugin_id in [*plugin_ids, *folders]:
        try:
            await ctx.supervisor.warm(plugin_id, workers=1, artifacts=folders.get(plugin_id))
        except (PluginCallError, OSError):
            pass


async def _take_back(ctx: KernelContext, kb: KbRecord, stored: SourceRecord, warnings: list[str]) -> None:
    """No kb-plugin indexed the source, so no question could ever find it: remove it again (an owed
    removal for every index) and fail the ingest with the plugins' reasons (a full disk says so)."""
    reasons = "; ".join(warnings) or "no kb-plugin acknowledged it"
    await remove_source(ctx, kb, stored.id)
    full = next((w for w in warnings if "No space left" in w or "disk is full" in w), None)
    if full is not None:
        raise DiskFull(f"disk full: no kb-plugin could index '{stored.name}' ({full}): {DISK_FULL_REMEDY}")
    raise IngestError(
        f"no kb-plugin indexed '{stored.name}', so it was not kept in KB '{kb.name}': {reasons}",
        {"source": stored.name, "kb": kb.name},
    )


async def remove_source(ctx: KernelContext, kb: KbRecord, name_or_id: str) -> tuple[SourceRecord, list[str]]:
    """Remove a source and its units (one transaction, which also records the removal as owed to every
    kb-plugin), then tell the kb-plugins (action remove); each acknowledgement settles its debt."""
    owed = [entry.id for entry in kb_listeners(ctx)]
    record = await anyio.to_thread.run_sync(ctx.store.remove_source, kb.id, name_or_id, owed)
    _, warnings = await notify_source(ctx, kb, record, "", [], "remove")
    return record, warnings


async def load_session_context(
    ctx: KernelContext,
    session_id: str,
    text: str,
    source_name: str,
    sd_plugin: str = "sd-symbolic",
    *,
    source_type: str = "text",
    progress: Progress | None = None,
    defer_notices: bool = False,
) -> LoadedUnits:
    """Normalize a text into session units (deduplicated, one transaction; the units of a text normalized
    before are read back, knowledge/kept_units.py), then tell every kb-plugin
    (`onSessionEvent`, session-kus-committed, scope session). Returns the units added, with `.warnings`.
    `defer_notices`: every notice waits for the plugin's next call (`hold_session_notices(defer=True)`)."""
    session = ctx.store.get_session(session_id)
    source_id = f"{slug(source_name)}-{secrets.token_hex(4)}"
    source = NormalizePayload(
        sourceId=source_id, sourceName=source_name, sourceType=source_type, text=text, scope="session"
    )
    units, warnings = await kept_units.normalized(
        ctx, sd_plugin, source, session_id=session_id, progress=progress
    )
    added = await anyio.to_thread.run_sync(ctx.store.add_session_units_list, session_id, units)
    if added:

        def make(entry: PluginEntry, with_text: bool) -> Request:
            return Request(
                prompt=f"Session {session_id} loaded context {source_name}",
                context=[],
                op="onSessionEvent",
                payload=OnSessionEventPayload(event="session-kus-committed", scope="session", units=added),
                paths=Paths(artifacts=str(ctx.artifacts_dir(session.kbId, entry.id))),
                requestId=f"context-{secrets.token_hex(6)}",
                sessionId=session_id,
            )

        what = f"session context '{source_name}'"
        now = hold_session_notices(ctx, kb_listeners(ctx, "onSessionEvent"), make, what, defer=defer_notices)
        _, notify_warnings = await _notify(ctx, "onSessionEvent", make, what, entries=now)
        warnings = warnings + notify_warnings
    return LoadedUnits(added, warnings, source_id)
