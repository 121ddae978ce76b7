"""The plugin registry: loads and validates manifests (protocol/SPEC.md §7).

Built-ins come from `manifests/*.json`. External wrappers come from `<folder>/<name>/manifest.json` for
each configured wrapper folder, and load only when the allowlist names their id for that folder. No
plugin starts through a shell. A manifest that breaks a rule is rejected with a reason (kept in
`Registry.rejected`), never half-loaded.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
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
    """A manifest that cannot be loaded; the message names the file and the rule (`reason`: the rule only)."""

    def __init__(self, path: Path, message: str):
        self.path, self.reason = path, message
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


# Shells, and launchers that run a command given in their arguments (`timeout 5 sh -c ...`, `nice sh`,
# `env -S`): a plugin never starts through one, so no shell ever parses a manifest's arguments.
SHELLS = frozenset(
    {"sh", "bash", "dash", "ash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "lksh", "csh", "tcsh", "fish"}
    | {"rbash", "yash", "posh", "elvish", "nu", "xonsh", "busybox", "toybox", "pwsh", "powershell", "cmd"}
    | {"cmd.exe"}
)
LAUNCHERS = frozenset(
    {"env", "xargs", "nohup", "setsid", "timeout", "nice", "ionice", "stdbuf", "chrt", "taskset", "flock"}
    | {"prlimit", "setpriv", "unshare", "nsenter", "chroot", "runuser", "su", "sudo", "doas", "script"}
    | {"watch", "time", "strace", "ltrace", "systemd-run", "firejail", "bwrap", "parallel", "expect"}
)
RUNNERS = SHELLS | LAUNCHERS
HEAD_BYTES = 4096


def shell_refusal(command: str, shell: str) -> str:
    return (
        f"command '{command}' runs through the shell '{shell}' (a shell or a command launcher): plugins start "
        "without a shell; "
        "name the interpreter (python, node, ...) or a binary instead"
    )


@functools.cache
def _runner_files() -> dict[int, list[tuple[str, str]]]:
    """size -> (path, name) of every shell and launcher binary installed here, so that a copy or hard link
    of one under another name (dash copied to `runner`) is recognised by what it is (stat only: contents
    are compared when a program has a runner's exact size)."""
    found: dict[int, list[tuple[str, str]]] = {}
    folders = {"/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin"}
    folders.update(p for p in (os.environ.get("PATH") or "").split(os.pathsep) if p)
    for name in sorted(RUNNERS):
        for folder in folders:
            with contextlib.suppress(OSError):
                info = os.stat(os.path.join(folder, name))
                path = os.path.realpath(os.path.join(folder, name))
                if stat.S_ISREG(info.st_mode) and (path, name) not in found.get(info.st_size, []):
                    found.setdefault(info.st_size, []).append((path, name))
    return found


@functools.cache
def _digest(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read(64 << 20)).hexdigest()
    except OSError:
        return ""


def _same_as_a_runner(program: str) -> str | None:
    try:
        size = os.stat(program).st_size
    except OSError:
        return None
    candidates = _runner_files().get(size, [])
    if not candidates:
        return None
    mine = _digest(program)
    return next((name for path, name in candidates if mine and _digest(path) == mine), None)


def _shebang_runner(head: bytes) -> str | None:
    """The shell or launcher a `#!` line names (`#!/bin/sh`, `#!/usr/bin/env bash`, `#!/usr/bin/env -S ...`)."""
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    name = Path(words[0]).name
    if name == "env":
        rest = words[1:]
        if any(w == "-S" or w.startswith(("-S", "--split-string")) for w in rest):
            return "env -S"  # env parses the rest of the line as a command line
        rest = [w for w in rest if not w.startswith("-") and "=" not in w]
        name = Path(rest[0]).name if rest else "env"
    return name if name in RUNNERS else None


def shell_name(program: str) -> str | None:
    """The shell or launcher `program` is: by its name or the file it resolves to, by its contents (a copy
    of one under another name), or the one its `#!` line names."""
    for name in (Path(program).name, Path(program).resolve().name):
        if name in RUNNERS:
            return name
    copy = _same_as_a_runner(str(Path(program).resolve()))
    if copy is not None:
        return copy
    try:
        with open(program, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    return _shebang_runner(head) if head.startswith(b"#!") else None


def resolve_argv(
    manifest: Manifest, folder: Path, manifest_path: Path, search_path: str | None = None
) -> list[str]:
    """The argv to start: `python` is the kernel's own interpreter; paths must stay inside the folder."""
    command = manifest.command.strip()
    if not command:
        raise ManifestError(manifest_path, "`command` is empty")
    if Path(command).name in RUNNERS:
        raise ManifestError(manifest_path, shell_refusal(command, Path(command).name))
    if command in ("python", "python3"):
        program = sys.executable
    elif "/" in command:
        target = (folder / command) if not os.path.isabs(command) else Path(command)
        if not _inside(target, folder):
            bare = Path(command).name
            if os.path.isabs(command) and shutil.which(bare, path=search_path or os.environ.get("PATH")):
                raise ManifestError(
                    manifest_path,
                    f"command '{command}' escapes the plugin folder {folder}: an interpreter or program on "
                    f'PATH is named bare — write "command": "{bare}"',
                )
            raise ManifestError(
                manifest_path,
                f"command '{command}' escapes the plugin folder {folder}: name a program on PATH bare "
                '("perl", "node") or a file inside the folder ("bin/plugin")',
            )
        if not target.is_file():
            if manifest.build is not None:
                build = " ".join([manifest.build.command, *manifest.build.args])
                raise ManifestError(
                    manifest_path,
                    f"command '{command}' is not built yet: run `mrpvm plugin build {folder}` (it runs `{build}`)",
                )
            raise ManifestError(manifest_path, f"command '{command}' does not exist in {folder}")
        program = str(target.resolve())
    else:
        found = shutil.which(command, path=search_path if search_path is not None else os.environ.get("PATH"))
        if found is None:
            raise ManifestError(manifest_path, f"command '{command}' is not on PATH")
        program = found
    shell = shell_name(program) if program != sys.executable else None
    if shell is not None:
        raise ManifestError(manifest_path, shell_refusal(command, shell))
    for arg in manifest.args:
        if _looks_like_path(arg) and not _inside(folder / arg, folder):
            raise ManifestError(manifest_path, f"argument '{arg}' escapes the plugin folder {folder}")
    return [program, *manifest.args]


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
