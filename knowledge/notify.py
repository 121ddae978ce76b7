"""Telling the kb-plugins about sources (`onSourceText`) and session units (`onSessionEvent`).

Every acknowledgement of a source upsert or removal is recorded in the index ledger
(knowledge/index_ledger.py), so what a plugin missed can be offered again (knowledge/reindex.py).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from mrpvm.kernel.records import KbRecord, SourceRecord
from mrpvm.kernel.registry import PluginEntry
from mrpvm.kernel.supervisor.errors import PluginCallError
from mrpvm.protocol.cnl_compact import ShippedAnalysis
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import (
    Budget,
    OnSessionEventPayload,
    OnSourceTextPayload,
    Paths,
    Request,
    SessionEvent,
    encode_request,
)
from mrpvm.protocol.vocab import ingest_deadline_ms

from . import index_format
from . import index_ledger as ledger

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

log = logging.getLogger("mrpvm.kernel")
# Bytes kept free in every request besides the measured envelope (ids, numbers that may grow).
REQUEST_MARGIN = 512


PARTIAL_NOTE = " in part ("  # in the warning about a `partial` answer (knowledge/reindex.py `check_kb`)


def kb_listeners(ctx: KernelContext, op: str = "onSourceText") -> list[PluginEntry]:
    """The enabled kb-plugins that implement `op`: the ones whose indexes must hear of every source."""
    return [entry for entry in ctx.enabled("kb-plugin") if op in entry.manifest.ops]


async def _notify(
    ctx: KernelContext,
    op: str,
    make: Callable[..., Request],
    what: str,
    entries: list[PluginEntry] | None = None,
    on_ack: Callable[[PluginEntry, bool], None] | None = None,
    units_file: Callable[[bool], Awaitable[bytes]] | None = None,
    text_bytes: int = 0,
) -> tuple[list[str], list[str]]:
    """Send `op` to every enabled kb-plugin that implements it (or to `entries`): (notified plugin ids,
    warnings). `on_ack(entry, partial)` runs for each plugin that answered success or skipped (partial False) or
    partial (True: searchable, its index still owed the rest; it is counted as notified). `units_file(analysed)`:
    the handoff document (encoded once, on first need) a plugin declaring `handoff: file` gets as a file
    bound for its call (`make(entry, False, path)`), instead of the text and units inline; without the
    analysis when the file with it exceeds the plugin's maxInputSizeBytes (the plugin then analyses).
    `text_bytes`: the size of the text the op handles (a source upsert), which scales each plugin's
    deadline (`ingest_deadline_ms`); 0: the manifest's timeoutMs."""
    notified: list[str] = []
    warnings: list[str] = []

    def too_large(entry: PluginEntry, size: int, kind: str) -> None:
        warnings.append(
            f"{entry.id} was not sent {op} for {what}: the {kind} ({size} bytes) exceeds its manifest's "
            f"maxInputSizeBytes ({entry.manifest.maxInputSizeBytes}), so its index does not cover this "
            f"source; raise maxInputSizeBytes in {entry.manifest_path} to at least {size + REQUEST_MARGIN} "
            "(an ingest request is about 6x its source: protocol/SPEC.md §7)"
        )

    async def send(entry: PluginEntry, request: Request, note: str) -> None:
        deadline_ms = ingest_deadline_ms(entry.manifest.timeoutMs, text_bytes)
        request.budget = Budget(llmCalls=0, deadlineMs=deadline_ms)
        try:
            if text_bytes:
                result = await ctx.supervisor.call(
                    entry.id, request, timeout_s=deadline_ms / 1000, beyond_manifest=True
                )
            else:
                result = await ctx.supervisor.call(entry.id, request)
        except PluginCallError as err:
            warnings.append(f"{entry.id} failed {op} for {what}: {err.error.code}: {err.error.message}")
            return
        status = result.document.result.status
        if status in ("success", "skipped", "partial"):
            if on_ack is not None:
                await anyio.to_thread.run_sync(on_ack, entry, status == "partial")
            notified.append(entry.id + note + (" (partial)" if status == "partial" else ""))
            if status == "partial":
                reason = result.document.result.result or "indexed in part"
                warnings.append(
                    f"{entry.id} indexed {what}{PARTIAL_NOTE}{reason}): searchable now; the rest is built each time "
                    "the kernel offers it again (the next ingest into the KB, a running daemon's index watch; "
                    "`mrpvm kb check KB --complete` completes it now)"
                )
        else:
            reason = result.document.result.result
            warnings.append(
                f"{entry.id} answered {status} to {op} for {what}" + (f": {reason}" if reason else "")
            )

    placed: dict[int, str] = {}  # id of a units file's bytes (kept by `units_file`) -> the first file of them

    async def one(entry: PluginEntry) -> None:
        limit = entry.manifest.maxInputSizeBytes - REQUEST_MARGIN
        if units_file is not None:
            try:
                folder = ctx.supervisor.handoff(entry.id)
            except PluginCallError as err:
                warnings.append(f"{entry.id} failed {op} for {what}: {err.error.code}: {err.error.message}")
                return
            if folder is not None:
                data = await units_file(True)
                if len(data) > limit:  # the analysis is a convenience: hand the units without it
                    data = await units_file(False)
                if len(data) > limit:
                    too_large(entry, len(data), "units file")
                    return
                try:  # one copy of the bytes for every plugin: the others' files link to it
                    path = folder.write(data, like=placed.get(id(data), ""))
                    placed.setdefault(id(data), path)
                except OSError as err:
                    warnings.append(
                        f"{entry.id} was not sent {op} for {what}: cannot write its units file: {err}"
                    )
                    return
                try:
                    await send(entry, make(entry, False, path), "")
                finally:
                    folder.discard(path)
                return
        request = make(entry, True)
        size = len(encode_request(request))
        note = ""
        if size > limit:  # the raw text is also in the units' bodies: try without it
            request = make(entry, False)
            size = len(encode_request(request))
            note = " (without the raw text, which did not fit)"
        if size > limit:
            too_large(entry, size, "request")
            return
        await send(entry, request, note)

    async with anyio.create_task_group() as group:
        for entry in kb_listeners(ctx, op) if entries is None else entries:
            group.start_soon(one, entry)
    return sorted(notified), sorted(warnings)


