"""The worker-mode part of `mrpvm plugin check`: one process driven frame by frame, as the kernel's pool
would (same sandbox, same environment with MRPVM_WORKER=1), so it can say exactly which frame went wrong.

Frames carry string and integer ids (the kernel numbers its requests), each answer must echo its own id;
a schema violation must be answered with `Status: error` and the worker must live on; EOF ends it (exit 0).
A plugin that declares `pure` must answer the same request the same way twice, its `Request:` line aside
(the kernel may answer a repeat from the reply it kept: supervisor/reply_memo.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable

import msgspec
from mrpvm.kernel.registry import PluginEntry
from mrpvm.protocol.framing import FrameBuffer, FramingError, encode_frame
from mrpvm.protocol.vocab import EXIT_OK, MAIN_OP

from .check_judge import CheckResult, judge_answer, preview

MIN_WORKER_FRAMES = 3
EOF_GRACE_S = 5.0
_REQUEST_LINE = re.compile(rb"^Request: .*$", re.M)  # the one line a pure reply may change with the id
STARTUP_SLACK_S = 10.0

FrameBody = Callable[[str, "str | int"], bytes]  # (op, id) -> the request body
BareBody = Callable[["str | int"], bytes]  # (id) -> the bare DS016 request body


class WorkerSession:
    """One worker process driven frame by frame, stderr kept in a temp file for diagnostics."""

    def __init__(self, entry: PluginEntry, argv: list[str]):
        self.entry, self.argv = entry, argv
        self.frames = FrameBuffer(max_body=entry.manifest.maxOutputBytes)
        self.pending: list[bytes] = []
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in kill()
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        from mrpvm.kernel.supervisor.process import WORKER_FLAG, worker_env

        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr,
            cwd=self.entry.folder,
            env=worker_env({WORKER_FLAG: "1"}),  # as the kernel starts it
            start_new_session=True,
        )

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        lines = self.stderr.read().strip().splitlines()
        return f"; stderr: {preview(lines[-1])}" if lines else ""

    async def ask(self, body: bytes, timeout_s: float) -> bytes:
        """Send one frame and wait for one answer frame; raises RuntimeError with a reason."""
        assert self.proc and self.proc.stdin and self.proc.stdout
        try:
            self.proc.stdin.write(encode_frame(body))
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise RuntimeError(f"the worker closed stdin{self.stderr_tail()}") from None
        deadline = time.monotonic() + timeout_s
        while not self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"no framed answer within {timeout_s:.0f} s{self.stderr_tail()}")
            try:
                data = await asyncio.wait_for(self.proc.stdout.read(1 << 16), left)
            except TimeoutError:
                continue
            if not data:
                code = await self._exit_code(1.0)
                raise RuntimeError(f"the worker exited (exit {code}) before answering{self.stderr_tail()}")
            try:
                self.pending.extend(self.frames.feed(data))
            except FramingError as err:
                raise RuntimeError(
                    f"answer is not a valid frame: {err} — fix: write `Content-Length: N\\r\\n\\r\\n` and "
                    "then exactly N bytes of CNL (SPEC.md §3)"
                ) from None
        return self.pending.pop(0)

    async def _exit_code(self, wait_s: float) -> int | None:
        assert self.proc
        with contextlib.suppress(asyncio.TimeoutError):
            return await asyncio.wait_for(self.proc.wait(), wait_s)
        return None

    async def close_stdin_and_wait(self, wait_s: float) -> int | None:
        assert self.proc and self.proc.stdin
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        return await self._exit_code(wait_s)

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()
        self.stderr.close()


def worker_plan(entry: PluginEntry) -> list[tuple[str, bool, str | int]]:
    """(op, bare, id) per frame: every declared op once, then the main op (bare DS016 every other time);
    ids alternate between strings and integers, as both are valid."""
    ops: list[str] = list(entry.manifest.ops)
    main_op = MAIN_OP[entry.type]
    plan: list[tuple[str, bool]] = [(op, False) for op in ops]
    while len(plan) < MIN_WORKER_FRAMES:
        op = main_op if main_op in ops else ops[0]
        plan.append((op, op == main_op and len(plan) % 2 == 1))
    return [(op, bare, f"check-{i}" if i % 2 else 1000 + i) for i, (op, bare) in enumerate(plan, 1)]


async def _several_requests(
    session: WorkerSession,
    name: str,
    plan: list[tuple[str, bool, str | int]],
    bodies: tuple[FrameBody, BareBody],
    timeout_s: float,
) -> CheckResult:
    """Each framed request gets one framed answer carrying its id; RuntimeError if the session breaks."""
    statuses = []
    framed, bare_body = bodies
    for i, (op, bare, request_id) in enumerate(plan, 1):
        slack = STARTUP_SLACK_S if i == 1 else 0.0
        body = bare_body(request_id) if bare else framed(op, request_id)
        try:
            answer = await session.ask(body, timeout_s + slack)
        except RuntimeError as err:
            raise RuntimeError(f"request {request_id!r} ({op}): {err}") from None
        doc, problem = judge_answer(answer, op, session.entry.id, str(request_id))
        if doc is None:
            return CheckResult(name=name, passed=False, detail=f"request {request_id!r} ({op}): {problem}")
        statuses.append(doc.result.status)
    ids = ", ".join(repr(rid) for _, _, rid in plan)
    detail = f"ids {ids} answered in order ({', '.join(sorted(set(statuses)))})"
    return CheckResult(name=name, passed=True, detail=detail)


async def _survives_bad_request(
    session: WorkerSession, name: str, op: str, framed: FrameBody, timeout_s: float
) -> CheckResult:
    """A schema violation is answered with an error result, and the next request still works."""
    entry = session.entry
    bad_id = "check-bad"
    answer = await session.ask(msgspec.json.encode({"id": bad_id, "prompt": 42, "context": []}), timeout_s)
    doc, problem = judge_answer(answer, MAIN_OP[entry.type], entry.id, bad_id)
    if doc is None:
        return CheckResult(name=name, passed=False, detail=problem)
    if doc.result.status != "error":
        detail = (
            f"answered Status: {doc.result.status}, expected error — fix: in worker mode, answer a request "
            "that breaks the schema with a frame whose result block says Status: error and Code: "
            "SCHEMA_VIOLATION (and Request: its id), then read the next frame"
        )
        return CheckResult(name=name, passed=False, detail=detail)
    again = await session.ask(framed(op, "check-after-bad"), timeout_s)
    after, problem = judge_answer(again, op, entry.id, "check-after-bad")
    if after is None:
        return CheckResult(name=name, passed=False, detail=f"after the error result: {problem}")
    return CheckResult(
        name=name, passed=True, detail=f"Code: {doc.result.code}; the next request was answered"
    )


async def _same_reply_twice(
    session: WorkerSession, name: str, op: str, framed: FrameBody, timeout_s: float
) -> CheckResult:
    """A `pure` plugin's reply to a request repeated under another id is the same, its Request line aside."""
    first = await session.ask(framed(op, "check-pure-1"), timeout_s)
    second = await session.ask(framed(op, "check-pure-2"), timeout_s)
    if _REQUEST_LINE.sub(b"", first) == _REQUEST_LINE.sub(b"", second):
        return CheckResult(
            name=name, passed=True, detail=f"{op} answered the same twice ({len(first)} bytes)"
        )
    detail = (
        f"the second {op} reply differs: {preview(second, 80)} against {preview(first, 80)} — fix: drop `pure` "
        "from the manifest, or make the reply depend only on the request's prompt, context, payload and paths"
    )
    return CheckResult(name=name, passed=False, detail=detail)


