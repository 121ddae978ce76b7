"""KB and session lifecycle (DS026) over store primitives, shared by the CLI and the daemon: create and
delete sessions, mount a KB, save a session's units into a KB, fork a KB, remove a source, delete a KB.

Every operation that changes what a kb-plugin may hold or care about tells the kb-plugins: a source
stored or removed goes through `onSourceText` and the index ledger (knowledge/index_ledger.py: a plugin
that misses it owes it and is offered it again); a lifecycle event (session-created, session-deleted,
kb-loaded, kb-saved, kb-forked) goes as `onSessionEvent` (knowledge/notify.py). A plugin failing a
notice is a warning, never an undone operation.

Units copied into another source are re-based: every id, chunk id and unit reference gets the new
source id as its prefix (an id `<old source>::x` becomes `<new source>::x`; any other id `y` becomes
`<new source>::y`), so ids stay unique per KB and kb-plugins index the copy under the source they are told
about. Each new source is stored in one transaction (`Store.replace_source`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
import msgspec
from mrpvm.kernel.budgets import check_deliberation
from mrpvm.kernel.errors import KbExists, ValidationFailed
from mrpvm.kernel.records import KbRecord, SessionRecord, SourceRecord
from mrpvm.kernel.store_rows import text_hash
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import Pins

from .ingest import IngestResult, remove_source
from .ku_tree import finish_tree
from .notify import notify_session_event, notify_source

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.store import Store


def rebase_units(
    units: list[KnowledgeUnit], new_source: str, old_prefix: str | None = None
) -> list[KnowledgeUnit]:
    """Copies of `units` belonging to `new_source` (ids, chunk ids and references renamed consistently)."""

    def rename(old: str) -> str:
        if old_prefix and (old == old_prefix or old.startswith(old_prefix + "::")):
            return new_source + old[len(old_prefix) :]
        return f"{new_source}::{old}"

    ids = {u.id: rename(u.id) for u in units}
    out = [
        msgspec.structs.replace(
            u,
            id=ids[u.id],
            sourceId=new_source,
            chunkId=rename(u.chunkId),
            parentUnitIds=[ids[r] for r in u.parentUnitIds if r in ids],
            childUnitIds=[ids[r] for r in u.childUnitIds if r in ids],
            derivedFromUnitIds=[ids[r] for r in u.derivedFromUnitIds if r in ids],
        )
        for u in units
    ]
    return finish_tree(new_source, out)[0]


def ensure_kb(ctx: KernelContext, name: str) -> KbRecord:
    """The KB named (or with id) `name`, created if absent (a concurrent creation is not an error)."""
    found = ctx.store.find_kb(name)
    if found is not None:
        return found
    try:
        return ctx.store.create_kb(name)
    except KbExists:
        return ctx.store.get_kb(name)


def units_digest(units: list[KnowledgeUnit]) -> str:
    """The hash of a source stored from units (no raw text): its units' hashes or bodies."""
    return text_hash("\n".join(u.hash or u.body for u in units))


async def store_units(
    ctx: KernelContext,
    kb: KbRecord,
    name: str,
    units: list[KnowledgeUnit],
    old_prefix: str | None = None,
    *,
    text: str | None = None,
    source: SourceRecord | None = None,
    source_id: str | None = None,
) -> tuple[SourceRecord, list[str]]:
    """Store `units` as the KB source `name` (replacing a source of that name) and notify the kb-plugins.

    `source` (a copied or imported source record) keeps its type, hash and size; `text` is its raw text
    (stored and sent to the plugins); `source_id` forces the id (import into a store that lacks it)."""
    new_id = source_id or ctx.store.source_id_for(kb.id, name)
    rebased = rebase_units(units, new_id, old_prefix)
    record = SourceRecord(
        id=new_id,
        kbId=kb.id,
        name=name,
        sourceType=source.sourceType if source else "units",
        hash=source.hash if source and source.hash else units_digest(rebased),
        bytes=source.bytes if source else sum(len(u.body.encode()) for u in rebased),
    )
    stored = await anyio.to_thread.run_sync(ctx.store.replace_source, kb.id, record, rebased, text)
    notified, warnings = await notify_source(ctx, kb, stored, text or "", rebased, "upsert")
    result = IngestResult(**msgspec.structs.asdict(stored), notified=notified, warnings=warnings)
    return result, warnings


