"""KB operations a session drives, over store primitives: save the session's units into a KB, fork a KB.

Units copied into another source are re-based: every id, chunk id and unit reference gets the new
source id as its prefix (an id `<old source>::x` becomes `<new source>::x`; any other id `y` becomes
`<new source>::y`), so ids stay unique per KB and kb-plugins index the copy under the source they are told
about. Each new source is stored in one transaction (`Store.replace_source`) and announced to every
enabled kb-plugin (`onSourceText`, upsert, without raw text: only the units are kept).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import msgspec
from mrpvm.kernel.errors import KbExists, ValidationFailed
from mrpvm.kernel.ingest import notify_source
from mrpvm.kernel.ku_tree import finish_tree
from mrpvm.kernel.records import KbRecord, SourceRecord
from mrpvm.kernel.store_rows import text_hash
from mrpvm.protocol.document import KnowledgeUnit

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext


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


def _digest(units: list[KnowledgeUnit]) -> str:
    return text_hash("\n".join(u.hash or u.body for u in units))


async def store_units(
    ctx: KernelContext, kb: KbRecord, name: str, units: list[KnowledgeUnit], old_prefix: str | None = None
) -> tuple[SourceRecord, list[str]]:
    """Store `units` as the KB source `name` (replacing a source of that name) and notify the kb-plugins."""
    source_id = ctx.store.source_id_for(kb.id, name)
    rebased = rebase_units(units, source_id, old_prefix)
    record = SourceRecord(
        id=source_id,
        kbId=kb.id,
        name=name,
        sourceType="units",
        hash=_digest(rebased),
        bytes=sum(len(u.body.encode()) for u in rebased),
    )
    stored = await anyio.to_thread.run_sync(ctx.store.replace_source, kb.id, record, rebased)
    _, warnings = await notify_source(ctx, kb, stored, "", rebased, "upsert")
    return stored, warnings


async def save_session(
    ctx: KernelContext, session_id: str, kb_ref: str, source_name: str | None
) -> tuple[KbRecord, SourceRecord, list[str]]:
    """The session's committed units as one source of the KB `kb_ref` (created if absent)."""
    units = ctx.store.session_units(session_id)
    if not units:
        raise ValidationFailed(
            "NOTHING_TO_SAVE", f"session {session_id} has no committed units to save", {"session": session_id}
        )
    kb = ensure_kb(ctx, kb_ref)
    source, warnings = await store_units(ctx, kb, source_name or f"session-{session_id}", units)
    return kb, source, warnings


async def fork_kb(
    ctx: KernelContext, kb_ref: str, new_name: str
) -> tuple[KbRecord, list[SourceRecord], list[str]]:
    """A copy of every source of `kb_ref` in a new KB `new_name`; a failure removes the partial copy."""
    store = ctx.store
    original = store.get_kb(kb_ref)
    sources = store.list_sources(original.id)
    copy = store.create_kb(new_name)
    stored: list[SourceRecord] = []
    warnings: list[str] = []
    try:
        for source in sources:
            units = store.kb_units(original.id, source.id)
            record, notes = await store_units(ctx, copy, source.name, units, old_prefix=source.id)
            stored.append(record)
            warnings += notes
    except BaseException:
        store.delete_kb(copy.id)
        raise
    return copy, stored, warnings
