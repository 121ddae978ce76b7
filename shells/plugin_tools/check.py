"""`mrpvm plugin check`: does a plugin, in any language, keep protocol v1?

For every op its manifest declares, the op's example request (protocol/examples.py) must give valid CNL
with exit 0 and the manifest's id in `Plugin:`; the bare DS016 `{"prompt","context"}` must work for the
main op; every named invalid request must give exit 2 and exactly one line of JSON `{"code","message"}`
on stderr; an input over `maxInputSizeBytes` must be refused by the kernel before the plugin starts; and
a plugin that declares `worker` must answer several framed requests on one process, each with a framed
answer carrying its `Request:` id, survive a bad request, and exit on EOF.

One-shot probes go through the Supervisor (`call_raw(one_shot=True)`); the worker probe drives one
process directly so it can say exactly which frame went wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import tempfile
import time

import msgspec
from mrpvm.kernel.registry import PluginEntry, Registry
from mrpvm.protocol.cnl import CnlError, parse_document
from mrpvm.protocol.document import CnlDocument
from mrpvm.protocol.envelope import ContextItem, Paths, Request, encode_request
from mrpvm.protocol.examples import EXAMPLE_REQUESTS, INVALID_REQUESTS
from mrpvm.protocol.framing import FrameBuffer, FramingError, encode_frame
from mrpvm.protocol.vocab import EXIT_INVALID_INPUT, EXIT_OK, EXIT_PROCESSING_ERROR, MAIN_OP

BARE_REQUEST = {
    "prompt": "Verify that constraint X is satisfiable.",
    "context": [
        {"title": "sess-abc123::turn-003::unit-000", "sourceLink": "Current-Turn Context",
         "text": "Role: Constraint\nClaim: Variables are integers."},
        {"title": "src-001::chunk-000::unit-000", "sourceLink": "rules.md",
         "text": "Role: Constraint\nClaim: a + b must equal c."},
    ],
}  # fmt: skip
MIN_WORKER_FRAMES = 3
PARALLEL_PROBES = 2
EOF_GRACE_S = 5.0
STARTUP_SLACK_S = 10.0


class CheckResult(msgspec.Struct, kw_only=True):
    name: str
    passed: bool
    detail: str = ""


class Report(msgspec.Struct, kw_only=True):
    plugin: str
    passed: bool
    checks: list[CheckResult]
    target: str = ""
    notes: list[str] = []


def _preview(data: bytes | str, limit: int = 120) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def _stderr_hint(stderr: bytes) -> str:
    return f"; stderr: {_preview(stderr.strip().splitlines()[-1])}" if stderr.strip() else ""


def _cnl_problem(err: CnlError) -> str:
    return "; ".join(str(issue) for issue in err.issues[:2])


def judge_answer(
    stdout: bytes, op: str, plugin_id: str, request_id: str | None = None
) -> tuple[CnlDocument | None, str]:
    """Parse an answer; returns (document, "") or (None, what is wrong)."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None, "output is not UTF-8"
    try:
        doc = parse_document(text, op)
    except CnlError as err:
        return None, f"invalid CNL for {op}: {_cnl_problem(err)} (output starts {_preview(text, 60)})"
    if doc.result.plugin != plugin_id:
        return (
            None,
            f"result block says Plugin: {doc.result.plugin!r}, expected the manifest id {plugin_id!r}",
        )
    if request_id is not None and doc.result.request != request_id:
        got = "no Request field" if doc.result.request is None else f"Request: {doc.result.request!r}"
        return None, f"answer to request {request_id!r} carries {got}"
    return doc, ""


def _describe(doc: CnlDocument) -> str:
    result = doc.result
    conf = f", Confidence: {result.confidence}" if result.confidence else ""
    return f"Status: {result.status}{conf}"


