"""Ingest (DS018, DS026): a source becomes a KU tree in a KB; session context loads take the same path.

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
   private artifacts folder. A plugin that fails is reported as a warning; the source stays committed,
   owed to that plugin in the index ledger (knowledge/index_ledger.py), and is offered again on the next
   ingest, when a kernel opens, and by `check_kb` (knowledge/reindex.py). The same text again is "unchanged"
   only for the store: plugins that have not acknowledged it hear of it again.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import anyio
import anyio.to_thread
import msgspec
from mrpvm.kernel.errors import DISK_FULL_REMEDY, DiskFull, IngestError, KernelError
from mrpvm.kernel.llm import CallBudget
from mrpvm.kernel.llm.hooks import grant
from mrpvm.kernel.records import KbRecord, SourceRecord
from mrpvm.kernel.registry import PluginEntry
from mrpvm.kernel.store_rows import slug, text_hash
from mrpvm.kernel.supervisor.errors import PluginCallError
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import (
    Budget,
    NormalizePayload,
    OnSessionEventPayload,
    Paths,
    Request,
    encode_request,
)
from mrpvm.protocol.vocab import ingest_deadline_ms

from .chunking import chunk_spans
from .ku_tree import finish_tree, merge_chunk_trees
from .notify import (
    REQUEST_MARGIN,
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

NORMALIZE: Literal["normalizePersistentContext"] = "normalizePersistentContext"
# What an LLM sd-plugin reads in one model call (the SDK's MRPVM_LLM_CONTEXT_CHARS; same default, floor).
LLM_CONTEXT_CHARS = 6000
MIN_LLM_CONTEXT_CHARS = 500

Progress = Callable[[int, int], None]


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


# --------------------------------------------------------------------------- plugin lookup


def _plugin(ctx: KernelContext, plugin_id: str, plugin_type: str, op: str) -> PluginEntry:
    entry = ctx.registry.get(plugin_id, plugin_type)  # UnknownPluginError names the plugin and type
    if op not in entry.manifest.ops:
        raise IngestError(f"{plugin_id} does not implement {op}", {"plugin": plugin_id, "op": op})
    return entry


def check_sd_plugin(ctx: KernelContext, plugin_id: str) -> PluginEntry:
    """The sd-plugin entry, if it is registered and normalizes sources (else a clear KernelError)."""
    return _plugin(ctx, plugin_id, "sd-plugin", NORMALIZE)


# --------------------------------------------------------------------------- normalization


async def normalize_text(
    ctx: KernelContext,
    sd_plugin: str,
    source: NormalizePayload,
    *,
    session_id: str = "",
    progress: Progress | None = None,
    on_units: Callable[[int], None] | None = None,
) -> tuple[list[KnowledgeUnit], int, list[str]]:
    """The source's whole KU tree from the sd-plugin, chunk by chunk: (units, #chunks, warnings).

    `source` is the payload for the whole text; each chunk's request is a copy with its own `text`,
    `chunkIndex` and `charOffset`.
    """
    entry = _plugin(ctx, sd_plugin, "sd-plugin", NORMALIZE)
    text, source_id, source_name = source.text, source.sourceId, source.sourceName
    if not text.strip():
        raise IngestError(f"source '{source_name}' is empty", {"source": source_name})
    request_id = f"ingest-{secrets.token_hex(6)}"

    def build(index: int, offset: int, chunk: str, deadline_ms: int) -> Request:
        payload = msgspec.structs.replace(source, text=chunk, chunkIndex=index, charOffset=offset)
        return Request(
            prompt=f"Normalize source {source_name} (part {index + 1})",
            context=[],
            op=NORMALIZE,
            payload=payload,
            budget=Budget(llmCalls=entry.manifest.maxLLMCalls, deadlineMs=deadline_ms),
            requestId=request_id,
            sessionId=session_id,
        )

    # The envelope without text, with the largest numbers it will carry, sets the room left for text.
    overhead = len(encode_request(build(len(text), len(text), "", 10**9))) + REQUEST_MARGIN
    room = entry.manifest.maxInputSizeBytes - overhead
    if room < 64:
        raise IngestError(
            f"{sd_plugin} accepts at most {entry.manifest.maxInputSizeBytes} bytes per request: no room for text",
            {"plugin": sd_plugin, "maxInputSizeBytes": entry.manifest.maxInputSizeBytes},
        )
    bridge = ctx.llm if ctx.llm is not None and ctx.llm.available and entry.manifest.maxLLMCalls > 0 else None
    if bridge is not None:  # one chunk = one model part (JSON bytes >= characters)
        room = min(room, llm_context_chars(ctx.environ))
    spans = chunk_spans(text, room)
    total = len(text.encode("utf-8", "surrogatepass"))
    trees: list[list[KnowledgeUnit]] = [[] for _ in spans]
    warnings: list[str] = []
    done = {"bytes": 0, "units": 0}
    limiter = anyio.CapacityLimiter(max(1, entry.manifest.concurrency))
    budget = CallBudget(entry.manifest.maxLLMCalls * len(spans))  # maxLLMCalls per chunk
    if progress:
        progress(0, total)

    async def run(index: int, start: int, end: int) -> None:
        chunk = text[start:end]
        if chunk.strip():
            deadline_ms = ingest_deadline_ms(
                entry.manifest.timeoutMs, len(chunk.encode("utf-8", "surrogatepass"))
            )
            async with limiter:
                request = build(index, start, chunk, deadline_ms)
                request.llm = grant(
                    bridge,
                    entry,
                    NORMALIZE,
                    request_id,
                    f"chunk-{index}",
                    budget.llm_calls_left,
                    deadline_ms / 1000.0,
                )
                try:
                    doc = await _call(
                        ctx, sd_plugin, request, deadline_ms, part=f"part {index + 1} of {len(spans)}"
                    )
                finally:
                    if bridge is not None and request.llm is not None:
                        bridge.release(request.llm.apiKey)
            trees[index] = list(doc.units)
            if not doc.units:
                warnings.append(
                    f"{sd_plugin} produced no units for characters {start}-{end} of '{source_name}'"
                )
        done["bytes"] += len(chunk.encode("utf-8", "surrogatepass"))
        done["units"] += len(trees[index])
        if progress:
            progress(done["bytes"], total)
        if on_units:
            on_units(done["units"])

    if bridge is not None:
        bridge.open_request(request_id, budget)
    try:
        async with anyio.create_task_group() as group:
            for index, (start, end) in enumerate(spans):
                group.start_soon(run, index, start, end)
    except BaseExceptionGroup as group_error:
        raise _first_kernel_error(group_error) from None
    finally:
        if bridge is not None:
            bridge.expire_request(request_id)  # every token of the ingest dies

    units, dropped = finish_tree(source_id, merge_chunk_trees(source_id, trees), source_name=source_name)
    if not units:
        raise IngestError(f"{sd_plugin} produced no units for '{source_name}'", {"source": source_name})
    if dropped:
        warnings.append(f"{dropped} references to units absent from the tree were dropped")
    ids = [u.id for u in units]
    if len(set(ids)) != len(ids):
        raise IngestError(
            f"{sd_plugin} returned duplicate unit ids for '{source_name}'", {"source": source_name}
        )
    return units, len(spans), sorted(warnings)


def llm_context_chars(environ: dict[str, str] | None = None) -> int:
    """MRPVM_LLM_CONTEXT_CHARS as the LLM sd-plugins read it (default 6000, at least 500)."""
    raw = (os.environ if environ is None else environ).get("MRPVM_LLM_CONTEXT_CHARS", "").strip()
    try:
        return max(MIN_LLM_CONTEXT_CHARS, int(raw)) if raw else LLM_CONTEXT_CHARS
    except ValueError:
        return LLM_CONTEXT_CHARS


def _first_kernel_error(group: BaseExceptionGroup) -> BaseException:
    """The first KernelError inside a task group's exceptions (the group itself if there is none)."""
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            inner = _first_kernel_error(exc)
            if inner is not exc:
                return inner
        elif isinstance(exc, KernelError):
            return exc
    return group


