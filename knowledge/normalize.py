"""The sd stage of ingest (knowledge/ingest.py steps 1-2): a source's text, chunked to fit the sd-plugin, becomes
one KU tree through `normalizePersistentContext` calls; any failure is an IngestError and nothing is stored."""

from __future__ import annotations

import os
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

import anyio
import msgspec
from mrpvm.kernel.errors import IngestError, KernelError
from mrpvm.kernel.llm import CallBudget
from mrpvm.kernel.llm.hooks import grant
from mrpvm.kernel.registry import PluginEntry
from mrpvm.kernel.supervisor.errors import PluginCallError
from mrpvm.protocol.cnl_compact import ShippedAnalysis
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import (
    Budget,
    NormalizePayload,
    Request,
    encode_request,
)
from mrpvm.protocol.vocab import ingest_deadline_ms

from .notify import REQUEST_MARGIN

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

NORMALIZE: Literal["normalizePersistentContext"] = "normalizePersistentContext"
# What an LLM sd-plugin reads in one model call (the SDK's MRPVM_LLM_CONTEXT_CHARS; same default, floor).
LLM_CONTEXT_CHARS = 6000
MIN_LLM_CONTEXT_CHARS = 500

Progress = Callable[[int, int], None]


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
    on_analysis: Callable[[ShippedAnalysis], None] | None = None,
    on_last_reply: Callable[[], Awaitable[object]] | None = None,
) -> tuple[list[KnowledgeUnit], int, list[str]]:
    """The source's whole KU tree from the sd-plugin, chunk by chunk: (units, #chunks, warnings).

    `source` is the payload for the whole text; each chunk's request is a copy with its own `text`,
    `chunkIndex` and `charOffset`. `on_analysis`: given the analysis a one-chunk source's compact reply
    shipped (`analysis[i]` of the i-th unit returned; the tree of one chunk keeps its units' order).
    `on_last_reply`: awaited when the reply of a one-chunk source has arrived, before the kernel parses it.
    """
    # here: a one-turn `mrpvm ask` whose `--source` units are kept (kept_units.py) imports this module and
    # never normalizes (chunking compiles its patterns at import)
    from .chunking import chunk_spans
    from .ku_tree import finish_tree, merge_chunk_trees

    entry = _plugin(ctx, sd_plugin, "sd-plugin", NORMALIZE)
    text, source_id, source_name = source.text, source.sourceId, source.sourceName
    if not text.strip():
        raise IngestError(f"source '{source_name}' is empty", {"source": source_name})
    request_id = f"ingest-{secrets.token_hex(6)}"

    # an sd-plugin declaring `replyForm: msgpack` is asked for the compact reply (protocol/cnl_compact.py)
    reply_form = getattr(entry.manifest, "replyForm", "cnl")

    def build(index: int, offset: int, chunk: str, deadline_ms: int) -> Request:
        payload = msgspec.structs.replace(
            source, text=chunk, chunkIndex=index, charOffset=offset, replyForm=reply_form
        )
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
    shipped: list[ShippedAnalysis | None] = [None for _ in spans]
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
                    doc, shipped[index] = await _call(
                        ctx,
                        sd_plugin,
                        request,
                        deadline_ms,
                        part=f"part {index + 1} of {len(spans)}",
                        on_reply=on_last_reply if len(spans) == 1 else None,
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
    if on_analysis is not None and len(spans) == 1 and shipped[0] is not None:
        on_analysis(shipped[0])
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
    ctx: KernelContext,
    plugin_id: str,
    request: Request,
    deadline_ms: int,
    part: str,
    on_reply: Callable[[], Awaitable[object]] | None = None,
) -> tuple[CnlDocument, ShippedAnalysis | None]:
    """normalizePersistentContext through the supervisor within `deadline_ms` (the manifest's timeoutMs
    per started MiB of the chunk, protocol/vocab.py); anything but success is an IngestError. With the
    document, the analysis its compact reply shipped."""
    try:
        result = await ctx.supervisor.call(
            plugin_id, request, timeout_s=deadline_ms / 1000, beyond_manifest=True, on_reply=on_reply
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
    return result.document, result.shipped
