"""Plugin administration for the shells: load the registry from the config, list it, resolve a target.

A target is a registered id, a folder holding `manifest.json`, or a manifest file. A folder or file is
loaded on its own (even when its id is not on the allowlist: it is the author's own tool), into a
registry that holds just that entry. Whether it is allow-listed is the registry's rule
(`allowlist_refusal`: the id bound to its folder), so `id=folder` entries mean the same here as in the
kernel.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
from mrpvm.kernel.config import MANIFESTS_DIR, Config, load_config, wrapper_dirs
from mrpvm.kernel.errors import BadInput, UnknownPluginError
from mrpvm.kernel.registry import (
    ManifestError,
    PluginEntry,
    Registry,
    allowlist_refusal,
    load_manifest,
    parse_allowlist,
)
from mrpvm.protocol.vocab import PLUGIN_TYPES

TYPE_ALIASES = {t.split("-")[0]: t for t in PLUGIN_TYPES} | {
    "plan": "mrp-plan-plugin",
    "planner": "mrp-plan-plugin",
}


class PluginRow(msgspec.Struct, kw_only=True):
    """One line of `mrpvm plugins`."""

    id: str
    type: str
    costClass: str
    usesLLM: bool
    description: str
    source: str  # builtin | wrapper | legacy
    mode: str  # worker | one-shot
    ops: list[str]
    folder: str


class Rejection(msgspec.Struct, kw_only=True):
    path: str
    reason: str


class Target(msgspec.Struct, kw_only=True):
    """What `plugin run/check` works on: the entry, a registry holding it, and how it was found."""

    entry: PluginEntry
    registry: Registry
    from_path: bool
    allowlisted: bool
    refusal: str | None = None  # why the kernel would not load it (when not allowlisted)


def open_registry(environ: dict[str, str] | None = None) -> tuple[Config, Registry]:
    """The effective config and the registry it describes (built-ins + allow-listed wrappers)."""
    config, _ = load_config(environ)
    registry = Registry.load(
        MANIFESTS_DIR,
        wrapper_dirs(config),
        config.engine.pluginAllowlist,
        max_source_bytes=config.engine.limits.maxSourceBytes,
    )
    return config, registry


def normalize_type(plugin_type: str | None) -> str | None:
    """Accept `gs-plugin` or the short `gs`; anything else is a usage error."""
    if plugin_type is None:
        return None
    full = TYPE_ALIASES.get(plugin_type, plugin_type)
    if full not in PLUGIN_TYPES:
        raise BadInput(f"unknown plugin type '{plugin_type}' (one of {', '.join(PLUGIN_TYPES)})")
    return full


def plugin_rows(registry: Registry, plugin_type: str | None = None) -> list[PluginRow]:
    rows = []
    for entry in sorted(registry.list(plugin_type), key=lambda e: (PLUGIN_TYPES.index(e.type), e.id)):
        m = entry.manifest
        rows.append(
            PluginRow(
                id=m.id,
                type=m.type,
                costClass=m.costClass,
                usesLLM=m.usesLLM,
                description=m.description,
                source="builtin" if entry.builtin else ("legacy" if entry.legacy else "wrapper"),
                mode="worker" if m.worker else "one-shot",
                ops=list(m.ops),
                folder=str(entry.folder),
            )
        )
    return rows


def rejections(registry: Registry) -> list[Rejection]:
    return [Rejection(path=str(path), reason=reason) for path, reason in registry.rejected]


def resolve_target(spec: str, registry: Registry, config: Config) -> Target:
    """A folder with manifest.json, a manifest file, or a registered id; raises a one-line error."""
    path = Path(spec)
    manifest_path = path / "manifest.json" if path.is_dir() else path
    if manifest_path.is_file() and manifest_path.suffix == ".json":
        try:
            entry = load_manifest(
                manifest_path, builtin=manifest_path.parent.resolve() == MANIFESTS_DIR.resolve()
            )
        except ManifestError as err:
            raise InvalidManifest(str(err), manifest_path) from None
        refusal = None
        if not entry.builtin:
            rules = parse_allowlist(config.engine.pluginAllowlist)
            refusal = allowlist_refusal(entry.id, entry.folder, rules)
        return Target(
            entry=entry,
            registry=Registry([entry]),
            from_path=True,
            allowlisted=refusal is None,
            refusal=refusal,
        )
    if spec in registry:
        entry = registry.get(spec)
        return Target(entry=entry, registry=Registry([entry]), from_path=False, allowlisted=True)
    if path.is_dir():
        raise BadInput(f"{spec} is a folder without a manifest.json, and no plugin has that id")
    known = ", ".join(sorted(e.id for e in registry.list()))
    rejected = next((reason for _, reason in registry.rejected if f"'{spec}'" in reason), None)
    why = f"; its manifest was rejected: {rejected}" if rejected else f" (known: {known})"
    raise UnknownPluginError(f"no plugin '{spec}' is registered and no such folder exists{why}")


def manifest_path_of(spec: str, registry: Registry) -> Path | None:
    """The manifest file a target names: a folder's manifest.json, a manifest file, a registered id's,
    or the manifest of a rejected wrapper with that id (e.g. one whose binary is not built yet)."""
    path = Path(spec)
    manifest_path = path / "manifest.json" if path.is_dir() else path
    if manifest_path.is_file() and manifest_path.suffix == ".json":
        return manifest_path
    if spec in registry:
        return registry.get(spec).manifest_path
    for rejected, reason in registry.rejected:
        if f"'{spec}'" in reason or rejected.parent.name == spec:
            return rejected
    return None


class InvalidManifest(BadInput):
    """A folder or file given on the command line whose manifest does not load."""

    default_code = "INVALID_MANIFEST"

    def __init__(self, message: str, path: Path):
        super().__init__(message, {"path": str(path)})
        self.path = path