def judge_valid(reply, op: str, plugin_id: str) -> tuple[bool, str]:
    if reply.timedOut:
        return False, f"no answer in time (killed after {reply.durationMs:.0f} ms)"
    if reply.exitCode != EXIT_OK:
        return False, f"exit {reply.exitCode}, expected 0{_stderr_hint(reply.stderr)}"
    doc, problem = judge_answer(reply.stdout, op, plugin_id)
    if doc is None:
        return False, problem
    return True, f"{_describe(doc)}; {reply.durationMs:.0f} ms"


def _error_record(stderr: bytes) -> tuple[dict | None, str]:
    """Exactly one line of JSON {code, message[, details]} on stderr: (record, "") or (None, problem)."""
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return None, "stderr is empty; expected one line of JSON {code, message}"
    if len(lines) > 1:
        return (
            None,
            f"stderr has {len(lines)} lines, expected exactly one line of JSON (first: {_preview(lines[0], 60)})",
        )
    try:
        record = json.loads(lines[0])
    except ValueError:
        return None, f"stderr is not JSON: {_preview(lines[0])}"
    if not isinstance(record, dict):
        return None, f"stderr JSON is not an object: {_preview(lines[0])}"
    missing = [k for k in ("code", "message") if not isinstance(record.get(k), str) or not record.get(k)]
    if missing:
        return None, f"stderr JSON lacks string field(s) {', '.join(missing)}: {_preview(lines[0])}"
    if "details" in record and not isinstance(record["details"], dict):
        return None, "stderr JSON `details` must be an object"
    return record, ""


def judge_invalid(reply) -> tuple[bool, str]:
    """Exit 2 and exactly one line of JSON {code, message[, details]} on stderr."""
    if reply.timedOut:
        return False, f"no answer in time (killed after {reply.durationMs:.0f} ms); expected exit 2"
    if reply.exitCode != EXIT_INVALID_INPUT:
        said = (
            f"; stdout: {_preview(reply.stdout, 60)}"
            if reply.exitCode == EXIT_OK and reply.stdout.strip()
            else ""
        )
        return False, f"exit {reply.exitCode}, expected 2 for invalid input{said}{_stderr_hint(reply.stderr)}"
    record, problem = _error_record(reply.stderr)
    if record is None:
        return False, f"exit 2 but {problem}"
    return True, f"exit 2, code {record['code']}"


def judge_llm_unreachable(reply, op: str, plugin_id: str) -> tuple[bool, str]:
    """The example's LLM endpoint is closed: valid CNL, or a processing error reported in the protocol's shape."""
    if reply.exitCode != EXIT_PROCESSING_ERROR or reply.timedOut:
        return judge_valid(reply, op, plugin_id)
    record, problem = _error_record(reply.stderr)
    if record is None:
        return False, f"exit 1 but {problem}"
    return True, f"exit 1, code {record['code']}: the unreachable LLM endpoint reported as a processing error"


class Fixtures(msgspec.Struct, frozen=True):
    """Where a plugin under check may write (never its own folder) and an LLM endpoint that refuses."""

    artifacts: str
    llm_url: str


def closed_llm_url() -> str:
    """A loopback URL nothing listens on: an LLM plugin under check gets a clean 'connection refused'."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def example_request(op: str, fx: Fixtures, *, with_llm: bool = True) -> Request:
    """The op's example request, its artifacts path moved under `fx.artifacts` and its LLM endpoint to
    `fx.llm_url` (or removed, with no LLM budget, when not `with_llm`)."""
    request = EXAMPLE_REQUESTS[op]
    if request.paths.artifacts is not None:
        request = msgspec.structs.replace(request, paths=Paths(artifacts=fx.artifacts))
    if request.llm is not None:
        if with_llm:
            request = msgspec.structs.replace(
                request, llm=msgspec.structs.replace(request.llm, baseUrl=fx.llm_url)
            )
        else:
            budget = msgspec.structs.replace(request.budget, llmCalls=0)
            request = msgspec.structs.replace(request, llm=None, budget=budget)
    return request


def example_body(op: str, fx: Fixtures, request_id: str | None = None, *, with_llm: bool = True) -> bytes:
    """The example request as JSON with `protocolVersion` and `op` spelled out (and `id` for a frame)."""
    data = msgspec.to_builtins(example_request(op, fx, with_llm=with_llm))
    ordered = {
        "protocolVersion": 1,
        "op": op,
        **{k: v for k, v in data.items() if k not in ("protocolVersion", "op")},
    }
    if request_id is not None:
        ordered["id"] = request_id
    return msgspec.json.encode(ordered)


def oversize_request(op: str, limit: int, fx: Fixtures) -> bytes:
    """The op's example request padded with one context item so the body exceeds `limit` bytes."""
    request = msgspec.structs.replace(example_request(op, fx))
    base = len(encode_request(request))
    filler = ContextItem(title="padding", sourceLink="padding.md", text="x" * max(1, limit - base + 64))
    request.context = [*request.context, filler]
    return encode_request(request)


