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
"""

from __future__ import annotations

import os
import signal
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
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # the child: compute, write, leave without running the parent's exit handlers
        code = 1
        try:
            os.close(read_fd)
            view = memoryview(work())
            while view:
                view = view[os.write(write_fd, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)

    def wait() -> bytes | None:
        chunks: list[bytes] = []
        status = -1
        try:
            while chunk := os.read(read_fd, 1 << 20):
                chunks.append(chunk)
            _, status = os.waitpid(pid, 0)
        finally:
            os.close(read_fd)
            if status == -1:  # interrupted (the call's deadline): the child goes with it
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass
        return b"".join(chunks) if status == 0 else None

    return wait
