"""KB export and import: one portable, versioned archive of a KB's sources and knowledge units.

The archive is a zip file:

    manifest.json            {"format": "mrpvm-kb", "formatVersion": 1, "kb": {...}, "exportedAt",
                              "sources": [{"id", "name", "sourceType", "hash", "bytes", "unitCount",
                                           "ingestedAt", "units": "units/<n>.json", "unitsSha256",
                                           "text": "texts/<n>.txt" | null, "textSha256"}]}
    units/<n>.json           the source's KU tree: a JSON array of knowledge units (protocol/SPEC.md §6.3)
    texts/<n>.txt            the raw text the source was ingested from (absent when the store lacks it)

Plugin indexes are not in the archive: they belong to the plugins that built them. An import stores
each source (one transaction per source, the KB removed again if any step fails) and goes through the
same path as ingest: `onSourceText` upsert to every kb-plugin with the units and the raw text, each
acknowledgement recorded in the index ledger, so the plugins rebuild their indexes and what one misses
is offered again. Source ids are kept when the store has no source with that id (so an export imported
into a fresh home is the same KB), else re-based onto fresh ids.

Import validates strictly before storing anything: a readable zip within the size limits, a manifest of
this format and version with no unknown field, every named member present and matching its sha256,
units that decode as knowledge units of their source with unique ids, source names unique. Any problem
is an `ArchiveError` (BAD_ARCHIVE: HTTP 400, CLI exit 2) naming the member and the reason.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from typing import TYPE_CHECKING, Annotated, Literal

import anyio
import msgspec
from mrpvm.kernel.errors import ArchiveError
from mrpvm.kernel.records import KbRecord, SourceRecord
from mrpvm.kernel.store_rows import now_iso, text_hash
from mrpvm.protocol.document import KnowledgeUnit

from .ops import delete_kb, store_units

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext

FORMAT: Literal["mrpvm-kb"] = "mrpvm-kb"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MAX_MEMBERS = 20_000
MAX_UNPACKED_BYTES = 1 << 30  # what an archive may expand to (a zip bomb stops here)
MEDIA_TYPE = "application/zip"

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Sha256 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class ArchivedKb(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: str = ""
    name: NonEmpty
    createdAt: str = ""


class ArchivedSource(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: NonEmpty
    name: NonEmpty
    sourceType: str = "text"
    hash: str = ""
    bytes: Annotated[int, msgspec.Meta(ge=0)] = 0
    unitCount: Annotated[int, msgspec.Meta(ge=0)] = 0
    ingestedAt: str = ""
    units: NonEmpty
    unitsSha256: Sha256
    text: str | None = None
    textSha256: Sha256 | None = None


class Manifest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    format: Literal["mrpvm-kb"]
    formatVersion: int
    kb: ArchivedKb
    exportedAt: str = ""
    sources: list[ArchivedSource] = []


class ImportResult(msgspec.Struct, kw_only=True):
    kb: KbRecord
    sources: list[SourceRecord]
    warnings: list[str] = []


_units = msgspec.json.Decoder(list[KnowledgeUnit])
_encoder = msgspec.json.Encoder()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- export


def export_kb(ctx: KernelContext, name_or_id: str) -> tuple[KbRecord, bytes]:
    """The archive of a KB (name or id) as bytes: every source with its units and, when stored, its text."""
    store = ctx.store
    kb = store.get_kb(name_or_id)
    buffer = io.BytesIO()
    sources: list[ArchivedSource] = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for n, source in enumerate(store.list_sources(kb.id), 1):
            units = _encoder.encode(store.kb_units(kb.id, source.id))
            archive.writestr(f"units/{n:05d}.json", units)
            text = store.source_text(source.id)
            raw = text.encode("utf-8", "surrogatepass") if text is not None else None
            if raw is not None:
                archive.writestr(f"texts/{n:05d}.txt", raw)
            sources.append(
                ArchivedSource(
                    id=source.id,
                    name=source.name,
                    sourceType=source.sourceType,
                    hash=source.hash,
                    bytes=source.bytes,
                    unitCount=source.unitCount,
                    ingestedAt=source.ingestedAt,
                    units=f"units/{n:05d}.json",
                    unitsSha256=_sha(units),
                    text=f"texts/{n:05d}.txt" if raw is not None else None,
                    textSha256=_sha(raw) if raw is not None else None,
                )
            )
        manifest = Manifest(
            format=FORMAT,
            formatVersion=FORMAT_VERSION,
            kb=ArchivedKb(id=kb.id, name=kb.name, createdAt=kb.createdAt),
            exportedAt=now_iso(),
            sources=sources,
        )
        archive.writestr(MANIFEST, msgspec.json.format(_encoder.encode(manifest), indent=2))
    return kb, buffer.getvalue()


# --------------------------------------------------------------------------- import


class _Source(msgspec.Struct, kw_only=True):
    """One archived source, checked: its record, units and text."""

    entry: ArchivedSource
    units: list[KnowledgeUnit]
    text: str | None


def read_archive(data: bytes) -> tuple[Manifest, list[_Source]]:
    """Open and check an archive completely (nothing is stored): (manifest, checked sources)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as err:
        raise ArchiveError(f"not a KB archive: not a readable zip file ({err})", {"member": None}) from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise ArchiveError(f"the archive holds {len(members)} files (at most {MAX_MEMBERS})")
        unpacked = sum(m.file_size for m in members)
        if unpacked > MAX_UNPACKED_BYTES:
            raise ArchiveError(f"the archive expands to {unpacked} bytes (at most {MAX_UNPACKED_BYTES})")
        manifest = _manifest(_member(archive, MANIFEST))
        names: set[str] = set()
        checked: list[_Source] = []
        for n, entry in enumerate(manifest.sources):
            where = f"sources[{n}] ({entry.name})"
            if entry.name in names:
                raise ArchiveError(f"{where}: the source name is repeated", {"source": entry.name})
            names.add(entry.name)
            checked.append(_source(archive, entry, where))
    return manifest, checked


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        return archive.read(name)
    except KeyError:
        raise ArchiveError(f"the archive has no {name}", {"member": name}) from None
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as err:  # corrupt, encrypted
        raise ArchiveError(f"{name} cannot be read: {err}", {"member": name}) from None