def hold_session_notices(
    ctx: KernelContext,
    entries: list[PluginEntry],
    make: Callable[[PluginEntry, bool], Request],
    what: str,
    *,
    defer: bool = False,
) -> list[PluginEntry]:
    """Of the kb-plugins to tell about session units, the ones to tell now: those with a running worker.
    The others' notices wait for their next call (`Supervisor.before_next_call`), so loading context
    starts no worker a turn may never call (protocol/SPEC.md §8: session notices may come late or,
    for a plugin this kernel never calls again, not at all; the units travel in every retrieve).
    `defer`: every notice waits (a one-turn process whose workers may still be starting: loading its
    source does not wait for them)."""
    now: list[PluginEntry] = []
    for entry in entries:
        if not defer and ctx.supervisor.running(entry.id):
            now.append(entry)
            continue

        async def deliver(entry: PluginEntry = entry) -> None:
            _, warnings = await _notify(ctx, "onSessionEvent", make, what, entries=[entry])
            for warning in warnings:
                log.warning("%s", warning)

        ctx.supervisor.before_next_call(entry.id, deliver)
    return now


async def notify_source(
    ctx: KernelContext,
    kb: KbRecord,
    source: SourceRecord,
    text: str,
    units: list[KnowledgeUnit],
    action: str,
    only: list[str] | None = None,
    units_file: UnitsFile | None = None,
    on_ack: Callable[[PluginEntry, bool], None] | None = None,
) -> tuple[list[str], list[str]]:
    """onSourceText (upsert with the whole tree, or remove) to every enabled kb-plugin (or those named in
    `only`); each acknowledgement is recorded in the index ledger (knowledge/index_ledger.py), or handed
    to `on_ack(entry, partial)` instead (an upsert told before its commit: knowledge/in_flight.py).
    `units_file`: the source's handoff document if the caller has started encoding it already."""
    entries = kb_listeners(ctx)
    if only is not None:
        entries = [e for e in entries if e.id in only]
    if action == "upsert":  # the index the plugin builds is in the format it declares
        for entry in entries:
            index_format.note(ctx, kb.id, entry)

    def acknowledged(entry: PluginEntry, partial: bool) -> None:
        if action == "upsert":
            ledger.record_ack(ctx.store, source, entry.id, partial)
        else:
            ledger.record_removal_ack(ctx.store, source.id, entry.id)

    def make(entry: PluginEntry, with_text: bool, units_file: str = "") -> Request:
        payload = OnSourceTextPayload(
            kbId=kb.id,
            sourceId=source.id,
            sourceName=source.name,
            text=text if with_text else "",
            units=[] if units_file else units,
            action=action,  # type: ignore[arg-type]
            unitsFile=units_file,
        )
        return Request(
            prompt=f"{'Index' if action == 'upsert' else 'Forget'} source {source.name} of KB {kb.name}",
            context=[],
            op="onSourceText",
            payload=payload,
            paths=Paths(artifacts=str(ctx.artifacts_dir(kb.id, entry.id))),
            requestId=f"ingest-{secrets.token_hex(6)}",
        )

    if units_file is None or (units_file.source_id, units_file.source_name) != (source.id, source.name):
        units_file = UnitsFile(source.id, source.name, text, units)
    return await _notify(
        ctx,
        "onSourceText",
        make,
        f"source '{source.name}'",
        entries,
        on_ack or acknowledged,
        units_file.get if action == "upsert" else None,
        len(text.encode("utf-8", "surrogatepass")) if action == "upsert" else 0,
    )


