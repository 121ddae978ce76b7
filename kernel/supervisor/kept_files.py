"""Kernel files re-read through one kept descriptor: `pread` from offset 0 instead of open/read/close.

A cgroup event counter (`pids.events`) or a process's children list (`/proc/PID/task/PID/children`)
renders its current contents on every read from the start, so one descriptor opened at the first read
answers every later one. The daemon re-reads these for every running sandboxed worker every few tens of
milliseconds (cgroups.WATCH_INTERVAL_S, worker.SWEEP_INTERVAL_S): an open/read/close round costs ~25 µs
of Python and system calls, a `pread` ~2 µs. A descriptor of a /proc file stays bound to the process it
was opened for: once that process is gone it reads empty, never a later process given the same pid.
"""

from __future__ import annotations

import contextlib
import os


class KeptFiles:
    """Descriptors kept by path; `close()` (the owner's end) closes them, and a read after it opens the
    file for that read only."""

    __slots__ = ("_fds", "_closed")

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self._closed = False

    def read(self, path: str) -> bytes | None:
        """The file's current contents (up to 64 KB); None when it cannot be opened or read."""
        fd = self._fds.get(path)
        if fd is None:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
            if self._closed:
                try:
                    return _pread(fd)
                finally:
                    os.close(fd)
            self._fds[path] = fd
        return _pread(fd)

    def close(self) -> None:
        self._closed = True
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)


def _pread(fd: int) -> bytes | None:
    try:
        return os.pread(fd, 65536, 0)
    except OSError:
        return None