async def _call(
    ctx: KernelContext, plugin_id: str, request: Request, deadline_ms: int, part: str
) -> CnlDocument:
    """normalizePersistentContext through the supervisor within `deadline_ms` (the manifest's timeoutMs
    per started MiB of the chunk, protocol/vocab.py); anything but success is an IngestError."""
    try:
        result = await ctx.supervisor.call(
            plugin_id, request, timeout_s=deadline_ms / 1000, beyond_manifest=True
        )
    except PluginCallError as err:
        raise IngestError(
            f"{plugin_id} failed on {part}: {err.error.code}: {err.error.message}",
            {"plugin": plugin_id, "part": part, "error": msgspec.to_builtins(err.error)},
        ) from None
    status = result.document.result.status
    if status == "unsupported":
        reason = result.document.result.result or "no reason given"
        raise IngestError(
            f"{plugin_id} does not support normalizing sources (answered unsupported: {reason}); choose another sd-plugin",
            {"plugin": plugin_id, "status": status},
        )
    if status != "success":
        block = result.document.result
        reason = ": ".join(filter(None, [block.code, block.result])) or "no reason given"
        raise IngestError(
            f"{plugin_id} answered {status} on {part}: {reason}",
            {"plugin": plugin_id, "part": part, "status": status},
        )
    return result.document


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
        notified, warnings = await reoffer_source(ctx, kb, existing, text)
        others = await reoffer(ctx, kb, skip={existing.id})
        return IngestResult(
            **msgspec.structs.asdict(existing),
            unchanged=True,
            notified=notified,
            warnings=warnings + others.warnings,
        )
    await _start_workers(ctx, sd_plugin)
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
    units, chunks, warnings = await normalize_text(
        ctx, sd_plugin, source, progress=progress, on_units=on_units
    )
    record = SourceRecord(
        id=source_id,
        kbId=kb.id,
        name=name,
        sourceType=source_type,
        hash=digest,
        bytes=len(text.encode("utf-8", "surrogatepass")),
    )
    units_file = UnitsFile(source_id, name, text, units) if wants_units_file(ctx) else None
    try:
        async with anyio.create_task_group() as group:
            if units_file is not None:  # the kb-plugins' units file is analysed while the store commits
                group.start_soon(units_file.get, True)
            stored = await anyio.to_thread.run_sync(store.replace_source, kb.id, record, units, text)
    except BaseExceptionGroup as group_error:  # the commit's own error, as it would be raised alone
        raise group_error.exceptions[0] if len(group_error.exceptions) == 1 else group_error from None
    if on_phase:
        listeners = ", ".join(e.manifest.id for e in kb_listeners(ctx)) or "no kb-plugin"
        on_phase(f"indexing {len(units):,} units ({listeners})")
    notified, notify_warnings = await notify_source(
        ctx, kb, stored, text, units, "upsert", units_file=units_file
    )
    if not notified and kb_listeners(ctx):
        await _take_back(ctx, kb, stored, notify_warnings)
    others = await reoffer(ctx, kb, skip={stored.id})
    return IngestResult(
        **msgspec.structs.asdict(stored),
        chunks=chunks,
        warnings=warnings + notify_warnings + others.warnings,
        notified=notified,
    )


async def _start_workers(ctx: KernelContext, sd_plugin: str) -> None:
    """Start the workers this ingest calls before its first call: the sd-plugin's, then one for each
    kb-plugin, whose interpreter start and imports then run beside the sd-plugin's work instead of after
    it, on the ingest's critical path. Running ones are reused; one that cannot start is left to its
    call, which reports why."""
    for plugin_id in [sd_plugin, *(entry.id for entry in kb_listeners(ctx))]:
        try:
            await ctx.supervisor.warm(plugin_id, workers=1)
        except PluginCallError:
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
    """Normalize a text into session units (deduplicated, one transaction), then tell every kb-plugin
    (`onSessionEvent`, session-kus-committed, scope session). Returns the units added, with `.warnings`.
    `defer_notices`: every notice waits for the plugin's next call (`hold_session_notices(defer=True)`)."""
    session = ctx.store.get_session(session_id)
    source_id = f"{slug(source_name)}-{secrets.token_hex(4)}"
    source = NormalizePayload(
        sourceId=source_id, sourceName=source_name, sourceType=source_type, text=text, scope="session"
    )
    units, _, warnings = await normalize_text(
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