# --------------------------------------------------------------------------- sessions


async def create_session(
    ctx: KernelContext,
    kb: str | None = None,
    preferences: Pins | None = None,
    deliberation_level: int = 0,
) -> tuple[SessionRecord, list[str]]:
    """A new session (optionally mounting a KB), announced to the kb-plugins (session-created)."""
    check_deliberation(deliberation_level)
    record = ctx.store.create_session(
        kb_id=kb, preferences=preferences, deliberation_level=deliberation_level
    )
    mounted = ctx.store.get_kb(record.kbId) if record.kbId else None
    _, warnings = await notify_session_event(ctx, "session-created", record.id, mounted)
    return record, warnings


async def delete_session(ctx: KernelContext, session_id: str) -> list[str]:
    """Delete a session with its turns and units, then tell the kb-plugins (session-deleted)."""
    record = ctx.store.get_session(session_id)
    mounted = ctx.store.find_kb(record.kbId) if record.kbId else None
    ctx.store.delete_session(session_id)
    _, warnings = await notify_session_event(ctx, "session-deleted", session_id, mounted)
    return warnings


async def mount_kb(
    ctx: KernelContext, session_id: str, kb_ref: str | None
) -> tuple[SessionRecord, list[str]]:
    """Mount a KB (name or id) into a session (None unmounts); kb-plugins hear kb-loaded."""
    record = ctx.store.set_session_kb(session_id, kb_ref)
    if record.kbId is None:
        return record, []
    _, warnings = await notify_session_event(ctx, "kb-loaded", session_id, ctx.store.get_kb(record.kbId))
    return record, warnings


async def save_session(
    ctx: KernelContext, session_id: str, kb_ref: str, source_name: str | None
) -> tuple[KbRecord, SourceRecord, list[str]]:
    """The session's committed units as one source of the KB `kb_ref` (created if absent); kb-saved."""
    units = ctx.store.session_units(session_id)
    if not units:
        raise ValidationFailed(
            "NOTHING_TO_SAVE", f"session {session_id} has no committed units to save", {"session": session_id}
        )
    kb = ensure_kb(ctx, kb_ref)
    source, warnings = await store_units(ctx, kb, source_name or f"session-{session_id}", units)
    _, notes = await notify_session_event(ctx, "kb-saved", session_id, kb, source_ids=[source.id])
    return kb, source, warnings + notes


async def fork_kb(
    ctx: KernelContext, kb_ref: str, new_name: str, session_id: str = ""
) -> tuple[KbRecord, list[SourceRecord], list[str]]:
    """A copy of every source of `kb_ref` (units and raw text) in a new KB `new_name`; a failure removes the
    partial copy. The kb-plugins index each copied source, then hear kb-forked."""
    store = ctx.store
    original = store.get_kb(kb_ref)
    sources = store.list_sources(original.id)
    copy = store.create_kb(new_name)
    stored: list[SourceRecord] = []
    warnings: list[str] = []
    try:
        for source in sources:
            units = store.kb_units(original.id, source.id)
            text = store.source_text(source.id)
            record, notes = await store_units(
                ctx, copy, source.name, units, old_prefix=source.id, text=text, source=source
            )
            stored.append(record)
            warnings += notes
    except BaseException:
        with anyio.CancelScope(shield=True):
            delete_kb(ctx.store, ctx.home, copy.id)
        raise
    _, notes = await notify_session_event(
        ctx, "kb-forked", session_id, copy, origin=original, source_ids=[s.id for s in stored]
    )
    return copy, stored, warnings + notes


# --------------------------------------------------------------------------- sources and KBs

__all__ = ["remove_source"]  # ingest.remove_source: a source out of a KB through the index ledger


def delete_kb(store: Store, home: Path, name_or_id: str) -> KbRecord:
    """Delete a KB (one transaction: sources, units, owed removals; sessions mounting it keep running
    without a KB) and every plugin's artifacts for it under `home`: the plugins' indexes go with the
    folder, removed first, so that on a full disk their space is free before the rows' removal needs
    room. It needs no running plugins, so `mrpvm kb rm` calls it on the store alone."""
    record = store.get_kb(name_or_id)
    shutil.rmtree(Path(home) / "artifacts" / record.id, ignore_errors=True)
    return store.delete_kb(record.id)
