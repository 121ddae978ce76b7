"""`mrpvm plugin logs`: read a plugin's log (`<home>/logs/<id>.log` and its rotated files), or follow it.

The kernel writes the logs (kernel/supervisor/plugin_log.py); this module only reads them. Following
survives rotation: when the file is replaced, the rest of the old one is read, then the new one from its
start.
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

from mrpvm.kernel.errors import BadInput
from mrpvm.kernel.supervisor.plugin_log import KEEP, log_path

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
POLL_S = 0.2


def log_files(folder: Path, plugin_id: str) -> list[Path]:
    """The plugin's log files, oldest first (rotated ones, then the current one)."""
    if not _ID.match(plugin_id):
        raise BadInput(f"'{plugin_id}' is not a plugin id (letters, digits, '.', '_', '-')")
    current = log_path(folder, plugin_id)
    rotated = [current.with_name(f"{current.name}.{n}") for n in range(KEEP + 5, 0, -1)]
    return [p for p in [*rotated, current] if p.is_file()]


def last_lines(folder: Path, plugin_id: str, count: int) -> list[str]:
    """The last `count` lines over the current and rotated files (0: all of them)."""
    keep: deque[str] = deque(maxlen=count or None)
    for path in log_files(folder, plugin_id):
        with open(path, encoding="utf-8", errors="replace") as fh:
            keep.extend(line.rstrip("\n") for line in fh)
    return list(keep)


def follow(
    folder: Path, plugin_id: str, stop: Callable[[], bool] = lambda: False, poll_s: float = POLL_S
) -> Iterator[str]:
    """New lines as the kernel appends them, from the current end of the log on, until `stop()`."""
    path = log_path(folder, plugin_id)
    log_files(folder, plugin_id)  # validates the id
    fh = None
    partial = ""
    try:
        if path.is_file():
            fh = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed in finally
            fh.seek(0, os.SEEK_END)
        while not stop():
            if fh is not None:
                chunk = fh.read()
                if chunk:
                    partial += chunk
                    *lines, partial = partial.split("\n")
                    yield from lines
                    continue
            if _replaced(fh, path):  # rotated (or created): the rest of the old file was read above
                if fh is not None:
                    fh.close()
                fh = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
                continue
            time.sleep(poll_s)
    finally:
        if fh is not None:
            fh.close()


def _replaced(fh, path: Path) -> bool:
    try:
        now = os.stat(path).st_ino
    except FileNotFoundError:
        return False
    return fh is None or os.fstat(fh.fileno()).st_ino != now
