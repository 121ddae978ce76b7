"""A warm worker: one framed request at a time over a long-lived process (protocol/SPEC.md §3).

The reply must be exactly one frame whose result block carries `Request: <id>` of the request sent.
Anything else — bytes that are not a frame header, a frame over the output cap, a second frame, bytes
while no request is pending, a wrong id — is a protocol violation and the worker is killed (the stream
can no longer be trusted). The worker reports every outcome to its pool (see pool.py), which hands it
the next queued request straight from the reply callback.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from pathlib import Path
from typing import Protocol

from mrpvm.protocol.cnl_compact import compact_request_id, is_compact
from mrpvm.protocol.errors import parse_error_line
from mrpvm.protocol.framing import MAX_HEADER_BYTES, FramingError, parse_header_block

from .cgroups import Group
from .errors import CRASHED, OUTPUT_TOO_LARGE, PROTOCOL_ERROR, SANDBOX_LIMIT, ProcessFailure, describe_exit
from .process import WORKER_FLAG, ChildProcess, LogFactory
from .strays import StraySweeper

SWEEP_INTERVAL_S = 0.05  # a sandboxed worker's strays are killed within this long after a reply
# A frame starts with a header name; CNL or prose written without framing fails this at once.
_HEADER_START = re.compile(rb"[A-Za-z][A-Za-z0-9-]*(?::|$)")


class Job:
    """One request for a worker pool: the frame, the expected reply id, the caller's future and deadline."""

    __slots__ = (
        "frame",
        "rid",
        "fut",
        "deadline",
        "timer",
        "worker",
        "retried",
        "sent_at",
        "stderr",
        "request_id",
    )

    def __init__(self, frame: bytes, rid: bytes | None, fut: asyncio.Future[bytes], deadline: float):
        self.frame = frame
        self.rid = rid  # None: raw body, no id check
        self.fut = fut
        self.deadline = deadline
        self.timer: asyncio.TimerHandle | None = None
        self.worker: Worker | None = None
        self.retried = False
        self.sent_at = 0.0
        self.stderr = b""
        self.request_id = ""  # the user request's id, for the plugin's log


class FrameReader:
    """Incremental reader for exactly one reply frame, with an output cap and an early garbage check."""

    __slots__ = ("buf", "need", "cap")

    def __init__(self, cap: int):
        self.buf = bytearray()
        self.need: int | None = None
        self.cap = cap

    def reset(self) -> None:
        self.buf.clear()
        self.need = None

    def feed(self, data: bytes) -> bytes | None:
        """Add bytes; the body once complete. Raises ProcessFailure on garbage or an oversized frame."""
        buf = self.buf
        if self.need is None:
            if not buf and _HEADER_START.match(data, 0, 64) is None:
                raise ProcessFailure(
                    PROTOCOL_ERROR, f"worker wrote bytes that are not a frame header: {data[:60]!r}"
                )
            buf += data
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEADER_BYTES or (b"\n" in buf and _HEADER_START.match(buf, 0, 64) is None):
                    raise ProcessFailure(PROTOCOL_ERROR, f"no frame header in {bytes(buf[:60])!r}")
                return None
            try:
                self.need = parse_header_block(bytes(buf[:end]))
            except FramingError as err:
                raise ProcessFailure(PROTOCOL_ERROR, f"bad frame header: {err}") from None
            if self.need > self.cap:
                raise ProcessFailure(
                    OUTPUT_TOO_LARGE, f"reply of {self.need} bytes exceeds the output cap of {self.cap} bytes"
                )
            del buf[: end + 4]
        else:
            buf += data
        if len(buf) < self.need:
            return None
        if len(buf) > self.need:
            raise ProcessFailure(PROTOCOL_ERROR, "worker wrote more than one frame for one request")
        body = bytes(buf)
        self.reset()
        return body


def reply_request_id(body: bytes) -> bytes | None:
    """The `Request:` value of the result block (the first section), read without a full parse."""
    if is_compact(body):
        return compact_request_id(body)
    end = body.find(b"\n## ")
    block = body if end < 0 else body[:end]
    i = block.find(b"\nRequest:")
    if i < 0:
        return None
    j = block.find(b"\n", i + 9)
    return (block[i + 9 :] if j < 0 else block[i + 9 : j]).strip()


class JobSink(Protocol):
    """Where a worker reports each job's end (pool.WorkerPool): its generation and four outcomes."""

    generation: int

    def done(self, worker: Worker, job: Job, body: bytes) -> None: ...

    def failed(self, worker: Worker, job: Job, failure: ProcessFailure) -> None: ...

    def stale(self, worker: Worker, job: Job) -> None: ...

    def gone(self, worker: Worker) -> None: ...


