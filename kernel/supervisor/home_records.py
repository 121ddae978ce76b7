"""Small JSON records a kernel keeps in its home for its next process (`run/…`: early_launch's workers,
probe_cache's sandbox probe): written atomically and readable by the kernel's user only, and read back only
when this user owns the file and nobody else can write it — a record is acted on (processes started, a probe
skipped), so one others could change is never trusted. Imports only the standard library's os/json: the cold
`mrpvm ask` reads these before the kernel is imported."""

from __future__ import annotations

import contextlib
import json
import os


def read(home: str | os.PathLike[str], record: str, version: int) -> dict[str, object] | None:
    """The record as written, or None (none, unreadable, not JSON, another version, not this user's own
    file, or one others may write)."""
    path = os.path.join(home, record)
    try:
        with open(path, "rb") as f:
            meta = os.fstat(f.fileno())
            if meta.st_uid != os.geteuid() or meta.st_mode & 0o022:
                return None
            data = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == version else None


def write(home: str | os.PathLike[str], record: str, data: dict[str, object]) -> None:
    """Write `data` (with its "version") as the record: a private temporary file renamed over the old one,
    so a reader sees the old record or the new one, never half of one; failures are ignored (a record only
    saves the next process some work)."""
    path = os.path.join(home, record)
    text = json.dumps(data)
    with contextlib.suppress(OSError):
        folder = os.path.dirname(path)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(temp, path)
