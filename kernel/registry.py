"""The plugin registry: loads and validates manifests (protocol/SPEC.md §7).

Built-ins come from `manifests/*.json`. External wrappers come from `<folder>/<name>/manifest.json` for
each configured wrapper folder, and load only when the allowlist names their id for that folder. No
plugin starts through a shell. A manifest that breaks a rule is rejected with a reason (kept in
`Registry.rejected`), never half-loaded.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

import msgspec
from mrpvm.protocol.envelope import PlannerHints
from mrpvm.protocol.manifest import Manifest
from mrpvm.protocol.vocab import (
    INGEST_REQUEST_FACTOR,
    INGEST_REQUEST_OVERHEAD,
    PLUGIN_TYPES,
    ingest_request_bytes,
)

from .errors import UnknownPluginError
from .plugin_command import ManifestError, resolve_argv

LEGACY_HINTS = PlannerHints(
    expectedLatencyMs=1000,
    expectedLLMCalls=0,
    relativeCost=0.5,
    supportedActs=[],
    topicTags=[],
    preferredDepth="medium",
    fallbackRole="helper",
    evidenceStyle=[],
    confidenceWhenMatched=0.5,
)


def _reason(err: msgspec.ValidationError, data: dict) -> str:
    """msgspec's message, naming the plugin type (or the known types when the type is wrong)."""
    text = str(err)
    if text.endswith("`$.type`") or text.endswith("field `type`"):
        return f"{text}: the type is one of {', '.join(PLUGIN_TYPES)}"
    return f"{text} (a {data['type']} manifest)"


class PluginEntry(msgspec.Struct, kw_only=True):
    """A loaded manifest, where it lives, and the argv the supervisor starts."""

    manifest: Manifest
    folder: Path
    manifest_path: Path
    builtin: bool
    legacy: bool = False
    argv: list[str] = []

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def type(self) -> str:
        return self.manifest.type


MAX_MANIFEST_BYTES = 1 << 20  # a manifest is a few KB; anything near this is not one