async def _exits_on_eof(session: WorkerSession, name: str) -> CheckResult:
    code = await session.close_stdin_and_wait(EOF_GRACE_S)
    if code is None:
        return CheckResult(
            name=name,
            passed=False,
            detail=f"still running {EOF_GRACE_S:.0f} s after stdin closed — fix: exit 0 at EOF between frames",
        )
    if code != EXIT_OK:
        return CheckResult(
            name=name,
            passed=False,
            detail=f"exit {code}, expected 0{session.stderr_tail()} — fix: exit 0 at EOF between frames",
        )
    return CheckResult(name=name, passed=True, detail="exit 0")


async def check_worker(
    entry: PluginEntry, argv: list[str], bodies: tuple[FrameBody, BareBody], timeout_s: float
) -> list[CheckResult]:
    """The worker checks (three, four for a `pure` plugin), on one process started with `argv` (the
    sandboxed command)."""
    plan = worker_plan(entry)
    framed = bodies[0]
    steps: list[tuple[str, Callable[[str], Awaitable[CheckResult]]]] = [
        (
            f"worker: {len(plan)} framed requests on one process get matching framed answers",
            lambda name: _several_requests(session, name, plan, bodies, timeout_s),
        ),
        (
            "worker: a schema violation gets an error result and the worker lives on",
            lambda name: _survives_bad_request(session, name, plan[0][0], framed, timeout_s),
        ),
    ]
    if getattr(entry.manifest, "pure", False):
        op = MAIN_OP[entry.type]
        steps.append(
            (
                "worker: pure — the same request answered the same twice",
                lambda name: _same_reply_twice(session, name, op, framed, timeout_s),
            )
        )
    names = [name for name, _ in steps] + ["worker: exits on EOF"]
    session = WorkerSession(entry, argv)
    try:
        try:
            await session.start()
        except OSError as err:
            return [
                CheckResult(name=n, passed=False, detail=f"cannot start the worker: {err}") for n in names
            ]
        results: list[CheckResult] = []
        for i, (name, step) in enumerate(steps):
            try:
                results.append(await step(name))
            except RuntimeError as err:  # the session broke: what follows cannot run
                results.append(CheckResult(name=name, passed=False, detail=str(err)))
                unreached = "not reached: the worker session broke earlier"
                return results + [CheckResult(name=n, passed=False, detail=unreached) for n in names[i + 1 :]]
        results.append(await _exits_on_eof(session, names[-1]))
        return results
    finally:
        await session.kill()