# --------------------------------------------------------------------------- one-shot probes


class _Probe(msgspec.Struct):
    name: str
    body: bytes
    op: str
    kind: str  # valid | llm-unreachable | invalid


def _probes(entry: PluginEntry, fx: Fixtures) -> list[_Probe]:
    ops = list(entry.manifest.ops)
    main_op = MAIN_OP[entry.type]
    probes = []
    for op in ops:
        if EXAMPLE_REQUESTS[op].llm is not None and entry.manifest.usesLLM:
            name = f"{op}: example request (its LLM endpoint refuses connections)"
            probes.append(_Probe(name, example_body(op, fx), op, "llm-unreachable"))
            name = f"{op}: example request without LLM access (llm: null)"
            probes.append(_Probe(name, example_body(op, fx, with_llm=False), op, "valid"))
        else:
            probes.append(_Probe(f"{op}: example request", example_body(op, fx), op, "valid"))
    if main_op in ops:
        bare = msgspec.json.encode(BARE_REQUEST)
        probes.append(
            _Probe(f"{main_op}: bare DS016 request (prompt + context only)", bare, main_op, "valid")
        )
    for name, body in INVALID_REQUESTS.items():
        probes.append(_Probe(f"invalid input: {name}", body, main_op, "invalid"))
    return probes


async def _run_probe(supervisor, entry: PluginEntry, probe: _Probe, timeout_s: float) -> CheckResult:
    from mrpvm.kernel.supervisor import PluginCallError

    try:
        reply = await supervisor.call_raw(entry.id, probe.body, timeout_s=timeout_s, one_shot=True)
    except PluginCallError as err:
        return CheckResult(
            name=probe.name, passed=False, detail=f"kernel error {err.error.code}: {err.error.message}"
        )
    if probe.kind == "invalid":
        passed, detail = judge_invalid(reply)
    elif probe.kind == "llm-unreachable":
        passed, detail = judge_llm_unreachable(reply, probe.op, entry.id)
    else:
        passed, detail = judge_valid(reply, probe.op, entry.id)
    return CheckResult(name=probe.name, passed=passed, detail=detail)


async def _check_size_limit(supervisor, entry: PluginEntry, timeout_s: float, fx: Fixtures) -> CheckResult:
    from mrpvm.kernel.supervisor import PluginCallError

    limit = entry.manifest.maxInputSizeBytes
    op = MAIN_OP[entry.type] if MAIN_OP[entry.type] in entry.manifest.ops else entry.manifest.ops[0]
    body = oversize_request(op, limit, fx)
    name = f"input over maxInputSizeBytes ({limit}) refused by the kernel"
    try:
        reply = await supervisor.call_raw(entry.id, body, timeout_s=timeout_s, one_shot=True)
    except PluginCallError as err:
        if err.error.code == "INPUT_TOO_LARGE":
            return CheckResult(name=name, passed=True, detail=f"{len(body)} bytes refused before spawning")
        return CheckResult(name=name, passed=False, detail=f"expected INPUT_TOO_LARGE, got {err.error.code}")
    return CheckResult(
        name=name, passed=False, detail=f"{len(body)} bytes reached the plugin (exit {reply.exitCode})"
    )


