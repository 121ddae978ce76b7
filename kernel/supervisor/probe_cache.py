"""bubblewrap's positive probe kept in the kernel home, so the next kernel process skips it.

`sandbox._probe` starts two short processes (`bwrap --version`, then a real sandbox around `true`): 11–38 ms
of waiting on a busy machine that a one-turn `mrpvm ask` pays before its first worker call. The answer only
changes when what it depends on changes, so a probe that found the sandbox working is kept in
`<home>/run/sandbox-probe.json` with a fingerprint of those conditions, and `load` gives it back only while
the fingerprint is the same:

- the bwrap binary's identity: the path found on PATH, its real path, and its file's device, inode, size,
  mode, owner, mtime and ctime (an upgrade, a replaced or re-linked binary, a changed setuid bit);
- the machine and the process's place on it: the boot id (a new kernel or its sysctls' reset), the
  user-namespace sysctls, the user and mount namespaces this process is in, its effective uid;
- the probe's own command line (the kernel's namespaces, binds and flags: a new kernel version's probe).

A probe that failed is never kept (the kernel says why at every start, as without the cache). A kept probe
that has gone stale in some way the fingerprint misses fails closed: the sandboxed workers fail to start
with bubblewrap's message; plugins never run unsandboxed because of it — and the supervisor then removes the
record (`forget`, when a sandboxed process's stderr carries bubblewrap's own "bwrap: " error), so the next
process probes again and says why the sandbox does not work. Like early_launch's record, the file is
written by the kernel (mode 0600) and read only when this user owns it and nobody else can write it.
"""

from __future__ import annotations

import contextlib
import os

from . import home_records

RECORD = os.path.join("run", "sandbox-probe.json")
VERSION = 1
SYSCTLS = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/kernel/random/boot_id",
)
NAMESPACES = ("/proc/self/ns/user", "/proc/self/ns/mnt")


def fingerprint(bwrap: str, probe_argv: list[str]) -> dict[str, object] | None:
    """What the probe's answer depends on, or None when the binary cannot be looked at."""
    try:
        meta = os.stat(bwrap)
    except OSError:
        return None
    identity = [meta.st_dev, meta.st_ino, meta.st_size, meta.st_mode, meta.st_uid, meta.st_mtime_ns]
    identity.append(meta.st_ctime_ns)
    machine: dict[str, str | None] = {}
    for path in SYSCTLS:
        try:
            with open(path) as f:
                machine[path] = f.read().strip()
        except OSError:
            machine[path] = None
    for path in NAMESPACES:
        try:
            machine[path] = os.readlink(path)
        except OSError:
            machine[path] = None
    return {
        "bwrap": bwrap,
        "real": os.path.realpath(bwrap),
        "file": identity,
        "machine": machine,
        "euid": os.geteuid(),
        "argv": probe_argv,
    }


def load(home: str, key: dict[str, object] | None) -> str | None:
    """The bubblewrap label of a kept positive probe with this fingerprint, else None."""
    if key is None:
        return None
    data = home_records.read(home, RECORD, VERSION)
    if data is None or data.get("key") != key:
        return None
    label = data.get("label")
    return label if isinstance(label, str) and label else None


def keep(home: str, key: dict[str, object] | None, label: str) -> None:
    """Keep a positive probe (`label`: bwrap's version line) for the next process; written atomically."""
    if key is None or not label:
        return
    home_records.write(home, RECORD, {"version": VERSION, "key": key, "label": label})


BWRAP_SAID = b"bwrap: "  # how bubblewrap starts every error it reports before it runs the sandboxed program


def failed_in_bwrap(stderr: bytes) -> bool:
    """Whether a sandboxed process's stderr holds bubblewrap's own error (the sandbox could not be set up)."""
    return any(line.startswith(BWRAP_SAID) for line in stderr.splitlines())


def forget(home: str) -> None:
    """Remove the kept probe: a sandbox it vouched for failed to start, so the next process probes again."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(home, RECORD))
