"""Which process holds a store marker, and whether it still runs (the in-flight removals of
knowledge/in_flight.py).

A holder is `<boot id>:<pid>:<start time>` (Linux: the kernel's boot id and the process's start time in
clock ticks since boot, so a recycled pid or a reboot is not mistaken for the holder). Every process that
reads a marker shares the holder's node (the markers are per node, kernel/node.py: one machine, one
artifact folder), so the holder's `/proc` entry is visible to it. Where there is no `/proc`, the holder is
`-:<pid>:-` and only the pid is checked.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_UNKNOWN = "-"


def _boot_id() -> str:
    try:
        return _BOOT_ID.read_text().strip() or _UNKNOWN
    except OSError:
        return _UNKNOWN


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); None when it is
    gone; `-` where there is no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None if Path("/proc/self/stat").exists() else _UNKNOWN
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@functools.cache
def this_process() -> str:
    """This process as a holder (fixed for its life; a forked child is not its parent's holder, but no
    child of the kernel writes markers)."""
    return f"{_boot_id()}:{os.getpid()}:{_start_time(os.getpid()) or _UNKNOWN}"


def alive(holder: str | None) -> bool:
    """Does the process that wrote `holder` still run? False for no holder, a malformed one, another boot."""
    parts = (holder or "").split(":")
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    boot, pid, started = parts[0], int(parts[1]), parts[2]
    if boot != _boot_id():
        return False
    now = _start_time(pid)
    if now is None:
        return False
    if _UNKNOWN in (now, started):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return now == started
