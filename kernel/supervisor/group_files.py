"""What every kind of sandbox control group shares: reading its event counters, killing its members, and
the reason a reached limit gives (cgroups.py's own groups, systemd_scope.py's scopes)."""

from __future__ import annotations

import contextlib
import os
import signal


def read_counter(folder: str, name: str, key: str) -> int:
    """The value of `key` in a flat-keyed cgroup file such as `pids.events` (0 when unreadable)."""
    with contextlib.suppress(OSError, ValueError), open(os.path.join(folder, name)) as f:
        for line in f:
            field, _, value = line.partition(" ")
            if field == key:
                return int(value)
    return 0


def kill_members(group: str) -> None:
    """SIGKILL every process listed in `group`'s cgroup.procs."""
    with contextlib.suppress(OSError), open(os.path.join(group, "cgroup.procs")) as f:
        for pid in f.read().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)


def limit_reached(
    pids_dir: str, memory_dir: str, memory_events: str, processes: int, memory_bytes: int
) -> str | None:
    """Why a group's processes must end now: a fork refused at the cap, a process killed at the memory
    limit; None while within both."""
    if read_counter(pids_dir, "pids.events", "max"):
        return (
            f"the plugin and its children reached the sandbox's process limit ({processes} "
            "processes and threads, limits.pluginProcesses); the sandbox was ended"
        )
    if read_counter(memory_dir, memory_events, "oom_kill"):
        return (
            f"the plugin and its children reached the sandbox's memory limit "
            f"({memory_bytes >> 20} MB together, limits.pluginMemoryMB); the sandbox was ended"
        )
    return None