class UnitsFile:
    """The handoff document of one source upsert (protocol/handoff.py), with the units' analysis or
    without, each encoded once (in a thread) on first need and shared by every kb-plugin. An ingest encodes
    it before the store's commit starts (knowledge/in_flight.py), so the kb calls start sooner."""

    def __init__(
        self,
        source_id: str,
        source_name: str,
        text: str,
        units: list[KnowledgeUnit],
        shipped: ShippedAnalysis | None = None,
    ):
        self.source_id, self.source_name, self.text, self.units = source_id, source_name, text, units
        self.shipped = shipped  # the sd-plugin's analysis of the units, used where it fits (handoff.py)
        self._encoded: dict[bool, bytes] = {}
        self._lock = anyio.Lock()

    async def get(self, analysed: bool) -> bytes:
        from mrpvm.protocol.handoff import encode_handoff  # imports the analyser: only for an ingest

        async with self._lock:
            if analysed not in self._encoded:
                self._encoded[analysed] = await anyio.to_thread.run_sync(
                    lambda: encode_handoff(
                        self.source_id,
                        self.source_name,
                        self.text,
                        self.units,
                        analysed=analysed,
                        shipped=self.shipped,
                    )
                )
        return self._encoded[analysed]


def wants_units_file(ctx: KernelContext) -> bool:
    """Whether an enabled kb-plugin takes its units as a file (manifest `handoff: file`)."""
    return any(getattr(entry.manifest, "handoff", "inline") == "file" for entry in kb_listeners(ctx))


async def notify_session_event(
    ctx: KernelContext,
    event: SessionEvent,
    session_id: str,
    kb: KbRecord | None = None,
    *,
    origin: KbRecord | None = None,
    source_ids: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """A DS026 lifecycle event (session-created, session-deleted, kb-loaded, kb-saved, kb-forked) as
    `onSessionEvent` to every enabled kb-plugin that implements it: (acknowledging plugins, warnings).
    A plugin's failure is a warning: the event already happened in the store."""

    def make(entry: PluginEntry, with_text: bool) -> Request:
        payload = OnSessionEventPayload(
            event=event,
            scope="session",
            kbId=kb.id if kb else "",
            kbName=kb.name if kb else "",
            originKbId=origin.id if origin else "",
            sourceIds=list(source_ids or []),
        )
        return Request(
            prompt=f"Session {session_id}: {event}" + (f" (KB {kb.name})" if kb else ""),
            context=[],
            op="onSessionEvent",
            payload=payload,
            paths=Paths(artifacts=str(ctx.artifacts_dir(kb.id if kb else None, entry.id))),
            requestId=f"session-{secrets.token_hex(6)}",
            sessionId=session_id,
        )

    return await _notify(ctx, "onSessionEvent", make, f"{event} of session {session_id}")
