"""Building a compiled plugin (Go, Rust, ...): the manifest's `build` step, run by the author's tools.

Where the binary lives: in the plugin's own folder, at the manifest's `command` (e.g. `bin/kb-terms-go`),
so the kernel runs it like any other program inside the folder (read-only in the sandbox, as the rest of
the folder). Who builds it: `mrpvm plugin build` always; `mrpvm plugin check` / `plugin run` / `plugin
new` when the binary is missing or older than a file of the folder. Never the kernel at call time nor
the registry (loading must stay fast and side-effect free): a manifest whose binary is missing is
rejected with the command to run.

How: `build.command` + `build.args`, without a shell, in the plugin folder, sandboxed like a plugin
when the sandbox is active but with the folder writable and NO network (dependencies must be vendored,
or none: the standard library), HOME and XDG_CACHE_HOME pointed at `<home>/cache/build/<id>` (Go keeps
its build cache there, so a rebuild is incremental), a deadline of BUILD_TIMEOUT_S. Two builds of one
folder never overlap (a lock on the folder).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import time
from pathlib import Path

import msgspec
from mrpvm.kernel.plugin_command import SHELLS, shell_name, shell_refusal
from mrpvm.protocol.manifest import Manifest

BUILD_TIMEOUT_S = 600.0
SKIPPED_DIRS = {".git", "node_modules", "target", "__pycache__"}


class BuildError(Exception):
    """A build that could not run or failed; the message says why (and the build's last words)."""


class BuildOutcome(msgspec.Struct, kw_only=True):
    plugin: str
    built: bool  # False: the binary was up to date
    command: str
    output: str
    seconds: float = 0.0


def read_manifest(manifest_path: Path) -> Manifest | None:
    try:
        return msgspec.convert(msgspec.json.decode(manifest_path.read_bytes()), Manifest)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, TypeError):
        return None  # the registry's load reports what is wrong with it


def _output(manifest: Manifest, folder: Path) -> Path:
    target = (folder / manifest.command).resolve()
    if "/" not in manifest.command or not target.is_relative_to(folder.resolve()):
        raise BuildError(
            f"{manifest.id}: with `build`, `command` must be a path inside the plugin folder "
            f"(e.g. bin/{manifest.id}), not {manifest.command!r}"
        )
    return target


def stale(folder: Path, output: Path) -> bool:
    """The binary is missing, or a file of the folder is newer than it."""
    try:
        built = output.stat().st_mtime
    except FileNotFoundError:
        return True
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        if Path(root).resolve() == output.parent and output.parent != folder.resolve():
            continue  # the build's own output folder (bin/)
        for name in files:
            with contextlib.suppress(OSError):
                if os.stat(os.path.join(root, name)).st_mtime > built:
                    return True
    return False


def build_plugin(
    manifest_path: Path, *, force: bool = False, home: Path | None = None
) -> BuildOutcome | None:
    """Build the plugin of `manifest_path` if it declares `build` (and, unless `force`, only when stale).

    None when the manifest declares no build (or does not load: the registry says why). Raises BuildError.
    """
    from mrpvm.kernel.config import home_dir
    from mrpvm.kernel.supervisor.process import scrubbed_env
    from mrpvm.kernel.supervisor.sandbox import Sandbox

    manifest = read_manifest(manifest_path)
    if manifest is None or manifest.build is None:
        return None
    folder = manifest_path.parent.resolve()
    output = _output(manifest, folder)
    build = manifest.build
    shown = " ".join([build.command, *build.args])
    if not force and not stale(folder, output):
        return BuildOutcome(plugin=manifest.id, built=False, command=shown, output=str(output))
    program = shutil.which(build.command)
    if Path(build.command).name in SHELLS or (program and shell_name(program)):
        raise BuildError(f"{manifest.id}: {shell_refusal(build.command, Path(build.command).name)}")
    if program is None:
        raise BuildError(
            f"{manifest.id}: the build program '{build.command}' is not on PATH "
            "(Debian: apt-get install golang-go for go, cargo for cargo)"
        )
    home = Path(home) if home is not None else home_dir()
    cache = home / "cache" / "build" / manifest.id
    cache.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox.from_environment()
    argv = sandbox.command(
        [program, *build.args],
        folder,
        llm=False,  # a build gets no network at all (its own namespace, no relay)
        writable=[str(folder), str(cache)] if sandbox.active else [],
    )
    env = scrubbed_env({"HOME": str(cache), "XDG_CACHE_HOME": str(cache), "TMPDIR": "/tmp"})
    lock = os.open(folder, os.O_RDONLY)
    start = time.monotonic()
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and not stale(folder, output):  # built by someone else while we waited
            return BuildOutcome(plugin=manifest.id, built=False, command=shown, output=str(output))
        try:
            proc = subprocess.run(
                argv, cwd=folder, env=env, capture_output=True, timeout=BUILD_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            raise BuildError(f"{manifest.id}: `{shown}` ran past {BUILD_TIMEOUT_S:.0f} s") from None
        except OSError as err:
            raise BuildError(f"{manifest.id}: cannot run `{shown}`: {err}") from None
    finally:
        os.close(lock)
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()[-8:]
        raise BuildError(
            f"{manifest.id}: `{shown}` failed (exit {proc.returncode}): " + " | ".join(said or ["no output"])
        )
    if not output.is_file():
        raise BuildError(f"{manifest.id}: `{shown}` succeeded but did not produce {manifest.command}")
    os.utime(output)  # newer than every source, whatever the toolchain did with the timestamp
    return BuildOutcome(
        plugin=manifest.id, built=True, command=shown, output=str(output), seconds=time.monotonic() - start
    )