# --------------------------------------------------------------------------- worker probe


class _WorkerSession:
    """One worker process driven frame by frame, stderr kept in a temp file for diagnostics."""

    def __init__(self, entry: PluginEntry, timeout_s: float, fx: Fixtures):
        self.entry, self.timeout_s, self.fx = entry, timeout_s, fx
        self.frames = FrameBuffer(max_body=entry.manifest.maxOutputBytes)
        self.pending: list[bytes] = []
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in kill()
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        from mrpvm.kernel.supervisor.process import WORKER_FLAG, scrubbed_env

        self.proc = await asyncio.create_subprocess_exec(
            *self.entry.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr,
            cwd=self.entry.folder,
            env=scrubbed_env({WORKER_FLAG: "1"}),
            start_new_session=True,
        )

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        lines = self.stderr.read().strip().splitlines()
        return f"; stderr: {_preview(lines[-1])}" if lines else ""

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
                raise RuntimeError(f"answer is not a valid frame: {err}") from None
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


def _framed(session: _WorkerSession, op: str, request_id: str, bare: bool = False) -> bytes:
    if bare:
        return msgspec.json.encode({**BARE_REQUEST, "id": request_id})
    return example_body(op, session.fx, request_id, with_llm=False)  # worker framing, not LLM reachability


def _worker_plan(entry: PluginEntry) -> list[tuple[str, bool]]:
    """(op, bare) per frame: every declared op once, then the main op (bare DS016 every other time)."""
    ops: list[str] = list(entry.manifest.ops)
    main_op = MAIN_OP[entry.type]
    plan = [(op, False) for op in ops]
    while len(plan) < MIN_WORKER_FRAMES:
        op = main_op if main_op in ops else ops[0]
        plan.append((op, op == main_op and len(plan) % 2 == 1))
    return plan


async def _several_requests(
    session: _WorkerSession, name: str, plan: list[tuple[str, bool]], timeout_s: float
) -> CheckResult:
    """Each framed request gets one framed answer carrying its id; RuntimeError if the session breaks."""
    statuses = []
    for i, (op, bare) in enumerate(plan, 1):
        request_id = f"check-{i}"
        slack = STARTUP_SLACK_S if i == 1 else 0.0
        try:
            answer = await session.ask(_framed(session, op, request_id, bare), timeout_s + slack)
        except RuntimeError as err:
            raise RuntimeError(f"request {request_id!r} ({op}): {err}") from None
        doc, problem = judge_answer(answer, op, session.entry.id, request_id)
        if doc is None:
            return CheckResult(name=name, passed=False, detail=f"request {request_id!r} ({op}): {problem}")
        statuses.append(doc.result.status)
    detail = f"ids check-1..check-{len(plan)} answered in order ({', '.join(sorted(set(statuses)))})"
    return CheckResult(name=name, passed=True, detail=detail)


async def _survives_bad_request(session: _WorkerSession, name: str, op: str, timeout_s: float) -> CheckResult:
    """A schema violation is answered with an error result, and the next request still works."""
    entry = session.entry
    bad_id = "check-bad"
    answer = await session.ask(msgspec.json.encode({"id": bad_id, "prompt": 42, "context": []}), timeout_s)
    doc, problem = judge_answer(answer, MAIN_OP[entry.type], entry.id, bad_id)
    if doc is None:
        return CheckResult(name=name, passed=False, detail=problem)
    if doc.result.status != "error":
        detail = f"answered Status: {doc.result.status}, expected error (Code: SCHEMA_VIOLATION)"
        return CheckResult(name=name, passed=False, detail=detail)
    again = await session.ask(_framed(session, op, "check-after-bad"), timeout_s)
    after, problem = judge_answer(again, op, entry.id, "check-after-bad")
    if after is None:
        return CheckResult(name=name, passed=False, detail=f"after the error result: {problem}")
    return CheckResult(
        name=name, passed=True, detail=f"Code: {doc.result.code}; the next request was answered"
    )