def _manifest(raw: bytes) -> Manifest:
    try:
        head = msgspec.json.decode(raw)
    except msgspec.DecodeError as err:
        raise ArchiveError(f"{MANIFEST} is not valid JSON ({err})", {"member": MANIFEST}) from None
    except RecursionError:  # the decoder's depth guard: thousands of nested arrays or objects
        raise ArchiveError(
            f"{MANIFEST} is nested too deeply to be a KB manifest", {"member": MANIFEST}
        ) from None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise ArchiveError(f"{MANIFEST}: not a KB archive (format must be '{FORMAT}')", {"member": MANIFEST})
    version = head.get("formatVersion")
    if version != FORMAT_VERSION:
        raise ArchiveError(
            f"{MANIFEST}: format version {version!r} is not supported (this kernel reads {FORMAT_VERSION})",
            {"member": MANIFEST, "formatVersion": version, "supported": [FORMAT_VERSION]},
        )
    try:
        return msgspec.convert(head, Manifest)
    except msgspec.ValidationError as err:
        raise ArchiveError(f"{MANIFEST}: {err}", {"member": MANIFEST}) from None


def _source(archive: zipfile.ZipFile, entry: ArchivedSource, where: str) -> _Source:
    raw = _member(archive, entry.units)
    if _sha(raw) != entry.unitsSha256:
        raise ArchiveError(f"{where}: {entry.units} does not match its sha256", {"member": entry.units})
    try:
        units = _units.decode(raw)
    except msgspec.DecodeError as err:
        raise ArchiveError(f"{where}: {entry.units}: not a list of knowledge units ({err})") from None
    except RecursionError:
        raise ArchiveError(f"{where}: {entry.units}: nested too deeply to be knowledge units") from None
    if len(units) != entry.unitCount:
        raise ArchiveError(f"{where}: {len(units)} units, the manifest says {entry.unitCount}")
    ids = [u.id for u in units]
    if len(set(ids)) != len(ids):
        raise ArchiveError(f"{where}: {entry.units} repeats a unit id")
    strangers = [u.id for u in units if u.sourceId != entry.id]
    if strangers:
        raise ArchiveError(
            f"{where}: unit {strangers[0]} belongs to source {units[ids.index(strangers[0])].sourceId}"
        )
    text = None
    if entry.text is not None:
        data = _member(archive, entry.text)
        if entry.textSha256 is not None and _sha(data) != entry.textSha256:
            raise ArchiveError(f"{where}: {entry.text} does not match its sha256", {"member": entry.text})
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ArchiveError(f"{where}: {entry.text} is not UTF-8 text", {"member": entry.text}) from None
        if entry.hash and text_hash(text) != entry.hash:
            raise ArchiveError(f"{where}: the text does not match the source hash", {"member": entry.text})
    return _Source(entry=entry, units=units, text=text)


async def import_kb(ctx: KernelContext, data: bytes, name: str | None = None) -> ImportResult:
    """A new KB (named `name`, else the archived name) from an archive; every kb-plugin indexes each source.

    Nothing is stored unless the whole archive checks; a failure while storing removes the new KB."""
    manifest, sources = read_archive(data)
    store = ctx.store
    kb = store.create_kb(name or manifest.kb.name)  # KB_EXISTS (409) when the name is taken
    stored: list[SourceRecord] = []
    warnings: list[str] = []
    try:
        for item in sources:
            entry = item.entry
            taken = store.source_exists(entry.id)
            record = SourceRecord(
                id=entry.id,
                kbId=kb.id,
                name=entry.name,
                sourceType=entry.sourceType,
                hash=entry.hash,
                bytes=entry.bytes,
            )
            source, notes = await store_units(
                ctx,
                kb,
                entry.name,
                item.units,
                old_prefix=entry.id,
                text=item.text,
                source=record,
                source_id=None if taken else entry.id,
            )
            stored.append(source)
            warnings += notes
    except BaseException:
        with anyio.CancelScope(shield=True):
            delete_kb(ctx.store, ctx.home, kb.id)
        raise
    return ImportResult(kb=kb, sources=stored, warnings=warnings)
