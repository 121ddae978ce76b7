"""What every kind of sandbox control group shares: reading its event counters, killing its members, and
the reason a reached limit gives (cgroups.py's own groups, systemd_scope.py's scopes)."""

from __future__ import annotations

import contextlib
import os
import signal

from .kept_files import KeptFiles


def _value(data: bytes, key: bytes) -> int:
    for line in data.split(b"\n"):
        field, _, value = line.partition(b" ")
        if field == key:
            with contextlib.suppress(ValueError):
                return int(value)
            return 0
    return 0


class EventCounters:
    """One group's event-counter files (`pids.events`, `memory.events`, ...), each opened once and re-read
    from offset 0 (kept_files.py).

    Every running sandboxed process is checked every cgroups.WATCH_INTERVAL_S: two open/read/close rounds
    per check made up a few percent of a busy daemon's CPU; one `pread` each is the same answer. `close()`
    (the group's release) closes the descriptors; a read after it opens the file for that read only."""

    __slots__ = ("_files",)

    def __init__(self) -> None:
        self._files = KeptFiles()

    def read(self, folder: str, name: str, key: str) -> int:
        """The value of `key` in a flat-keyed file such as `pids.events` (0 when unreadable)."""
        data = self._files.read(os.path.join(folder, name))
        return 0 if data is None else _value(data, key.encode())

    def close(self) -> None:
        self._files.close()


def kill_members(group: str) -> None:
    """SIGKILL every process listed in `group`'s cgroup.procs."""
    with contextlib.suppress(OSError), open(os.path.join(group, "cgroup.procs")) as f:
        for pid in f.read().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)


def limit_reached(
    counters: EventCounters,
    pids_dir: str,
    memory_dir: str,
    memory_events: str,
    processes: int,
    memory_bytes: int,
) -> str | None:
    """Why a group's processes must end now: a fork refused at the cap, a process killed at the memory
    limit; None while within both."""
    if counters.read(pids_dir, "pids.events", "max"):
        return (
            f"the plugin and its children reached the sandbox's process limit ({processes} "
            "processes and threads, limits.pluginProcesses); the sandbox was ended"
        )
    if counters.read(memory_dir, memory_events, "oom_kill"):
        return (
            f"the plugin and its children reached the sandbox's memory limit "
            f"({memory_bytes >> 20} MB together, limits.pluginMemoryMB); the sandbox was ended"
        )
    return None