class Worker:
    """A worker process plus the one job it may be serving."""

    __slots__ = ("proc", "reader", "job", "served", "got_bytes", "refused", "pool", "generation", "sweeper")

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path | str,
        env: dict[str, str],
        loop: asyncio.AbstractEventLoop,
        max_output: int,
        memory_bytes: int | None,
        pool: JobSink,
        sandboxed: bool = False,
        relayed: bool = False,
        log: LogFactory | None = None,
        group: Group | None = None,
        popen: subprocess.Popen[bytes] | None = None,
    ):
        """`popen`: the process already started (early_launch.py), adopted instead of started."""
        self.reader = FrameReader(max_output)
        self.job: Job | None = None
        self.served = 0
        self.got_bytes = False
        self.refused = False  # stdin was closed when a job was sent: the job ends when the process is reaped
        self.pool = pool
        self.generation = pool.generation
        self.proc = ChildProcess(
            argv,
            cwd=cwd,
            env={**env, WORKER_FLAG: "1"},
            loop=loop,
            on_stdout=self._on_stdout,
            on_stdout_eof=self.kill,  # a worker that closed stdout can never answer again
            on_exit=self._on_exit,
            memory_bytes=memory_bytes,
            sandboxed=sandboxed,
            log=log,
            group=group,
            popen=popen,
        )
        self.sweeper = StraySweeper(self.proc.pid, relayed=relayed) if sandboxed else None

    @property
    def usable(self) -> bool:
        return self.proc.alive and self.proc.stdout_fd is not None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self, job: Job) -> None:
        """Send the job's frame (the pool made sure this worker is free)."""
        self.job = job
        job.worker = self
        self.got_bytes = False
        self.proc.stderr.reset()
        if self.proc.log is not None:
            self.proc.log.request = job.request_id
        job.sent_at = time.perf_counter()
        try:
            self.proc.write(job.frame)
        except OSError:  # stdin closed: the process left before taking the request
            # The job ends in _on_exit, once stderr is drained: its last words (e.g. bubblewrap's own
            # error, which probe_cache reads) are only complete then.
            self.refused = True
            self.kill()

    def poll(self) -> None:
        """Read stdout once now (the caller's busy-poll); replies are handled as in the reader callback."""
        self.proc.poll_stdout()

    # ------------------------------------------------------------------ callbacks

    def _on_stdout(self, data: bytes) -> None:
        job = self.job
        if job is None:
            self.kill()  # unsolicited output: the stream is out of step
            return
        self.got_bytes = True
        try:
            body = self.reader.feed(data)
            if body is None:
                return
            if job.rid is not None:
                got = reply_request_id(body)
                if got != job.rid:
                    shown = got.decode("utf-8", "replace") if got is not None else None
                    raise ProcessFailure(
                        PROTOCOL_ERROR,
                        f"reply carries Request {shown or 'none'}, expected {job.rid.decode()}; worker killed",
                        details={"expected": job.rid.decode(), "got": shown},
                    )
        except ProcessFailure as failure:
            self.fail(failure)
            return
        self.job = None
        job.worker = None
        self.served += 1
        job.stderr = self.proc.stderr.value()  # usually empty (reset per job); kept for an error result
        self.pool.done(self, job, body)

    def after_call(self) -> None:
        """The reply is in: kill what the call left running in the sandbox (outside the caller's wait;
        at most one sweep per SWEEP_INTERVAL_S, so back-to-back calls pay it once, not each)."""
        sweeper = self.sweeper
        if sweeper is not None and not sweeper.scheduled:
            sweeper.scheduled = True
            wait = max(0.0, sweeper.last + SWEEP_INTERVAL_S - time.monotonic())
            self.proc.loop.call_later(wait, self._sweep)

    def _sweep(self) -> None:
        sweeper = self.sweeper
        assert sweeper is not None
        sweeper.scheduled = False
        sweeper.last = time.monotonic()
        if self.proc.returncode is None:
            sweeper.sweep()

    def fail(self, failure: ProcessFailure) -> None:
        """End the current job with `failure` and kill the process."""
        job = self.job
        self.kill()
        if job is None:
            return
        self.job = None
        job.worker = None
        if not failure.stderr:
            failure.stderr = self.proc.stderr.value()
        self.pool.failed(self, job, failure)

    def _on_exit(self, code: int) -> None:
        if self.sweeper is not None:
            self.sweeper.close()
        job = self.job
        if job is not None:
            if self.refused or (code == 0 and not self.got_bytes and self.served > 0):
                # It was leaving between calls, not failing on this request (it may never have read it).
                self.job = None
                job.worker = None
                self.pool.stale(self, job)
            elif self.proc.limit_exceeded:
                self.fail(
                    ProcessFailure(
                        SANDBOX_LIMIT,
                        self.proc.limit_exceeded,
                        exit_code=code,
                        stderr=self.proc.stderr.value(),
                    )
                )
            else:
                stderr = self.proc.stderr.value()
                info = parse_error_line(stderr) if code > 0 else None
                details = {"pluginCode": info.code, "pluginMessage": info.message} if info else {}
                self.fail(
                    ProcessFailure(
                        CRASHED,
                        f"worker died mid-request ({describe_exit(code)})",
                        exit_code=code,
                        stderr=stderr,
                        details=details,
                    )
                )
        self.pool.gone(self)

    def abandon(self) -> None:
        """The caller gave up on the current job: its reply would arrive stale, so the process goes."""
        self.job = None
        self.kill()

    def kill(self) -> None:
        self.proc.kill()

    def close(self) -> None:
        """Graceful end: EOF on stdin (an SDK worker exits at once)."""
        self.proc.close_stdin()
