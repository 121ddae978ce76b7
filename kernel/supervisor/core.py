"""The supervisor: call a plugin by id and op, get a parsed CNL document or a structured error.

Per call the kernel does the minimum: one dict lookup, one encode, one write, one parse. Everything
about a process (pipes, exit, limits) lives in `process.py`; framing and the one-request-at-a-time rule
in `worker.py`; the pool (a dispatcher) in `pool.py`; the crash-loop throttle in `breaker.py`. The
`Supervisor` here holds the two entry points and shutdown; it stacks the call modes (`one_shot_mode.py`,
`worker_mode.py`) on the shared state and helpers (`supervisor_base.py`, `plugin_state.py`).

Choices worth knowing:
- deadline = min(manifest timeoutMs, timeout_s) (only timeout_s for an LLM plugin's call the kernel gave
  more time for its LLM calls: `beyond_manifest`), measured from the call (queueing and a cold worker's
  start included); the request carries it as budget.deadlineMs. `limits.pluginTimeoutMs` is not applied:
  the manifest's own timeout wins (`warm()` takes a cold start out of the first call).
- `limits.pluginMemoryMB` becomes RLIMIT_AS, set with prlimit(2) right after the exec (no preexec_fn, so
  Popen keeps its fast vfork path); with cgroups it also caps a plugin and its children together, as
  `limits.pluginProcesses` caps their count (cgroups.py; a call ended there fails with SANDBOX_LIMIT).
- output cap = min(manifest maxOutputBytes, limits.maxOutputBytes).
- busy-poll: a call alone in flight to a plugin whose replies come within `spin_us` polls the pipe instead
  of sleeping in epoll (saves the wake-up latency, tens of µs on a VM); 0 turns it off.
- a pure gs-plugin (manifest `pure`): its warm solve replies are kept by request content (`reply_memo.py`);
  an identical request is answered from there (CallResult.mode "memo"), no worker involved.
- crash loop: CRASHED, SPAWN_FAILED, kernel TIMEOUT kills, PROTOCOL_ERROR and OUTPUT_TOO_LARGE count; an
  answer of any kind (even INVALID_CNL or exit 1) resets the count.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from mrpvm.protocol.envelope import Request, encode_request
from mrpvm.protocol.framing import encode_frame
from mrpvm.protocol.vocab import MAIN_OP

from . import cgroups, early_launch
from .errors import (
    CRASHED,
    INTERNAL_ERROR,
    OUTPUT_TOO_LARGE,
    TIMEOUT,
    CallResult,
    PluginCallError,
    ProcessFailure,
    RawReply,
)
from .handoff import HandoffFolder
from .held import HeldJob
from .one_shot_mode import OneShotMode
from .oneshot import one_shot_result
from .plugin_state import PluginState, peek_op, peek_request
from .process import ChildProcess
from .reply_memo import memo_key as memo_key_of
from .reply_read import read_reply
from .sandbox import LlmRoute
from .supervisor_base import DEFAULT_LIMITS, SupervisorBase
from .worker_mode import BACKGROUND_OPS

__all__ = ["DEFAULT_LIMITS", "Supervisor", "SupervisorBase"]


class Supervisor(OneShotMode):
    """Runs plugins as subprocesses: warm worker pools or one-shot processes, with limits and no orphans."""

    async def __aenter__(self) -> Supervisor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ the two entry points

    async def call(
        self,
        plugin_id: str,
        request: Request,
        *,
        timeout_s: float | None = None,
        beyond_manifest: bool = False,
        on_reply: Callable[[], Awaitable[object]] | None = None,
    ) -> CallResult:
        """Run one op; a parsed, validated document (any Status) or PluginCallError, never anything else.

        `beyond_manifest`: `timeout_s` is the deadline even past the manifest's timeoutMs (the kernel's
        time for a plugin's LLM calls on a slow endpoint, kernel/llm/pace.py). `on_reply`: awaited once
        the plugin's reply has arrived, before the kernel parses it (an ingest starts its kb workers there,
        beside the parse of a large tree).

        An unexpected exception while handling the call (a kernel bug, a resource run out) becomes an
        INTERNAL_ERROR failure of this call, so a turn moves to its next candidate instead of dying.
        """
        try:
            if self._held.pending(plugin_id):
                await self._held.release(plugin_id)
            return await self._call(plugin_id, request, timeout_s, beyond_manifest, on_reply)
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

    async def _call(
        self,
        plugin_id: str,
        request: Request,
        timeout_s: float | None,
        beyond_manifest: bool,
        on_reply: Callable[[], Awaitable[object]] | None = None,
    ) -> CallResult:
        op: str = request.op or ""
        plugin = self._plugin(plugin_id, op)
        op = op or MAIN_OP[plugin.type]
        start = time.perf_counter()
        loop = self._admit(plugin, op)
        deadline_ms = self._deadline_ms(plugin, timeout_s, beyond_manifest)
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
        memo = plugin.memo if op == MAIN_OP[plugin.type] else None  # a pure worker's kept replies
        memo_key = memo_key_of(request) if memo is not None else b""
        cached = memo.get(memo_key) if memo is not None else None
        leader = False
        if memo is not None and cached is None:  # an identical call in flight is joined (reply_memo.py)
            cached = await memo.join(memo_key, deadline - loop.time())
            leader = cached is None and memo.lead(memo_key)
        plugin.calls += 1
        plugin.active += 1
        self._active += 1
        try:
            try:
                if cached is not None:
                    data, stderr, mode = cached, b"", "memo"  # a pure plugin's reply to this same request
                elif plugin.worker:
                    lane = op in BACKGROUND_OPS
                    pool = self._background_pool(plugin, loop) if lane else self._pool(plugin, loop)
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
            if on_reply is not None:
                await on_reply()
            try:
                document, shipped, text = read_reply(data, op, plugin.compact_reply)
            except ProcessFailure as failure:
                self._raise(plugin, op, failure)
            if memo is not None and cached is None and document.result.status != "error":
                memo.put(memo_key, data)
        finally:
            if leader and memo is not None:  # its joiners get what was kept, or call themselves
                memo.land(memo_key)
        plugin.ok += 1
        return CallResult(
            pluginId=plugin.id,
            op=op,
            document=document,
            durationMs=(time.perf_counter() - start) * 1000.0,
            mode=mode,
            stderrTail=stderr.decode("utf-8", "replace") if document.result.status == "error" else "",
            cnl=text,
            shipped=shipped,
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
            raise self._unexpected(plugin_id, peek_op(body), err) from err

    async def _call_raw(
        self, plugin_id: str, body: bytes, timeout_s: float | None, one_shot: bool
    ) -> RawReply:
        peek = peek_request(body)
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

    # ------------------------------------------------------------------ observability and shutdown

    def route_llm(self, route: LlmRoute | None) -> None:
        """Where sandboxed LLM plugins' calls go (sandbox.py); their running workers make way for new ones."""
        self.sandbox.route_llm(route)
        for plugin in self._plugins.values():
            if plugin.uses_llm:
                for pool in plugin.pools():
                    pool.retire()

    def handoff(self, plugin_id: str) -> HandoffFolder | None:
        """Where `plugin_id`'s units files go (manifest `handoff: file`), else None; PluginCallError if uncallable."""
        return self._plugin(plugin_id, "onSourceText").handoff

    def running(self, plugin_id: str) -> bool:
        """The plugin has a live worker now (a call to it starts no process)."""
        plugin = self._plugins.get(plugin_id)
        return plugin is not None and any(w.usable for pool in plugin.pools() for w in pool.workers)

    def before_next_call(self, plugin_id: str, job: HeldJob) -> None:
        """Run `job` right before the next `call` to `plugin_id` (held.py); dropped if none comes."""
        self._held.hold(plugin_id, job)

    def release_held_to_started(self) -> list[str]:
        """Deliver in the background what is held for the plugins with a started worker (held.start_where)."""
        return self._held.start_where(self.running)

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
                plugin = PluginState(entry, self.limits, self.sandbox)
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
                "memoHits": plugin.memo.hits if plugin.memo is not None else None,  # reply_memo.py
            }
        return report

    def pids(self) -> list[int]:
        """Every plugin process currently started and not yet reaped."""
        pids = [proc.pid for proc in self._oneshot_procs]
        for plugin in self._plugins.values():
            for pool in plugin.pools():
                pids.extend(w.pid for w in pool.workers)
        return pids

    async def warm(self, plugin_id: str, workers: int | None = None, artifacts: str | None = None) -> int:
        """Start a worker plugin's whole pool (and its background lane) ahead of the first call, or only
        up to `workers` live workers in each; how many workers were started.

        A first call otherwise pays the interpreter start and imports inside its deadline. `artifacts`:
        the folder the coming call names (a new KB's): bound by the workers started now, so that call
        does not retire them for fresh ones (binds.py).
        """
        plugin = self._plugin(plugin_id, "")
        loop = self._admit(plugin, "")
        if not plugin.worker:
            return 0
        if artifacts:
            self._artifacts(plugin, "", artifacts, for_worker=True)
        lanes = [False, *([True] if BACKGROUND_OPS & set(self.registry.get(plugin_id).manifest.ops) else [])]
        try:
            return sum(self._pool(plugin, loop, lane).fill(workers) for lane in lanes)
        except ProcessFailure as failure:
            self._raise(plugin, "", failure)

    async def aclose(self, *, detach: bool = False) -> None:
        """Stop every plugin process: EOF to idle workers, then SIGKILL to whatever is left; reap all.
        `detach` (a process that ends right after, its answer given): after the EOF, the workers' ends and
        their control groups' removal are left to a reaper that runs once this process has ended
        (cgroups.hand_over, reaper.py), where every process is in one of this kernel's groups."""
        self._closed = True
        self._held.drop()
        early_launch.stop_all()  # launched for a turn that did not start them (early_launch.py)
        procs: list[ChildProcess] = list(self._oneshot_procs)
        for proc in procs:
            proc.kill()
        for plugin in self._plugins.values():
            for pool in plugin.pools():
                pool.close()
                procs.extend(w.proc for w in pool.workers)
        live = [p for p in procs if not p.exited.done()]
        if detach and live and cgroups.hand_over([p.group for p in live], self._close_grace_s):
            self.logs.close()
            return
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