async def _exits_on_eof(session: _WorkerSession, name: str) -> CheckResult:
    code = await session.close_stdin_and_wait(EOF_GRACE_S)
    if code is None:
        return CheckResult(
            name=name, passed=False, detail=f"still running {EOF_GRACE_S:.0f} s after stdin closed"
        )
    if code != EXIT_OK:
        return CheckResult(name=name, passed=False, detail=f"exit {code}, expected 0{session.stderr_tail()}")
    return CheckResult(name=name, passed=True, detail="exit 0")


async def _check_worker(entry: PluginEntry, timeout_s: float, fx: Fixtures) -> list[CheckResult]:
    plan = _worker_plan(entry)
    names = (
        f"worker: {len(plan)} framed requests on one process get matching framed answers",
        "worker: a schema violation gets an error result and the worker lives on",
        "worker: exits on EOF",
    )
    session = _WorkerSession(entry, timeout_s, fx)
    try:
        try:
            await session.start()
        except OSError as err:
            return [
                CheckResult(name=n, passed=False, detail=f"cannot start the worker: {err}") for n in names
            ]
        steps = (
            lambda: _several_requests(session, names[0], plan, timeout_s),
            lambda: _survives_bad_request(session, names[1], plan[0][0], timeout_s),
        )
        results: list[CheckResult] = []
        for i, step in enumerate(steps):
            try:
                results.append(await step())
            except RuntimeError as err:  # the session broke: what follows cannot run
                results.append(CheckResult(name=names[i], passed=False, detail=str(err)))
                unreached = "not reached: the worker session broke earlier"
                return results + [CheckResult(name=n, passed=False, detail=unreached) for n in names[i + 1 :]]
        results.append(await _exits_on_eof(session, names[2]))
        return results
    finally:
        await session.kill()


# --------------------------------------------------------------------------- the whole check


async def check_plugin(
    entry: PluginEntry, *, limits=None, notes: list[str] | None = None, target: str = ""
) -> Report:
    """Run every check against one plugin; never raises for a plugin's misbehaviour."""
    from mrpvm.kernel.supervisor import Supervisor

    timeout_s = entry.manifest.timeoutMs / 1000.0
    checks: list[CheckResult] = []
    mode = "worker + one-shot" if entry.manifest.worker else "one-shot"
    checks.append(
        CheckResult(
            name="manifest",
            passed=True,
            detail=f"{entry.type}, ops {', '.join(entry.manifest.ops)}, {mode}"
            + (" (legacy)" if entry.legacy else ""),
        )
    )
    with tempfile.TemporaryDirectory(prefix="mrpvm-check-") as scratch:
        fx = Fixtures(artifacts=os.path.join(scratch, "artifacts", entry.id), llm_url=closed_llm_url())
        probes = _probes(entry, fx)
        limiter = asyncio.Semaphore(PARALLEL_PROBES)
        async with Supervisor(Registry([entry]), limits=limits) as supervisor:

            async def run(probe: _Probe) -> CheckResult:
                async with limiter:
                    return await _run_probe(supervisor, entry, probe, timeout_s + STARTUP_SLACK_S)

            checks.extend(await asyncio.gather(*(run(p) for p in probes)))
            checks.append(await _check_size_limit(supervisor, entry, timeout_s, fx))
        if entry.manifest.worker:
            checks.extend(await _check_worker(entry, timeout_s, fx))
    return Report(
        plugin=entry.id,
        passed=all(c.passed for c in checks),
        checks=checks,
        target=target or str(entry.manifest_path),
        notes=list(notes or []),
    )


def manifest_failure(plugin: str, target: str, message: str) -> Report:
    """The report for a folder whose manifest does not load."""
    return Report(
        plugin=plugin,
        passed=False,
        checks=[CheckResult(name="manifest", passed=False, detail=message)],
        target=target,
    )
