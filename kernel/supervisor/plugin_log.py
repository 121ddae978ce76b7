"""Per-plugin logs: what a plugin writes to stderr goes, line by line, to `<home>/logs/<plugin-id>.log`.

The kernel writes the file, never the plugin: a sandboxed plugin sees neither the kernel home nor its log
(a tmpfs hides the home), so it cannot forge or erase its history. Each line is stamped with the time,
the process id and, when known, the request id:

    2025-05-14T09:12:03.120Z [4242 req-7f3a] loading index from /data/artifacts/kb-x/kb-go

The final JSON error line of a failed one-shot call (`{"code","message"}`, SPEC.md §4) is not a log
line: it is the call's error, kept in its trace node. A line that parses as an error record is held back
until the next line arrives (then it was only a log line) or the process exits with a non-zero code
(then it was the error line, and is left out).

Rotation is by size: past `max_bytes` the file becomes `<id>.log.1` (`.1` becomes `.2`, ...), and at
most `keep` old files stay, so a chatty plugin costs at most (keep + 1) × max_bytes of disk. Several
kernel processes (a CLI run beside the daemon) may append to the same log: writes are O_APPEND, and a
writer notices another's rotation (the path's inode changed) and reopens. Lines longer than
MAX_LINE_BYTES are cut.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from mrpvm.protocol.errors import parse_error_line

MAX_BYTES = 1 << 20
KEEP = 3
MAX_LINE_BYTES = 8192
LOG_SUFFIX = ".log"


def log_path(folder: Path | str, plugin_id: str) -> Path:
    """Where a plugin's current log lives (older ones: the same path + `.1`, `.2`, ...)."""
    return Path(folder) / f"{plugin_id}{LOG_SUFFIX}"


def _stamp() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


class LogFile:
    """One plugin's log file: appends stamped lines, rotates by size, shared by all its processes."""

    __slots__ = ("path", "max_bytes", "keep", "_fd", "_ino", "failed")

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES, keep: int = KEEP):
        self.path, self.max_bytes, self.keep = path, max_bytes, keep
        self._fd: int | None = None
        self._ino = 0
        self.failed = False  # the folder is not writable: stop trying (logs never fail a call)

    def write(self, lines: list[bytes], tag: str) -> None:
        if not lines or self.failed:
            return
        prefix = f"{_stamp()} [{tag}] ".encode()
        data = b"".join(prefix + line + b"\n" for line in lines)
        try:
            fd = self._open()
            os.write(fd, data)
            if os.fstat(fd).st_size > self.max_bytes:
                self._rotate()
        except OSError:
            self.failed = True
            self.close()

    def _open(self) -> int:
        fd = self._fd
        if fd is not None:
            try:
                if os.stat(self.path).st_ino == self._ino:
                    return fd
            except FileNotFoundError:
                pass
            self.close()  # rotated or removed by another writer: append to the current file
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._fd, self._ino = fd, os.fstat(fd).st_ino
        return fd

    def _rotate(self) -> None:
        self.close()
        for n in range(self.keep, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            newer = self.path.with_name(f"{self.path.name}.{n - 1}") if n > 1 else self.path
            with contextlib.suppress(FileNotFoundError):
                if n == self.keep:
                    older.unlink(missing_ok=True)
                os.replace(newer, older)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class StderrLog:
    """One process's stderr cut into lines for its plugin's LogFile; see the module doc for the held
    error line. `tag` names the process (and the request it serves, set per call)."""

    __slots__ = ("file", "pid", "request", "_partial", "_held")

    def __init__(self, file: LogFile, pid: int):
        self.file, self.pid = file, pid
        self.request = ""
        self._partial = bytearray()
        self._held: bytes | None = None

    @property
    def tag(self) -> str:
        return f"{self.pid} {self.request}" if self.request else str(self.pid)

    def feed(self, data: bytes) -> None:
        self._partial += data
        if b"\n" not in data and len(self._partial) <= MAX_LINE_BYTES:
            return
        *complete, rest = bytes(self._partial).split(b"\n")
        self._partial = bytearray(rest)
        while len(self._partial) > MAX_LINE_BYTES:  # a flood without newlines: cut it into lines
            complete.append(bytes(self._partial[:MAX_LINE_BYTES]))
            del self._partial[:MAX_LINE_BYTES]
        self._emit(complete)

    def _emit(self, lines: list[bytes]) -> None:
        out: list[bytes] = []
        for raw in lines:
            line = raw.rstrip(b"\r")
            if not line.strip():
                continue
            if len(line) > MAX_LINE_BYTES:
                line = line[:MAX_LINE_BYTES] + f"… ({len(line)} bytes, cut)".encode()
            if self._held is not None:
                out.append(self._held)
                self._held = None
            if line.lstrip().startswith(b"{") and parse_error_line(line) is not None:
                self._held = line
            else:
                out.append(line)
        self.file.write(out, self.tag)

    def close(self, exit_code: int | None) -> None:
        """The process is gone: flush what is left; a held error line of a failed exit is left out."""
        if self._partial:
            self._emit([bytes(self._partial)])
            self._partial.clear()
        held, self._held = self._held, None
        if held is not None and exit_code == 0:
            self.file.write([held], self.tag)


class PluginLogs:
    """The log files of one supervisor, by plugin id (None folder: logging off)."""

    def __init__(self, folder: Path | str | None, max_bytes: int = MAX_BYTES, keep: int = KEEP):
        self.folder = Path(folder) if folder is not None else None
        self.max_bytes, self.keep = max_bytes, keep
        self._files: dict[str, LogFile] = {}

    def for_process(self, plugin_id: str, pid: int) -> StderrLog | None:
        if self.folder is None:
            return None
        file = self._files.get(plugin_id)
        if file is None:
            file = self._files[plugin_id] = LogFile(
                log_path(self.folder, plugin_id), self.max_bytes, self.keep
            )
        return StderrLog(file, pid)

    def close(self) -> None:
        for file in self._files.values():
            file.close()
