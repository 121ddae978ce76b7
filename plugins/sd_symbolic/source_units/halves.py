"""Both cores for one large source: a per-block or per-section job shared with a forked child.

`build_tree` (assemble.py) has two jobs that are independent item by item and take ~85% of its time on a large
source: the pieces of each block (pieces.py) and the units of each section. For a source of at least MIN_CHARS
characters on a machine with more than one CPU, not all of them busy (`worth_halves`), `split_map` cuts the
items into CHUNKS runs of about equal size (by characters) and forks a child for the job: the parent takes
runs from the front, the child from the back, until they meet. Neither waits long for the other however the
work is spread (a fixed cut left the parent idle 0.05-0.35 s per job while a slower child finished its half:
the cost per character differs along a document, and a forked child runs each item 5-15 % slower). The two
sides tell each other only how far they got: two counters in a shared anonymous page, each written by one
side; a run both took at the same moment is done twice and its result taken once, so no lock is needed. The
child sends its results back encoded (pickle for pieces, MessagePack for units) and exits; it shares the
parent's memory (copy on write), so nothing is sent to it. Anything the child cannot do (no fork, a child that
fails or dies) is done by the parent afterwards: the result is the same list as the serial map's, item by
item, whichever way it ran (tests/plugins/test_sd_symbolic_halves.py).
"""

from __future__ import annotations

import mmap
import os
import signal
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import TypeVar

T = TypeVar("T")

MIN_CHARS = 100_000  # below, the fork and the transfer cost about what the second core saves
CHUNKS = 64  # runs of items per job: at the end, one side waits at most for the other's run in progress


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worth_halves(chars: int) -> bool:
    """Whether a source of `chars` characters is worth a forked child: large enough (MIN_CHARS), and a
    second core likely free for it — more than one CPU, and a load average over the last minute below
    their number. On a machine whose cores are all busy already, the child only takes turns with the
    parent on them, and its fork, its slower runs and the transfer of its results are paid for nothing
    (+0.2 s of CPU and +0.5 s of wall for the 1.1 MB corpus at a load of 8 on 2 cores, session 29)."""
    if chars < MIN_CHARS or (n := cores()) < 2:
        return False
    try:
        return os.getloadavg()[0] < n
    except OSError:  # no load average to read: as before it was read
        return True


def chunk_bounds(sizes: Sequence[int], chunks: int = CHUNKS) -> list[int]:
    """Where each run of items starts, and the end: at most `chunks` runs of about equal total size, each
    at least one item (0 and len(sizes) always; strictly increasing)."""
    if not sizes:
        return [0]
    total = sum(sizes)
    bounds = [0]
    for i, done in enumerate(accumulate(sizes), 1):
        if done * chunks >= total * len(bounds) and i < len(sizes):
            bounds.append(i)
    bounds.append(len(sizes))
    return bounds


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
    """[run(item) for item in items]; with `halves`, shared with a forked child that takes runs of items
    (cut by `sizes`) from the back while the parent takes them from the front; the child's results travel
    as encode(results) -> decode(bytes).

    `meanwhile`: work of the parent's that needs no item's result, called once in the parent: first, while
    the child starts on its runs (after all the items when there is no child)."""
    bounds = chunk_bounds(sizes) if halves and len(items) > 1 else [0, len(items)]
    last = len(bounds) - 1
    if last < 2:
        serial = [run(item) for item in items]
        if meanwhile is not None:
            meanwhile()
        return serial
    reach = _counters()  # [the parent's next run, the child's first run]: each written by one side
    reach[0], reach[1] = 0, last
    wait = _fork(lambda: encode(_from_the_back(items, bounds, run, reach)))
    if meanwhile is not None:
        meanwhile()
    out: list = []
    front = 0
    while front < last and (wait is None or front < reach[1]):  # the child has not taken this run yet
        reach[0] = front + 1
        out.extend(run(item) for item in items[bounds[front] : bounds[front + 1]])
        front += 1
    data = wait() if wait is not None else None
    done = bounds[front]  # the parent's items: [0, done)
    first = bounds[reach[1]]  # the child's, when it sent them: [first, len(items)), first <= done
    second = decode(data) if data is not None else None
    if second is not None and len(second) == len(items) - first and first <= done:
        return out + list(second[done - first :])
    return out + [run(item) for item in items[done:]]


def _counters() -> memoryview:
    """Two aligned 32-bit counters in an anonymous page a forked child shares (MAP_SHARED)."""
    return memoryview(mmap.mmap(-1, mmap.PAGESIZE)).cast("i")[:2]


def _from_the_back(
    items: Sequence[T], bounds: list[int], run: Callable[[T], object], reach: memoryview
) -> list:
    """The child's part: runs from the last backwards while the parent has not taken them; their results in
    the items' order. `reach[1]` ends as the first run done here."""
    runs: list[list] = []
    back = len(bounds) - 1
    while back - 1 >= reach[0]:  # the parent has not taken run back - 1
        back -= 1
        reach[1] = back
        runs.append([run(item) for item in items[bounds[back] : bounds[back + 1]]])
    return [result for one in reversed(runs) for result in one]


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
