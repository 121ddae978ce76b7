"""Session units kept by the text they came from: a repeated `mrpvm ask --source FILE` skips the sd-plugin.

`load_session_context` (ingest.py) normalizes a `--source` file into session units on every ask, and the
file is most often the one the last ask read. The units a deterministic sd-plugin made of a text are kept
in `<home>/cache/session-units/<key>.bin`; a later load of the same text by the same plugin reads them back
instead of calling it. The key is a digest of the request without its source id (the text, its name, type,
scope…) and of the plugin as it would run: its manifest, command, folder, its worker's environment (the
MRPVM_* settings among it), the interpreter's version, and the size and modification time of every file
of its folder and of the plugins and protocol packages (the code a built-in plugin runs, the SDK a wrapper
may import). A changed file, plugin, setting or code is another key: it is normalized again.

A load gets a fresh source id (the session may hold the same file twice); the kept tree is re-keyed to it:
the plugin's ids that derive from the source id (the id itself, `<sourceId>::…`) are renamed, nothing else
(the units' times stay those of the normalize that made them). So only a tree whose every id derives from
its source id, and that names it nowhere else, is kept; and only a plugin that calls no LLM (`usesLLM`
false, `maxLLMCalls` 0), whose units depend on its input alone.

An entry is a digest of its body, then its body (MessagePack); one that does not verify, decode or match
its key is ignored (the normalize that follows rewrites it). At most MAX_ENTRIES entries, the least recently
used go first. Any failure (an unwritable home, a full disk) only means normalizing: the cache never fails
a load.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread
import msgspec
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import NormalizePayload

from .normalize import Progress, check_sd_plugin, normalize_text

if TYPE_CHECKING:
    from mrpvm.kernel.context import KernelContext
    from mrpvm.kernel.registry import PluginEntry

FOLDER = Path("cache") / "session-units"
FORMAT = 1  # bump when an entry's body or the key's parts change
MAX_ENTRIES = 32
MAX_CODE_FILES = 5000  # a plugin folder with more files is not identified (its units are not kept)
CODE_ROOTS = (PROJECT_ROOT / "plugins", PROJECT_ROOT / "protocol")
_DIGEST = 32
_REFS = ("parentUnitIds", "childUnitIds", "derivedFromUnitIds")


class _Entry(msgspec.Struct, kw_only=True):
    format: int
    key: str
    sourceId: str
    units: list[KnowledgeUnit]
    warnings: list[str]


async def normalized(
    ctx: KernelContext,
    sd_plugin: str,
    source: NormalizePayload,
    *,
    session_id: str,
    progress: Progress | None,
) -> tuple[list[KnowledgeUnit], list[str]]:
    """`source`'s units and warnings: the kept ones re-keyed to its source id, else `normalize_text`'s
    (then kept)."""
    entry = check_sd_plugin(ctx, sd_plugin)
    key = await anyio.to_thread.run_sync(cache_key, entry, source, ctx.supervisor.environment)
    kept = await anyio.to_thread.run_sync(read, ctx.home, key, source.sourceId) if key else None
    if kept is not None:
        if progress:
            total = len(source.text.encode("utf-8", "surrogatepass"))
            progress(total, total)
        return kept
    units, _, warnings = await normalize_text(
        ctx, sd_plugin, source, session_id=session_id, progress=progress
    )
    if key:
        await anyio.to_thread.run_sync(write, ctx.home, key, source.sourceId, units, warnings)
    return units, warnings


def cache_key(entry: PluginEntry, source: NormalizePayload, environ: dict[str, str]) -> str | None:
    """The key of `source` normalized by `entry` in a worker whose environment is `environ`; None when its
    units are not kept (an LLM plugin, a folder too large to identify)."""
    if entry.manifest.usesLLM or entry.manifest.maxLLMCalls > 0:
        return None
    code = _code_identity([entry.folder, *CODE_ROOTS])
    if code is None:
        return None
    settings = sorted(environ.items())
    parts = (
        FORMAT,
        sys.version,
        msgspec.json.encode(entry.manifest).decode(),
        entry.argv,
        str(entry.folder),
        settings,
        code,
        msgspec.json.encode(msgspec.structs.replace(source, sourceId="")).decode(),
    )
    return hashlib.blake2b(msgspec.json.encode(parts), digest_size=20).hexdigest()


def _code_identity(roots: list[Path]) -> str | None:
    """A digest of every file's path, size and modification time under `roots` (caches and hidden folders
    aside); None past MAX_CODE_FILES."""
    seen: list[str] = []
    for root in dict.fromkeys(roots):
        stack = [root]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    for item in entries:
                        if item.name.startswith(".") or item.name == "__pycache__":
                            continue
                        if item.is_dir(follow_symlinks=False):
                            stack.append(Path(item.path))
                        elif item.is_file():
                            info = item.stat()
                            seen.append(f"{item.path}\0{info.st_size}\0{info.st_mtime_ns}")
            except OSError:
                continue
            if len(seen) > MAX_CODE_FILES:
                return None
    return hashlib.blake2b("\n".join(sorted(seen)).encode("utf-8", "surrogateescape")).hexdigest()


def read(home: Path, key: str, source_id: str) -> tuple[list[KnowledgeUnit], list[str]] | None:
    """The kept units of `key` re-keyed to `source_id`, and the warnings of their normalize; None when
    there is no sound entry."""
    path = home / FOLDER / f"{key}.bin"
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    body = blob[_DIGEST:]
    if len(blob) <= _DIGEST or hashlib.blake2b(body, digest_size=_DIGEST).digest() != blob[:_DIGEST]:
        return None
    try:
        kept = msgspec.msgpack.decode(body, type=_Entry)
    except msgspec.DecodeError:  # ValidationError included
        return None
    if kept.format != FORMAT or kept.key != key or not kept.units:
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: pruned last
    return [_rekey(u, kept.sourceId, source_id) for u in kept.units], kept.warnings


def write(home: Path, key: str, source_id: str, units: list[KnowledgeUnit], warnings: list[str]) -> bool:
    """Keep a normalize's units under `key` (atomically, owner-only); False when they are not kept (ids
    that do not derive from `source_id`, or any failure)."""
    if not units or not _derived(units, source_id):
        return False
    body = msgspec.msgpack.encode(
        _Entry(format=FORMAT, key=key, sourceId=source_id, units=units, warnings=warnings)
    )
    folder = home / FOLDER
    part = folder / f".{key}.{os.getpid()}.part"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(hashlib.blake2b(body, digest_size=_DIGEST).digest() + body)
        os.replace(part, folder / f"{key}.bin")
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink()
        return False
    _prune(folder)
    return True


def _prune(folder: Path) -> None:
    try:
        entries = sorted(folder.glob("*.bin"), key=lambda p: p.stat().st_mtime_ns)
        for old in entries[: max(0, len(entries) - MAX_ENTRIES)]:
            old.unlink()
    except OSError:
        return


def _derived(units: list[KnowledgeUnit], source_id: str) -> bool:
    """Every id of the tree is `source_id` or starts with `<source_id>::`, and no other field names it."""
    named = 0
    for u in units:
        ids = [u.id, u.sourceId, u.chunkId, *(r for field in _REFS for r in getattr(u, field))]
        if not all(_derives(i, source_id) for i in ids):
            return False
        named += len(ids)
    return msgspec.json.encode(units).count(source_id.encode()) == named


def _derives(unit_id: str, source_id: str) -> bool:
    return unit_id == source_id or unit_id.startswith(f"{source_id}::")


def _rekey(unit: KnowledgeUnit, old: str, new: str) -> KnowledgeUnit:
    def one(unit_id: str) -> str:
        return new + unit_id[len(old) :]

    refs = {field: [one(r) for r in getattr(unit, field)] for field in _REFS}
    return msgspec.structs.replace(unit, id=one(unit.id), sourceId=new, chunkId=one(unit.chunkId), **refs)
