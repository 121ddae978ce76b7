"""A warm worker's stdin: frames read straight from fd 0, with an adaptive busy-poll before blocking.

A blocked `read()` costs a scheduler wake-up when the next request arrives (tens of µs on a VM, as
much as the plugin's own work for a small call). When requests have been arriving back to back — the
gap between our reply and the next request stayed under `SPIN_S` — the worker polls its pipe for up
to `SPIN_S` (yielding the CPU between polls) before it blocks. A worker called once per turn never
spins. Polling uses select() with a zero timeout, so the descriptor's flags (possibly a terminal
shared with a shell) are never changed.
"""

from __future__ import annotations

import os
import select
import time
from typing import TYPE_CHECKING

from mrpvm.protocol.framing import read_frame

if TYPE_CHECKING:
    from collections.abc import Callable

SPIN_S = 300e-6
READ_SIZE = 1 << 16
_GAP_WEIGHT = 0.3  # EWMA weight of the newest gap
_GAP_CAP_S = 0.01  # one long pause counts as this much, so a new burst starts spinning within ~10 calls


class FdStream:
    """The two methods `read_frame` needs, over a raw descriptor whose buffered bytes are visible."""

    __slots__ = ("fd", "buf")

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()

    def _fill(self) -> bool:
        data = os.read(self.fd, READ_SIZE)
        self.buf += data
        return bool(data)

    def _take(self, n: int) -> bytes:
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def readline(self, limit: int) -> bytes:
        while True:
            end = self.buf.find(b"\n", 0, limit)
            if end >= 0:
                return self._take(end + 1)
            if len(self.buf) >= limit or not self._fill():
                return self._take(limit)

    def read(self, n: int) -> bytes:
        while len(self.buf) < n and self._fill():
            pass
        return self._take(n)


class WorkerInput:
    """Frames from stdin for `Plugin._serve`; `replied()` marks the moment a reply went out."""

    def __init__(self, fd: int = 0, spin_s: float = SPIN_S, clock: Callable[[], float] = time.perf_counter):
        self.stream = FdStream(fd)
        self.spin_s = spin_s
        self.clock = clock  # tests pass a fake one to make gaps exact
        self.gap_s = float("inf")  # EWMA of reply → next request
        self.replied_at: float | None = None

    def replied(self) -> None:
        self.replied_at = self.clock()

    def next_frame(self) -> bytes | None:
        """The next request body; None at a clean EOF. Raises FramingError on a broken stream."""
        if not self.stream.buf and self.gap_s < self.spin_s:
            self._poll(self.spin_s)
        body = read_frame(self.stream)  # type: ignore[arg-type]
        if self.replied_at is not None:
            gap = min(self.clock() - self.replied_at, _GAP_CAP_S)
            self.gap_s = gap if self.gap_s == float("inf") else self.gap_s + _GAP_WEIGHT * (gap - self.gap_s)
            self.replied_at = None
        return body

    def _poll(self, window_s: float) -> None:
        fds = [self.stream.fd]
        clock = self.clock
        end = clock() + window_s
        while not select.select(fds, (), (), 0)[0]:
            if clock() > end:
                return
            os.sched_yield()
