"""A store's generation file: a counter bumped after every committed change, read on every retrieve so an
open handle reloads when another worker process wrote (store.py's `refresh`)."""

from __future__ import annotations

import os

GENERATION_FILE = "generation"
_READ = 4096  # bytes of the generation file one read takes


def read_generation(path: str) -> int:
    """The generation in `path` (0 when no write made one yet, or the file holds no number). Every retrieve
    reads it: one open, read and close of the descriptor (a Python file object would add a stat, a tty check
    and a read to its end)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return 0
    try:
        data = chunk = os.read(fd, _READ)
        while len(chunk) == _READ:  # never for a number; the whole file, as a read to its end gives
            chunk = os.read(fd, _READ)
            data += chunk
    finally:
        os.close(fd)
    try:
        return int(data or b"0")
    except ValueError:
        return 0


def bump_generation(path: str) -> None:
    """One more than the generation in `path`, written by rename (a reader sees the old or the new number)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as out:
        out.write(str(read_generation(path) + 1))
    os.replace(tmp, path)
