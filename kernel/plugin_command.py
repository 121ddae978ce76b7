"""How a manifest's `command` becomes the argv the supervisor starts (protocol/SPEC.md §7): `python` is the
kernel's own interpreter, paths stay inside the plugin folder, and no plugin starts through a shell or a
launcher (a program is also recognised by its content: a copy of a shell, a script whose #! names one).
Entry: `resolve_argv`; `ManifestError` is what the registry rejects a manifest with."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import stat
import sys
from pathlib import Path

from mrpvm.protocol.manifest import Manifest


class ManifestError(ValueError):
    """A manifest that cannot be loaded; the message names the file and the rule (`reason`: the rule only)."""

    def __init__(self, path: Path, message: str):
        self.path, self.reason = path, message
        super().__init__(f"{path}: {message}")


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
