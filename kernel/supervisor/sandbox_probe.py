"""Whether bubblewrap can sandbox plugins here: a real sandbox around `true`, probed once per process.

The probe is two short processes — `bwrap --version` (the label) and bwrap with the plugin sandbox's
namespaces, no capabilities and no network around `true` — ~10–20 ms of waiting on a quiet machine, more on a
busy one, and the kernel needs their answer before it builds a plugin's first command line. `start` begins
them without waiting for them: a one-turn `mrpvm ask` does so right after its early launch, before the
kernel's imports (early_launch.py), otherwise KernelContext.open does before it loads the registry
(`sandbox.probe_early`). `result` waits for the started pair, or starts it when nothing did.
"""

from __future__ import annotations

import subprocess

from .sandbox_binds import _system_binds

MECHANISM = "bubblewrap"
NAMESPACES = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
# bwrap keeps every capability (inside the sandbox's namespaces) for a caller that is real root unless told
# to drop them: a root kernel's plugins could then remount their read-only binds read-write or unmount the
# tmpfs hiding the kernel home. Dropped for everyone, so a plugin never holds one, whoever runs the kernel.
NO_CAPABILITIES = ("--cap-drop", "ALL")
TIMEOUT_S = 10

_started: dict[str, tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]] | str] = {}  # or why not
_results: dict[str, tuple[str, str]] = {}  # collected: the probe runs once per process


def start(bwrap: str) -> None:
    """Start the probe of `bwrap` (once per process)."""
    if bwrap in _started or bwrap in _results:
        return
    sandboxed = [bwrap, *NAMESPACES, *NO_CAPABILITIES, "--unshare-net", "--die-with-parent", *_system_binds()]
    try:
        version = _spawn([bwrap, "--version"])
    except OSError as err:
        _started[bwrap] = f"{bwrap} cannot run: {err}"
        return
    try:
        _started[bwrap] = (version, _spawn([*sandboxed, "--", "true"]))
    except OSError as err:
        version.kill()
        version.wait()
        _started[bwrap] = f"{bwrap} cannot run: {err}"


def _spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def started() -> list[str]:
    """The bwrap programs whose probe was started and not yet collected."""
    return list(_started)


def result(bwrap: str) -> tuple[str, str]:
    """(version label, problem — empty when the sandbox works) of `bwrap`, from its started probe or a new
    one; waits for it."""
    if bwrap not in _results:
        _results[bwrap] = _collect(bwrap)
    return _results[bwrap]


def _collect(bwrap: str) -> tuple[str, str]:
    start(bwrap)
    pair = _started.pop(bwrap)
    if isinstance(pair, str):
        return "", pair
    version, sandboxed = pair
    try:
        label_out, _ = version.communicate(timeout=TIMEOUT_S)
        _, said = sandboxed.communicate(timeout=TIMEOUT_S)
    except subprocess.SubprocessError as err:
        for process in pair:
            process.kill()
            process.wait()
        return "", f"{bwrap} cannot run: {err}"
    label = label_out.decode(errors="replace").strip() or MECHANISM
    if sandboxed.returncode != 0:
        last = said.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {sandboxed.returncode}"]
        return label, f"bubblewrap cannot create the namespaces here: {last[0]}"
    return label, ""
