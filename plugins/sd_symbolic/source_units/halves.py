"""Both cores for one large source: the second half of a per-block or per-section job runs in a forked child.

`build_tree` (assemble.py) has two jobs that are independent item by item and take ~85% of its time on a large
source: the pieces of each block (pieces.py) and the units of each section. For a source of at least
MIN_CHARS characters on a machine with more than one CPU, `split_map` runs the items of the second half
(by characters; a little more than half, as the parent also rebuilds the child's results) in a child
forked for the job, while the parent runs the first half; the child sends its
results back encoded (pickle for pieces, MessagePack for units) and exits. The child shares the parent's
memory (copy on write), so nothing is sent to it. Anything the child cannot do (no fork, a child that
fails or dies) is done by the parent afterwards: the result is the same list as the serial map's, item by
item, whichever way it ran (tests/plugins/test_sd_symbolic_halves.py).

`Child` is the forked child itself, for a job with one exchange in each direction besides the result
(assemble.py's one-child build: the parent tells it a count, it sends its pieces early). A child dies with
the call: a wait the call's deadline interrupts kills it.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

MIN_CHARS = 100_000  # below, the fork and the transfer cost about what the second core saves
PARENT_SHARE = 0.45  # of the items' size: the parent also rebuilds what the child sends


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def split_point(sizes: Sequence[int], share: float = 0.5) -> int:
    """The index where the items' cumulative size first reaches `share` of their total."""
    part = sum(sizes) * share
    done = 0
    for i, size in enumerate(sizes):
        if done >= part:
            return i
        done += size
    return len(sizes)


def split_map(
    items: Sequence[T],
    sizes: Sequence[int],
    run: Callable[[T], object],
    encode: Callable[[list], bytes],
    decode: Callable[[bytes], list],
    *,
    halves: bool,
    meanwhile: Callable[[], object] | None = None,
) -> list:
    """[run(item) for item in items]; with `halves`, the second half (by `sizes`) in a forked child whose
    results travel as encode(results) -> decode(bytes).

    `meanwhile`: work of the parent's that needs no item's result, called once in the parent: after its
    half, while the child may still run (after all the items when there is no child)."""
    cut = split_point(sizes, PARENT_SHARE) if halves and len(items) > 1 else len(items)
    if cut >= len(items):
        out = [run(item) for item in items]
        if meanwhile is not None:
            meanwhile()
        return out
    wait = _fork(lambda: encode([run(item) for item in items[cut:]]))
    first = [run(item) for item in items[:cut]]
    if meanwhile is not None:
        meanwhile()
    data = wait() if wait is not None else None
    second = decode(data) if data is not None else None
    if second is None or len(second) != len(items) - cut:
        second = [run(item) for item in items[cut:]]
    return first + second


def _fork(work: Callable[[], bytes]) -> Callable[[], bytes | None] | None:
    """Start `work` in a forked child; a function that waits for its bytes (None if it failed), or None
    when no child could be started."""
    child = Child.start(lambda _child: work())
    return child.result if child is not None else None


class Child:
    """A forked child running `work(child)`, whose bytes are its result. Besides the result, the child may
    read one message the parent `tell`s it (`heard`) and send one early message (`say`): written to an
    anonymous in-memory file the parent reads when it needs it (`early`), so the child never waits on a
    full pipe for a parent still at work; the pipe carries only its length."""

    def __init__(self, pid: int, result_fd: int, early_fd: int, tell_fd: int, file_fd: int) -> None:
        self.pid, self._result_fd, self._early_fd, self._tell_fd = pid, result_fd, early_fd, tell_fd
        self._file_fd = file_fd

    @classmethod
    def start(cls, work: Callable[[Child], bytes]) -> Child | None:
        fds: list[tuple[int, int]] = []
        file_fd = -1
        try:
            fds = [os.pipe() for _ in range(3)]  # result, early (child -> parent); tell (parent -> child)
            file_fd = _memory_file()
            pid = os.fork()
        except OSError:  # no fork (a process limit), no pipes or file left: the caller does the work
            for fd in (*(fd for pair in fds for fd in pair), file_fd):
                if fd != -1:
                    os.close(fd)
            return None
        (result_r, result_w), (early_r, early_w), (tell_r, tell_w) = fds
        if pid == 0:  # the child: compute, write, leave without running the parent's exit handlers
            code = 1
            try:
                for fd in (result_r, early_r, tell_w):
                    os.close(fd)
                self = cls.__new__(cls)
                self._early_fd, self._tell_fd, self._file_fd = early_w, tell_r, file_fd
                _write_all(result_w, work(self))
                code = 0
            finally:
                os._exit(code)
        for fd in (result_w, early_w, tell_r):
            os.close(fd)
        return cls(pid, result_r, early_r, tell_w, file_fd)

    # ---- in the child
    def heard(self) -> bytes:
        """The parent's message (empty if the parent closed without one)."""
        return _read_all(self._tell_fd)

    def say(self, data: bytes) -> None:
        view = memoryview(data)
        done = 0
        while done < len(view):
            done += os.pwrite(self._file_fd, view[done:], done)
        _write_all(self._early_fd, str(len(data)).encode())
        os.close(self._early_fd)

    # ---- in the parent
    def tell(self, data: bytes) -> None:
        try:
            _write_all(self._tell_fd, data)
        except OSError:  # the child is gone: its result says so
            pass
        finally:
            os.close(self._tell_fd)
            self._tell_fd = -1

    def early(self) -> bytes | None:
        """The child's early message, waited for (None if it sent none: it failed first)."""
        size, data = 0, b""
        try:
            said = _read_all(self._early_fd)
            size = int(said) if said.isdigit() else 0
            data = os.pread(self._file_fd, size, 0) if size else b""
        except BaseException:  # interrupted (the call's deadline): the child goes with it
            self._kill()
            raise
        finally:
            self._close_early()
        return data if size and len(data) == size else None

    def _close_early(self) -> None:
        if self._early_fd != -1:
            os.close(self._early_fd)
            os.close(self._file_fd)
            self._early_fd = self._file_fd = -1

    def _kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass

    def result(self) -> bytes | None:
        """Wait for the child: its result, or None if it failed."""
        status = -1
        try:
            data = _read_all(self._result_fd)
            _, status = os.waitpid(self.pid, 0)
        finally:
            os.close(self._result_fd)
            if self._tell_fd != -1:
                os.close(self._tell_fd)
                self._tell_fd = -1
            self._close_early()
            if status == -1:  # interrupted (the call's deadline): the child goes with it
                self._kill()
        return data if status == 0 else None


def _memory_file() -> int:
    """A file descriptor of an anonymous file (in memory where the system has memfd)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("sd-halves", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as f:
        return os.dup(f.fileno())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
