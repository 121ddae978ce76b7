"""The worker's stdin reader: frames over a real pipe, lenient headers, EOF cases, the adaptive busy-poll."""

from __future__ import annotations

import fcntl
import os
import threading
import time

import pytest
from mrpvm.plugins.sdk import worker_input
from mrpvm.plugins.sdk.worker_input import WorkerInput
from mrpvm.protocol.framing import FramingError, encode_frame


@pytest.fixture
def pipe():
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass


def test_frames_split_across_writes_and_several_in_one_write(pipe):
    read_fd, write_fd = pipe
    frames = [encode_frame(b"first"), encode_frame(b"x" * 70000), encode_frame(b"third")]
    data = b"".join(frames)
    reader = WorkerInput(read_fd)

    def writer() -> None:  # odd-sized pieces, header split mid-line
        for i in range(0, len(data), 7001):
            os.write(write_fd, data[i : i + 7001])
        os.close(write_fd)

    thread = threading.Thread(target=writer)
    thread.start()
    got = [reader.next_frame() for _ in range(3)]
    thread.join()
    assert got == [b"first", b"x" * 70000, b"third"]
    assert reader.next_frame() is None  # clean EOF between frames


def test_lenient_header_lines_and_stray_blank_lines(pipe):
    read_fd, write_fd = pipe
    os.write(write_fd, b"\r\n\ncontent-length: 5\nX-Extra: 1\n\nhello")
    os.close(write_fd)
    assert WorkerInput(read_fd).next_frame() == b"hello"


def test_eof_inside_a_body_is_a_framing_error(pipe):
    read_fd, write_fd = pipe
    os.write(write_fd, b"Content-Length: 10\r\n\r\nabc")
    os.close(write_fd)
    with pytest.raises(FramingError, match="inside a frame body"):
        WorkerInput(read_fd).next_frame()


def test_garbage_header_is_a_framing_error(pipe):
    read_fd, write_fd = pipe
    os.write(write_fd, b"this is not a header\r\n\r\n")
    os.close(write_fd)
    with pytest.raises(FramingError):
        WorkerInput(read_fd).next_frame()


class StepClock:
    """A clock that moves only when told: the reply → request gaps are exact, whatever the load."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_busy_poll_only_after_back_to_back_requests(pipe, monkeypatch):
    read_fd, write_fd = pipe
    clock = StepClock()
    reader = WorkerInput(read_fd, spin_s=0.005, clock=clock)
    polls: list[float] = []
    real_poll = reader._poll

    def counting_poll(window_s: float) -> None:
        polls.append(window_s)
        real_poll(window_s)

    monkeypatch.setattr(reader, "_poll", counting_poll)
    os.write(write_fd, encode_frame(b"r0"))
    assert reader.next_frame() == b"r0"
    assert polls == []  # nothing known about the gaps yet: block
    for i in range(1, 4):  # replies followed at once by the next request
        reader.replied()
        clock.now += 0.0001
        os.write(write_fd, encode_frame(b"r%d" % i))
        assert reader.next_frame() == b"r%d" % i
    assert abs(reader.gap_s - 0.0001) < 1e-9 and len(polls) == 2

    # A request that arrives while the worker polls (real time here) is read by the polling worker.
    reader.clock = time.perf_counter
    reader.replied()
    timer = threading.Timer(0.001, os.write, (write_fd, encode_frame(b"late")))
    timer.start()
    assert reader.next_frame() == b"late"
    timer.join()
    assert len(polls) == 3

    # Idle periods (a worker called once per turn) push the gap above the window: it blocks again.
    reader.clock = clock
    for _ in range(3):
        reader.replied()
        clock.now += 0.02
        os.write(write_fd, encode_frame(b"slow"))
        reader.next_frame()
    assert reader.gap_s >= 0.005
    before = len(polls)
    reader.replied()
    os.write(write_fd, encode_frame(b"again"))
    assert reader.next_frame() == b"again"
    assert len(polls) == before


def test_polling_never_changes_the_descriptor_flags(pipe):
    """stdin may be a terminal shared with a shell: O_NONBLOCK must never be set on it."""
    read_fd, write_fd = pipe
    flags = fcntl.fcntl(read_fd, fcntl.F_GETFL)
    reader = WorkerInput(read_fd, spin_s=0.01)
    reader.gap_s = 0.0
    threading.Timer(0.02, os.write, (write_fd, encode_frame(b"after the window"))).start()
    assert reader.next_frame() == b"after the window"  # polled, gave up, then blocked and read
    assert fcntl.fcntl(read_fd, fcntl.F_GETFL) == flags


def test_long_pauses_count_as_capped_gaps():
    reader = WorkerInput(0)
    reader.replied_at = time.perf_counter() - 100.0
    reader.stream.buf += encode_frame(b"x")
    reader.next_frame()
    assert reader.gap_s == worker_input._GAP_CAP_S
