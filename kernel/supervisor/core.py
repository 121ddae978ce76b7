"""The supervisor: call a plugin by id and op, get a parsed CNL document or a structured error.

Per call the kernel does the minimum: one dict lookup, one encode, one write, one parse. Everything
about a process (pipes, exit, limits) lives in `process.py`; framing and the one-request-at-a-time rule
in `worker.py`; the pool (a dispatcher) in `pool.py`; the crash-loop throttle in `breaker.py`.

Choices worth knowing:
- deadline = min(manifest timeoutMs, timeout_s), measured from the call (queueing and a cold worker's
  start included); the request carries it as budget.deadlineMs. `limits.pluginTimeoutMs` is not applied:
  the manifest's own timeout wins (`warm()` takes a cold start out of the first call).
- `limits.pluginMemoryMB` becomes RLIMIT_AS, set with prlimit(2) right after the exec (no preexec_fn, so
  Popen keeps its fast vfork path); with cgroups it also caps a plugin and its children together, as
  `limits.pluginProcesses` caps their count (cgroups.py; a call ended there fails with SANDBOX_LIMIT).
- output cap = min(manifest maxOutputBytes, limits.maxOutputBytes).
- busy-poll: a call alone in flight to a plugin whose replies come within `spin_us` polls the pipe instead
  of sleeping in epoll (saves the wake-up latency, tens of µs on a VM); 0 turns it off.
- crash loop: CRASHED, SPAWN_FAILED, kernel TIMEOUT kills, PROTOCOL_ERROR and OUTPUT_TOO_LARGE count; an
  answer of any kind (even INVALID_CNL or exit 1) resets the count.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import msgspec
from mrpvm.kernel.config import LimitsConfig
from mrpvm.kernel.errors import UnknownPluginError
from mrpvm.kernel.registry import PluginEntry, Registry
from mrpvm.protocol.cnl import CnlError, parse_document
from mrpvm.protocol.envelope import Request, encode_request
from mrpvm.protocol.framing import encode_frame
from mrpvm.protocol.vocab import MAIN_OP

from . import cgroups
from .binds import ArtifactBinds
from .breaker import CrashLoopBreaker
from .cgroups import SandboxGroup
from .errors import (
    CRASHED,
    INPUT_TOO_LARGE,
    INTERNAL_ERROR,
    INVALID_CNL,
    OUTPUT_TOO_LARGE,
    PLUGIN_UNAVAILABLE,
    PROTOCOL_ERROR,
    SHUTDOWN,
    TIMEOUT,
    UNKNOWN_PLUGIN,
    CallError,
    CallResult,
    PluginCallError,
    ProcessFailure,
    RawReply,
)
from .handoff import HandoffFolder
from .held import HeldJob, HeldWork
from .oneshot import OneShotOutcome, one_shot_result
from .plugin_log import PluginLogs
from .pool import WorkerPool
from .process import ChildProcess, scrubbed_env
from .sandbox import LlmRoute, Sandbox, announce, protect_kernel
from .worker import Job, Worker

DEFAULT_LIMITS = LimitsConfig(
    pluginTimeoutMs=15000,
    pluginMemoryMB=2048,
    maxOutputBytes=16 << 20,
    crashLoopThreshold=3,
    crashBackoffMs=1000,
    crashBackoffMaxMs=60000,
)
# Ops no caller waits for (a turn answers before its recordOutcome ends) run on their own one-worker lane
# of the plugin, so they never queue ahead of a call someone waits for (buildPlan on the same planner).
BACKGROUND_OPS = frozenset({"recordOutcome"})
BACKGROUND_LANE_SIZE = 1
SPIN_US = 200  # busy-poll a worker's reply this long when it is the only call in flight (_worker_call)
CLOSE_GRACE_S = 1.0


class _PathsPeek(msgspec.Struct):
    artifacts: str | None = None


class _OpPeek(msgspec.Struct):
    op: str | None = None
    paths: _PathsPeek | None = None
    requestId: str = ""


_peek_decoder = msgspec.json.Decoder(_OpPeek)


def _peek(body: bytes) -> _OpPeek:
    try:
        return _peek_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError):
        return _OpPeek()


def _peek_op(body: bytes) -> str:
    return _peek(body).op or ""


class _Plugin:
    """What the supervisor keeps per plugin id: limits resolved once, its pool, its counters."""

    __slots__ = (
        "id",
        "type",
        "argv",
        "cwd",
        "worker",
        "concurrency",
        "max_in",
        "max_out",
        "timeout_ms",
        "pool",
        "lane",
        "oneshots",
        "breaker",
        "calls",
        "ok",
        "errors",
        "last_error",
        "spawns",
        "active",
        "uses_llm",
        "binds",
        "handoff",
    )

    def __init__(self, entry: PluginEntry, limits: LimitsConfig, sandbox: Sandbox):
        m = entry.manifest
        self.id: str = m.id
        self.type: str = m.type
        self.argv: list[str] = list(entry.argv)
        self.cwd = entry.folder
        self.uses_llm: bool = bool(m.usesLLM)  # sandboxed: reaches the LLM endpoint through the relay
        self.binds = ArtifactBinds(sandbox, m.id, entry.folder) if sandbox.active else None
        # units files (handoff.py): the folder exists before any process of the plugin binds it
        self.handoff: HandoffFolder | None = None
        if getattr(m, "handoff", "inline") == "file":
            self.handoff = HandoffFolder(sandbox.home, m.id)
            self.handoff.prepare()
        self.worker: bool = bool(m.worker)
        self.concurrency: int = max(1, m.concurrency)
        self.max_in: int = m.maxInputSizeBytes
        self.max_out: int = min(m.maxOutputBytes, limits.maxOutputBytes)
        self.timeout_ms: int = m.timeoutMs
        self.pool: WorkerPool | None = None
        self.lane: WorkerPool | None = None  # BACKGROUND_OPS' own workers
        self.oneshots = asyncio.Semaphore(self.concurrency)
        self.breaker = CrashLoopBreaker(
            limits.crashLoopThreshold, limits.crashBackoffMs / 1000.0, limits.crashBackoffMaxMs / 1000.0
        )
        self.calls = 0
        self.ok = 0
        self.errors: Counter[str] = Counter()
        self.last_error: CallError | None = None
        self.spawns = 0
        self.active = 0

    def pools(self) -> list[WorkerPool]:
        return [pool for pool in (self.pool, self.lane) if pool is not None]


class Supervisor:
    """Runs plugins as subprocesses: warm worker pools or one-shot processes, with limits and no orphans."""

    def __init__(
        self,
        registry: Registry,
        limits: LimitsConfig | None = None,
        *,
        extra_env: dict[str, str] | None = None,
        spin_us: int = SPIN_US,
        close_grace_s: float = CLOSE_GRACE_S,
        sandbox: Sandbox | None = None,
        logs: PluginLogs | None = None,
    ):
        """`sandbox`: how plugin processes are confined; by default what the effective configuration asks
        for (`engine.sandbox`). Said once on stderr when plugins cannot be sandboxed. `logs`: where plugins'
        stderr lines go; by default `<home>/logs/<plugin-id>.log` (plugin_log.py)."""
        protect_kernel()
        self.sandbox = sandbox if sandbox is not None else Sandbox.from_environment()
        announce(self.sandbox.status)
        self.logs = logs if logs is not None else PluginLogs(f"{self.sandbox.home}/logs")
        self.registry = registry
        self.limits = limits or DEFAULT_LIMITS
        self._env = scrubbed_env(extra_env)
        self._memory = self.limits.pluginMemoryMB << 20
        self.sandbox.status.limits = cgroups.status(
            self.limits.pluginProcesses, self.limits.pluginMemoryMB, self.sandbox.active
        )
        self._spin_s = spin_us / 1e6
        self._close_grace_s = close_grace_s
        self._plugins: dict[str, _Plugin] = {}
        self._held = HeldWork()
        self._oneshot_procs: set[ChildProcess] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._seq = 0
        self._active = 0
        self._closed = False

    async def __aenter__(self) -> Supervisor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ lookup

    def _plugin(self, plugin_id: str, op: str) -> _Plugin:
        plugin = self._plugins.get(plugin_id)
        if plugin is None:
            try:
                entry = self.registry.get(plugin_id)
            except UnknownPluginError as err:
                raise PluginCallError(
                    CallError(code=UNKNOWN_PLUGIN, message=str(err), plugin=plugin_id, op=op)
                ) from None
            plugin = self._plugins[plugin_id] = _Plugin(entry, self.limits, self.sandbox)
        return plugin

    def _admit(self, plugin: _Plugin, op: str) -> asyncio.AbstractEventLoop:
        if self._closed:
            self._raise(plugin, op, ProcessFailure(SHUTDOWN, "the supervisor is shut down"), count=False)
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            if self._loop is not None and self._plugins_started():
                raise RuntimeError(
                    "this Supervisor's processes belong to another event loop; use one per loop"
                )
            for known in self._plugins.values():  # nothing runs: rebind to this loop
                known.pool = known.lane = None
                known.oneshots = asyncio.Semaphore(known.concurrency)
            self._loop = loop
        wait = plugin.breaker.retry_in(loop.time())
        if wait > 0.0:
            failure = ProcessFailure(
                PLUGIN_UNAVAILABLE,
                f"{plugin.id} is crash-looping ({plugin.breaker.consecutive} consecutive failures); "
                f"retry in {wait * 1000:.0f} ms",
                details={
                    "retryInMs": int(wait * 1000) + 1,
                    "consecutiveFailures": plugin.breaker.consecutive,
                },
            )
            self._raise(plugin, op, failure, count=False)
        return loop

    @contextmanager
    def starting_batch(self) -> Iterator[None]:
        """While a batch of concurrent calls is being started, none of them busy-polls its reply.

        A call alone in flight to a fast plugin polls its pipe instead of yielding to the event loop,
        which would hold back the next call of the batch until that reply came. Counting one more call
        in flight for the duration of the block keeps every call of the batch on the event loop.
        """
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1

    def _deadline_ms(self, plugin: _Plugin, timeout_s: float | None) -> int:
        if timeout_s is None:
            return plugin.timeout_ms
        return max(1, min(plugin.timeout_ms, int(timeout_s * 1000)))

    # ------------------------------------------------------------------ the two entry points

    async def call(self, plugin_id: str, request: Request, *, timeout_s: float | None = None) -> CallResult:
        """Run one op; a parsed, validated document (any Status) or PluginCallError, never anything else.

        An unexpected exception while handling the call (a kernel bug, a resource run out) becomes an
        INTERNAL_ERROR failure of this call, so a turn moves to its next candidate instead of dying.
        """
        try:
            if self._held.pending(plugin_id):
                await self._held.release(plugin_id)
            return await self._call(plugin_id, request, timeout_s)
        except PluginCallError:
            raise
        except Exception as err:  # noqa: BLE001 - the promise above; the cause stays chained
            raise self._unexpected(plugin_id, getattr(request, "op", None) or "", err) from err

    def _unexpected(self, plugin_id: str, op: str, err: Exception) -> PluginCallError:
        failure = ProcessFailure(
            INTERNAL_ERROR,
            f"the kernel failed while handling the call: {type(err).__name__}: {err}"[:500],
            details={"exception": type(err).__name__},
            crash=False,
        )
        plugin = self._plugins.get(plugin_id)
        if plugin is None:
            return PluginCallError(failure.to_error(plugin_id, op))
        return PluginCallError(self._record(plugin, op or MAIN_OP.get(plugin.type, ""), failure, count=False))

    async def _call(self, plugin_id: str, request: Request, timeout_s: float | None) -> CallResult:
        op: str = request.op or ""
        plugin = self._plugin(plugin_id, op)
        op = op or MAIN_OP[plugin.type]
        start = time.perf_counter()
        loop = self._admit(plugin, op)
        deadline_ms = self._deadline_ms(plugin, timeout_s)
        deadline = loop.time() + deadline_ms / 1000.0
        budget = msgspec.structs.replace(request.budget, deadlineMs=deadline_ms)
        rid: int | None = None
        if plugin.worker:
            self._seq += 1
            rid = self._seq
            request = msgspec.structs.replace(request, id=rid, op=op, budget=budget)
        else:
            request = msgspec.structs.replace(request, op=op, budget=budget)
        body = encode_request(request)
        self._check_size(plugin, op, body)
        artifacts = self._artifacts(plugin, op, request.paths.artifacts)
        plugin.calls += 1
        plugin.active += 1
        self._active += 1
        try:
            if plugin.worker:
                pool = self._pool(plugin, loop, lane=op in BACKGROUND_OPS)
                data, stderr = await self._worker_call(
                    pool, loop, encode_frame(body), str(rid).encode(), deadline, request.requestId
                )
                mode = "worker"
            else:
                outcome = await self._one_shot(plugin, loop, body, deadline, artifacts, request.requestId)
                data, stderr = one_shot_result(outcome), outcome.stderr
                mode = "one-shot"
        except ProcessFailure as failure:
            self._raise(plugin, op, failure)
        finally:
            plugin.active -= 1
            self._active -= 1
        plugin.breaker.success()
        try:
            text = data.decode()
            document = parse_document(text, op)
        except UnicodeDecodeError as err:
            self._raise(plugin, op, ProcessFailure(PROTOCOL_ERROR, f"output is not UTF-8: {err}"))
        except CnlError as err:
            issues = [{"line": i.line, "rule": i.rule, "message": i.message} for i in err.issues]
            self._raise(plugin, op, ProcessFailure(INVALID_CNL, str(err), details={"issues": issues}))
        plugin.ok += 1
        return CallResult(
            pluginId=plugin.id,
            op=op,
            document=document,
            durationMs=(time.perf_counter() - start) * 1000.0,
            mode=mode,
            stderrTail=stderr.decode("utf-8", "replace") if document.result.status == "error" else "",
            cnl=text,
        )

    async def call_raw(
        self, plugin_id: str, body: bytes, *, timeout_s: float | None = None, one_shot: bool = False
    ) -> RawReply:
        """Send `body` as-is and return what the plugin wrote, unparsed (for `mrpvm plugin run/check`).

        Timeouts and deaths come back as a RawReply (timedOut / exitCode); refusals, oversized output,
        protocol violations and unexpected kernel faults (INTERNAL_ERROR) raise PluginCallError.
        """
        try:
            return await self._call_raw(plugin_id, body, timeout_s, one_shot)
        except PluginCallError:
            raise
        except Exception as err:  # noqa: BLE001 - see `call`
            raise self._unexpected(plugin_id, _peek_op(body), err) from err

    async def _call_raw(
        self, plugin_id: str, body: bytes, timeout_s: float | None, one_shot: bool
    ) -> RawReply:
        peek = _peek(body)
        op = peek.op or ""
        plugin = self._plugin(plugin_id, op)
        start = time.perf_counter()
        loop = self._admit(plugin, op)
        deadline = loop.time() + self._deadline_ms(plugin, timeout_s) / 1000.0
        self._check_size(plugin, op, body)
        wanted = peek.paths.artifacts if peek.paths is not None else None
        artifacts = self._artifacts(plugin, op, wanted, for_worker=plugin.worker and not one_shot)
        plugin.calls += 1
        plugin.active += 1
        self._active += 1
        try:
            if plugin.worker and not one_shot:
                try:
                    data, stderr = await self._worker_call(
                        self._pool(plugin, loop), loop, encode_frame(body), None, deadline, peek.requestId
                    )
                except ProcessFailure as failure:
                    if failure.code not in (TIMEOUT, CRASHED) or failure.details.get("queued"):
                        raise
                    self._record(plugin, op, failure)
                    return RawReply(
                        stdout=b"",
                        stderr=failure.stderr,
                        exitCode=failure.exit_code,
                        durationMs=(time.perf_counter() - start) * 1000.0,
                        mode="worker",
                        timedOut=failure.code == TIMEOUT,
                    )
                plugin.breaker.success()
                plugin.ok += 1
                return RawReply(
                    stdout=data,
                    stderr=stderr,
                    exitCode=None,
                    durationMs=(time.perf_counter() - start) * 1000.0,
                    mode="worker",
                )
            outcome = await self._one_shot(plugin, loop, body, deadline, artifacts, peek.requestId)
            if outcome.over_cap:
                raise ProcessFailure(
                    OUTPUT_TOO_LARGE,
                    f"output exceeds the cap of {plugin.max_out} bytes; process killed",
                    stderr=outcome.stderr,
                    exit_code=outcome.code,
                )
            if outcome.timed_out:
                self._record(plugin, op, ProcessFailure(TIMEOUT, "deadline passed; process killed"))
            else:
                plugin.breaker.success()
                plugin.ok += 1
            return RawReply(
                stdout=bytes(outcome.stdout),
                stderr=outcome.stderr,
                exitCode=outcome.code,
                durationMs=(time.perf_counter() - start) * 1000.0,
                mode="one-shot",
                timedOut=outcome.timed_out,
            )
        except ProcessFailure as failure:
            self._raise(plugin, op, failure)
        finally:
            plugin.active -= 1
            self._active -= 1

    # ------------------------------------------------------------------ the sandbox's artifacts folders

    def _artifacts(
        self, plugin: _Plugin, op: str, path: str | None, *, for_worker: bool | None = None
    ) -> str | None:
        """The artifacts folder a one-shot call binds (see ArtifactBinds); a new folder for a worker
        plugin retires its running workers, so fresh ones start with it bound."""
        if plugin.binds is None or not path:
            return None
        try:
            bind, retire = plugin.binds.for_call(path, plugin.worker if for_worker is None else for_worker)
        except ProcessFailure as failure:
            self._raise(plugin, op, failure, count=False)
        if retire:
            for pool in plugin.pools():
                pool.retire()
        return bind

    def _command(self, plugin: _Plugin, writable: list[str]) -> tuple[list[str], SandboxGroup | None]:
        """The argv that starts one process of `plugin`, and the control group it joins (cgroups.py), or
        with no group where cgroups are out of reach, the RLIMIT_NPROC fallback inside the sandbox."""
        processes = self.limits.pluginProcesses
        group = cgroups.new_group(processes, self._memory)
        nproc = processes if group is None and self.sandbox.active and cgroups.nproc_applies() else None
        argv = self.sandbox.command(
            plugin.argv,
            plugin.cwd,
            llm=plugin.uses_llm,
            writable=writable,
            readable=[plugin.handoff.path] if plugin.handoff is not None else [],
            memory_bytes=self._memory,
            processes=nproc,
        )
        return (group.launcher(argv) if group is not None else argv), group

    # ------------------------------------------------------------------ errors and accounting

    def _check_size(self, plugin: _Plugin, op: str, body: bytes) -> None:
        if len(body) > plugin.max_in:
            failure = ProcessFailure(
                INPUT_TOO_LARGE,
                f"request of {len(body)} bytes exceeds maxInputSizeBytes {plugin.max_in}; not started",
                details={"size": len(body), "limit": plugin.max_in},
            )
            self._raise(plugin, op, failure, count=False)

    def _record(self, plugin: _Plugin, op: str, failure: ProcessFailure, count: bool = True) -> CallError:
        if self._closed and failure.code in (CRASHED, TIMEOUT, PROTOCOL_ERROR):
            failure.code, failure.message = SHUTDOWN, f"shut down during the call ({failure.message})"
        error = failure.to_error(plugin.id, op)
        plugin.errors[error.code] += 1
        plugin.last_error = error
        if count and self._loop is not None:
            if failure.crash:
                plugin.breaker.failure(self._loop.time())
            elif error.code not in (SHUTDOWN, TIMEOUT):
                plugin.breaker.success()  # the process answered: it is not crash-looping
        return error

    def _raise(self, plugin: _Plugin, op: str, failure: ProcessFailure, count: bool = True) -> NoReturn:
        raise PluginCallError(self._record(plugin, op, failure, count)) from None

    # ------------------------------------------------------------------ worker mode

    def _spawn_worker(self, plugin: _Plugin, pool: WorkerPool) -> Worker:
        plugin.spawns += 1
        sandboxed = plugin.binds is not None
        writable = plugin.binds.for_worker() if plugin.binds is not None else []
        argv, group = self._command(plugin, writable)
        return Worker(
            argv,
            group=group,
            cwd=plugin.cwd,
            env=self._env,
            loop=pool.loop,
            max_output=plugin.max_out,
            memory_bytes=self._memory,
            pool=pool,
            sandboxed=sandboxed,
            relayed=self.sandbox.relays(plugin.uses_llm),
            log=lambda pid: self.logs.for_process(plugin.id, pid),
        )

    def _pool(self, plugin: _Plugin, loop: asyncio.AbstractEventLoop, lane: bool = False) -> WorkerPool:
        """The plugin's pool, or its background lane (BACKGROUND_OPS), created on first use."""
        pool = plugin.lane if lane else plugin.pool
        if pool is None:
            size = BACKGROUND_LANE_SIZE if lane else plugin.concurrency
            pool = WorkerPool(size, lambda p: self._spawn_worker(plugin, p), loop)
            if lane:
                plugin.lane = pool
            else:
                plugin.pool = pool
        return pool

    async def _worker_call(
        self,
        pool: WorkerPool,
        loop: asyncio.AbstractEventLoop,
        frame: bytes,
        rid: bytes | None,
        deadline: float,
        request_id: str = "",
    ) -> tuple[bytes, bytes]:
        """One framed round trip: (reply body, the stderr the worker wrote meanwhile). Raises ProcessFailure."""
        fut: asyncio.Future[bytes] = loop.create_future()
        job = Job(frame, rid, fut, deadline)
        job.request_id = request_id
        pool.submit(job)
        if not fut.done():
            worker = job.worker
            if worker is not None and self._active == 1 and pool.ewma_s < self._spin_s:
                # Alone in flight and the plugin answers fast: busy-poll the reply instead of sleeping
                # in epoll, which saves the wake-up latency (tens of µs on a VM) at a bounded CPU cost.
                poll = worker.proc.poll_stdout
                clock = time.perf_counter
                end = clock() + self._spin_s
                while not fut.done() and job.worker is worker:
                    if not poll() and clock() > end:
                        break
            if not fut.done():
                try:
                    await fut
                except asyncio.CancelledError:
                    pool.cancel(job)
                    raise
        return fut.result(), job.stderr

    # ------------------------------------------------------------------ one-shot mode

    async def _one_shot(
        self,
        plugin: _Plugin,
        loop: asyncio.AbstractEventLoop,
        body: bytes,
        deadline: float,
        artifacts: str | None = None,
        request_id: str = "",
    ) -> OneShotOutcome:
        """Start, write the request, EOF, collect stdout (capped) and the stderr tail, reap."""
        sem = plugin.oneshots
        if sem.locked():
            try:
                async with asyncio.timeout_at(deadline):
                    await sem.acquire()
            except TimeoutError:
                raise ProcessFailure(
                    TIMEOUT,
                    "no free one-shot slot before the deadline",
                    details={"queued": True},
                    crash=False,
                ) from None
        else:
            await sem.acquire()
        try:
            return await self._run_one_shot(plugin, loop, body, deadline, artifacts, request_id)
        finally:
            sem.release()

    async def _run_one_shot(
        self,
        plugin: _Plugin,
        loop: asyncio.AbstractEventLoop,
        body: bytes,
        deadline: float,
        artifacts: str | None,
        request_id: str = "",
    ) -> OneShotOutcome:
        out = OneShotOutcome()
        cap = plugin.max_out
        proc: ChildProcess

        def on_stdout(data: bytes) -> None:
            if out.over_cap:
                return
            out.stdout += data
            if len(out.stdout) > cap:
                out.over_cap = True
                del out.stdout[cap:]
                proc.kill()

        def on_timeout() -> None:
            out.timed_out = True
            proc.kill()

        plugin.spawns += 1
        argv, group = self._command(plugin, [artifacts] if artifacts else [])
        proc = ChildProcess(
            argv,
            group=group,
            cwd=plugin.cwd,
            env=self._env,
            loop=loop,
            on_stdout=on_stdout,
            on_stdout_eof=lambda: None,
            on_exit=lambda code: self._oneshot_procs.discard(proc),
            memory_bytes=self._memory,
            sandboxed=self.sandbox.active,
            log=lambda pid: self.logs.for_process(plugin.id, pid),
        )
        if proc.log is not None:
            proc.log.request = request_id
        self._oneshot_procs.add(proc)
        try:
            proc.write(body)
        except OSError:
            pass  # it exited without reading: the exit code tells why
        proc.close_stdin()
        timer = loop.call_at(deadline, on_timeout)
        try:
            out.code = await asyncio.shield(proc.exited)
        except asyncio.CancelledError:
            proc.kill()
            raise
        finally:
            timer.cancel()
        out.stderr = proc.stderr.value()
        out.limit = proc.limit_exceeded
        return out

    # ------------------------------------------------------------------ observability and shutdown

    def route_llm(self, route: LlmRoute | None) -> None:
        """Where sandboxed LLM plugins' calls go (the kernel's LLM endpoint; see sandbox.py): running
        workers of LLM plugins make way for fresh ones started with the new route."""
        self.sandbox.route_llm(route)
        for plugin in self._plugins.values():
            if plugin.uses_llm:
                for pool in plugin.pools():
                    pool.retire()

    def handoff(self, plugin_id: str) -> HandoffFolder | None:
        """Where `plugin_id`'s units files go (manifest `handoff: file`), else None (units travel inline).
        Raises PluginCallError for a plugin that cannot be called."""
        return self._plugin(plugin_id, "onSourceText").handoff

    def running(self, plugin_id: str) -> bool:
        """The plugin has a live worker now (a call to it starts no process)."""
        plugin = self._plugins.get(plugin_id)
        return plugin is not None and any(w.usable for pool in plugin.pools() for w in pool.workers)

    def before_next_call(self, plugin_id: str, job: HeldJob) -> None:
        """Run `job` right before the next `call` to `plugin_id` (held.py); dropped if none comes."""
        self._held.hold(plugin_id, job)

    def health(self) -> dict[str, dict[str, Any]]:
        """Per registered plugin: mode, workers alive/busy, calls, failures by code, crash-loop state.

        `state` is "idle" (never called), "ok", "degraded" (recent process failures, below the threshold)
        or "backoff" (refusing calls with PLUGIN_UNAVAILABLE for `retryInMs` more).
        """
        now = self._loop.time() if self._loop is not None else 0.0
        report: dict[str, dict[str, Any]] = {}
        for entry in self.registry.list():
            plugin = self._plugins.get(entry.id)
            if plugin is None:
                plugin = _Plugin(entry, self.limits, self.sandbox)
                state = "idle"
            else:
                wait = plugin.breaker.retry_in(now)
                state = "backoff" if wait > 0 else ("degraded" if plugin.breaker.consecutive else "ok")
            pool, pools = plugin.pool, plugin.pools()
            report[entry.id] = {
                "mode": "worker" if plugin.worker else "one-shot",
                "state": state,
                "workers": sum(1 for p in pools for w in p.workers if w.usable),
                "busy": sum(p.busy for p in pools) if pools else plugin.active,
                "queued": sum(len(p.queue) for p in pools),
                "concurrency": plugin.concurrency,
                "calls": plugin.calls,
                "ok": plugin.ok,
                "failures": sum(plugin.errors.values()),
                "errors": dict(plugin.errors),
                "spawns": plugin.spawns,
                "consecutiveFailures": plugin.breaker.consecutive,
                "backoffMs": int(plugin.breaker.backoff_s * 1000),
                "retryInMs": int(plugin.breaker.retry_in(now) * 1000),
                "lastError": msgspec.to_builtins(plugin.last_error) if plugin.last_error else None,
                "avgRoundTripUs": round(pool.ewma_s * 1e6, 1) if pool else None,
            }
        return report

    def _plugins_started(self) -> bool:
        return bool(self._oneshot_procs) or any(
            pool.workers for p in self._plugins.values() for pool in p.pools()
        )

    def pids(self) -> list[int]:
        """Every plugin process currently started and not yet reaped."""
        pids = [proc.pid for proc in self._oneshot_procs]
        for plugin in self._plugins.values():
            for pool in plugin.pools():
                pids.extend(w.pid for w in pool.workers)
        return pids

    async def warm(self, plugin_id: str) -> int:
        """Start a worker plugin's whole pool (and its background lane) ahead of the first call; how many
        workers were started.

        A first call otherwise pays the interpreter start and imports inside its deadline.
        """
        plugin = self._plugin(plugin_id, "")
        loop = self._admit(plugin, "")
        if not plugin.worker:
            return 0
        lanes = [False, *([True] if BACKGROUND_OPS & set(self.registry.get(plugin_id).manifest.ops) else [])]
        try:
            return sum(self._pool(plugin, loop, lane).fill() for lane in lanes)
        except ProcessFailure as failure:
            self._raise(plugin, "", failure)

    async def aclose(self) -> None:
        """Stop every plugin process: EOF to idle workers, then SIGKILL to whatever is left; reap all."""
        self._closed = True
        self._held.drop()
        procs: list[ChildProcess] = list(self._oneshot_procs)
        for proc in procs:
            proc.kill()
        for plugin in self._plugins.values():
            for pool in plugin.pools():
                pool.close()
                procs.extend(w.proc for w in pool.workers)
        waiting = [p.exited for p in procs if not p.exited.done()]
        if waiting:
            await asyncio.wait(waiting, timeout=self._close_grace_s)
        for proc in procs:
            proc.kill()
        waiting = [p.exited for p in procs if not p.exited.done()]
        if waiting:
            await asyncio.wait(waiting, timeout=5.0)
        await cgroups.settle()
        self.logs.close()
