"""The plugin registry: loads and validates manifests (protocol/SPEC.md §7).

Built-ins come from `manifests/*.json`. External wrappers come from `<folder>/<name>/manifest.json` for
each configured wrapper folder, and load only when their id is on the allowlist. A manifest that
breaks a rule is rejected with a reason (kept in `Registry.rejected`), never half-loaded.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import msgspec
from mrpvm.protocol.envelope import PlannerHints
from mrpvm.protocol.manifest import Manifest
from mrpvm.protocol.vocab import PLUGIN_TYPES

from .errors import UnknownPluginError

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


class ManifestError(ValueError):
    """A manifest that cannot be loaded; the message names the file and the rule."""

    def __init__(self, path: Path, message: str):
        self.path = path
        super().__init__(f"{path}: {message}")


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


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _looks_like_path(arg: str) -> bool:
    return os.path.isabs(arg) or ".." in Path(arg).parts


def resolve_argv(
    manifest: Manifest, folder: Path, manifest_path: Path, search_path: str | None = None
) -> list[str]:
    """The argv to start: `python` is the kernel's own interpreter; paths must stay inside the folder."""
    command = manifest.command.strip()
    if not command:
        raise ManifestError(manifest_path, "`command` is empty")
    if command in ("python", "python3"):
        program = sys.executable
    elif "/" in command:
        target = (folder / command) if not os.path.isabs(command) else Path(command)
        if not _inside(target, folder):
            raise ManifestError(manifest_path, f"command '{command}' escapes the plugin folder {folder}")
        if not target.is_file():
            raise ManifestError(manifest_path, f"command '{command}' does not exist in {folder}")
        program = str(target.resolve())
    else:
        found = shutil.which(command, path=search_path if search_path is not None else os.environ.get("PATH"))
        if found is None:
            raise ManifestError(manifest_path, f"command '{command}' is not on PATH")
        program = found
    for arg in manifest.args:
        if _looks_like_path(arg) and not _inside(folder / arg, folder):
            raise ManifestError(manifest_path, f"argument '{arg}' escapes the plugin folder {folder}")
    return [program, *manifest.args]


def load_manifest(path: Path, *, builtin: bool) -> PluginEntry:
    """Read and validate one manifest file."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ManifestError(path, f"cannot read: {err.strerror}") from None
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
    argv = resolve_argv(manifest, folder, path)
    return PluginEntry(
        manifest=manifest, folder=folder, manifest_path=path, builtin=builtin, legacy=legacy, argv=argv
    )


class Registry:
    """Every loadable plugin by id; `rejected` keeps (path, reason) for every manifest refused."""

    def __init__(self, entries: Iterable[PluginEntry] = (), rejected: Iterable[tuple[Path, str]] = ()):
        self._entries: dict[str, PluginEntry] = {}
        self.rejected: list[tuple[Path, str]] = list(rejected)
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
    ) -> Registry:
        registry = cls()
        allowed = set(allowlist)
        for path in sorted(manifests_dir.glob("*.json")):
            registry._try_add(path, builtin=True, allowed=None)
        for folder in wrapper_dirs:
            if not folder.is_dir():
                registry.rejected.append((folder, "wrapper folder does not exist"))
                continue
            for path in sorted(folder.glob("*/manifest.json")):
                registry._try_add(path, builtin=False, allowed=allowed)
        return registry

    def _try_add(self, path: Path, *, builtin: bool, allowed: set[str] | None) -> None:
        try:
            entry = load_manifest(path, builtin=builtin)
            if allowed is not None and entry.id not in allowed:
                raise ManifestError(path, f"wrapper '{entry.id}' is not on the plugin allowlist")
            self.add(entry)
        except ManifestError as err:
            self.rejected.append((path, str(err)))

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