def read_manifest_bytes(path: Path) -> bytes:
    """The bytes of a manifest that is a regular file of at most MAX_MANIFEST_BYTES. Anything else (a FIFO
    that would block the reader, a symlink to a device such as /dev/zero, a huge file) is refused before
    it is read: opened without blocking and checked with fstat (what a symlink leads to), so one bad entry
    in a wrapper folder cannot hang or exhaust a command that loads the registry."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise ManifestError(path, f"cannot read: {err.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ManifestError(path, "not a regular file (a manifest must be a plain JSON file)")
        if info.st_size > MAX_MANIFEST_BYTES:
            raise ManifestError(
                path, f"{info.st_size} bytes: larger than the {MAX_MANIFEST_BYTES}-byte limit for a manifest"
            )
        raw = f.read(MAX_MANIFEST_BYTES + 1)
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ManifestError(path, f"larger than the {MAX_MANIFEST_BYTES}-byte limit for a manifest")
    return raw


def load_manifest(path: Path, *, builtin: bool, allowed: dict[str, str] | None = None) -> PluginEntry:
    """Read and validate one manifest file; with `allowed` (the parsed allowlist), a wrapper it does not
    admit is refused before its command is even looked at."""
    raw = read_manifest_bytes(path)
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as err:
        raise ManifestError(path, f"not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise ManifestError(path, "a manifest is a JSON object")
    legacy = "type" not in data and "id" not in data and "name" in data
    if legacy:
        data = {
            "id": data["name"],
            "type": "gs-plugin",
            "description": "Legacy helper wrapper (DS016, no type): treated as a helper gs-plugin.",
            "plannerHints": msgspec.to_builtins(LEGACY_HINTS),
            **data,
        }
        if "timeout" in data and "timeoutMs" not in data:
            data["timeoutMs"] = data["timeout"]
    try:  # every rule of the manifest itself is a constraint of protocol/manifest.py (and its JSON Schema)
        manifest: Manifest = msgspec.convert(data, Manifest)
    except msgspec.ValidationError as err:
        raise ManifestError(path, _reason(err, data)) from None
    folder = path.parent
    if allowed is not None:
        refusal = allowlist_refusal(manifest.id, folder, allowed)
        if refusal:
            raise ManifestError(path, refusal)
    argv = resolve_argv(manifest, folder, path)
    return PluginEntry(
        manifest=manifest, folder=folder, manifest_path=path, builtin=builtin, legacy=legacy, argv=argv
    )


def parse_allowlist(entries: Iterable[str]) -> dict[str, str]:
    """Allowlist entries by id: `id` (the wrapper folder named `id`) or `id=folder`, where folder is another
    folder name inside a wrapper folder, or an absolute path."""
    rules: dict[str, str] = {}
    for raw in entries:
        plugin_id, sep, folder = raw.strip().partition("=")
        plugin_id, folder = plugin_id.strip(), folder.strip()
        if plugin_id:
            rules[plugin_id] = folder if sep and folder else plugin_id
    return rules


def allowlist_refusal(plugin_id: str, folder: Path, rules: dict[str, str]) -> str | None:
    """Why the wrapper `plugin_id` found in `folder` may not load, or None.

    The allowlist binds an id to a folder: a manifest elsewhere that claims an allow-listed id (a copy,
    an impostor dropped into a wrapper folder) is refused.
    """
    bound = rules.get(plugin_id)
    if bound is None:
        return f"wrapper '{plugin_id}' is not on the plugin allowlist"
    absolute = os.path.isabs(bound)
    if (folder.resolve() != Path(bound).resolve()) if absolute else (folder.name != bound):
        return (
            f"wrapper '{plugin_id}' is allow-listed for the folder '{bound}', not {folder}; "
            f"add '{plugin_id}={folder}' to the allowlist to load it from here"
        )
    return None


def size_warning(entry: PluginEntry, max_source_bytes: int) -> str | None:
    """Why a kb-plugin's `maxInputSizeBytes` cannot take the ingest of a source of `max_source_bytes`
    (engine.limits.maxSourceBytes), naming the manifest field and the value it needs; None when it can."""
    manifest = entry.manifest
    if entry.type != "kb-plugin" or "onSourceText" not in manifest.ops:
        return None
    need = ingest_request_bytes(max_source_bytes)
    if manifest.maxInputSizeBytes >= need:
        return None
    fits = max(0, (manifest.maxInputSizeBytes - INGEST_REQUEST_OVERHEAD) // INGEST_REQUEST_FACTOR)
    return (
        f"{entry.id}: maxInputSizeBytes ({manifest.maxInputSizeBytes}) in {entry.manifest_path} is below the "
        f"{need} bytes an ingest request needs for a source of engine.limits.maxSourceBytes "
        f"({max_source_bytes}); sources over about {fits} bytes will not reach its index — raise "
        f"maxInputSizeBytes to at least {need} (protocol/SPEC.md §7, 'Sizing a kb-plugin's input')"
    )


class Registry:
    """Every loadable plugin by id; `rejected` keeps (path, reason) for every manifest refused."""

    def __init__(self, entries: Iterable[PluginEntry] = (), rejected: Iterable[tuple[Path, str]] = ()):
        self._entries: dict[str, PluginEntry] = {}
        self.rejected: list[tuple[Path, str]] = list(rejected)
        self.warnings: list[str] = []  # loaded, but something will not work as configured (size_warning)
        for entry in entries:
            self.add(entry)

    def add(self, entry: PluginEntry) -> None:
        if entry.id in self._entries:
            raise ManifestError(entry.manifest_path, f"duplicate plugin id '{entry.id}'")
        self._entries[entry.id] = entry

    @classmethod
    def load(
        cls,
        manifests_dir: Path,
        wrapper_dirs: Iterable[Path] = (),
        allowlist: Iterable[str] = (),
        max_source_bytes: int | None = None,
    ) -> Registry:
        """Built-ins from `manifests_dir`, then the allow-listed wrappers (see `allowlist_refusal`); with
        `max_source_bytes`, a warning for every kb-plugin too small for such a source (`size_warning`)."""
        registry = cls()
        allowed = parse_allowlist(allowlist)
        for path in sorted(manifests_dir.glob("*.json")):
            registry._try_add(path, builtin=True, allowed=None)
        for folder in wrapper_dirs:
            if not folder.is_dir():
                registry.rejected.append((folder, "wrapper folder does not exist"))
                continue
            for path in sorted(folder.glob("*/manifest.json")):
                registry._try_add(path, builtin=False, allowed=allowed)
        if max_source_bytes is not None:
            found = (size_warning(e, max_source_bytes) for e in registry.list("kb-plugin"))
            registry.warnings = [w for w in found if w]
        return registry

    def _try_add(self, path: Path, *, builtin: bool, allowed: dict[str, str] | None) -> None:
        try:
            self.add(load_manifest(path, builtin=builtin, allowed=allowed))
        except ManifestError as err:
            self.rejected.append((path, err.reason))

    def get(self, plugin_id: str, plugin_type: str | None = None) -> PluginEntry:
        entry = self._entries.get(plugin_id)
        if entry is None or (plugin_type is not None and entry.type != plugin_type):
            kind = f" of type {plugin_type}" if plugin_type else ""
            raise UnknownPluginError(
                f"no plugin '{plugin_id}'{kind} is registered", {"plugin": plugin_id, "type": plugin_type}
            )
        return entry

    def __contains__(self, plugin_id: str) -> bool:
        return plugin_id in self._entries

    def list(self, plugin_type: str | None = None) -> list[PluginEntry]:
        return [e for e in self._entries.values() if plugin_type is None or e.type == plugin_type]


_announced: set[str] = set()


def announce_registry(registry: Registry) -> None:
    """Say each registry warning once per process, on stderr, when a kernel loads the registry."""
    for warning in registry.warnings:
        if warning not in _announced:
            _announced.add(warning)
            print(f"mrpvm: warning: {warning}", file=sys.stderr, flush=True)
