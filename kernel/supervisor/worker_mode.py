"""Worker mode (kernel/supervisor/core.py): one pool of long-lived framed workers per plugin and event loop."""

from __future__ import annotations

import asyncio
import os
import time

from . import early_launch
from .plugin_state import PluginState
from .pool import WorkerPool
from .process import NOTHING_KEPT_FLAG, WORKER_FLAG
from .supervisor_base import PluginCallError, ProcessFailure, SupervisorBase
from .worker import Job, Worker

# Ops no caller waits for (a turn answers before its recordOutcome ends) run on a lane of workers of their
# own, so they never queue ahead of a call someone waits for (buildPlan on the same planner). Two workers:
# a session's next turn waits for its last outcome before it plans, and one worker serving every session's
# outcome (daemon, 20 sessions, ~120 turns/s on a busy 2-core machine) kept a queue that made 93 % of turns
# wait for it, 45 ms at the median; with two, a wait is rare.
BACKGROUND_OPS = frozenset({"recordOutcome"})
BACKGROUND_LANE_SIZE = 2


class WorkerMode(SupervisorBase):
    # ------------------------------------------------------------------ worker mode

    def _spawn_worker(self, plugin: PluginState, pool: WorkerPool) -> Worker:
        plugin.spawns += 1
        sandboxed = plugin.binds is not None
        writable = plugin.binds.for_worker() if plugin.binds is not None else []
        env = {**self._env, WORKER_FLAG: "1"}
        early = early_launch.take(
            plugin.id, lambda grouped: self._argv(plugin, writable, grouped=grouped), str(plugin.cwd), env
        )
        if early is not None:
            argv, group = early.argv, early.group
        else:
            argv, group = self._command(plugin, writable)
        self.launches[plugin.id] = {
            "argv": argv if group is None else self._argv(plugin, writable, grouped=True),
            "cwd": str(plugin.cwd),
            "env": env,
            "grouped": group is not None,
            "processes": self.limits.pluginProcesses,
            "memory": self._memory,
        }
        # a sandboxed worker binding only empty artifacts folders keeps nothing yet, and a one-turn process's new
        # question (early_launch.hint): said to the worker alone (the early-launch record keeps `env`, so neither
        # hint reaches the next process)
        nothing_kept = sandboxed and early is None and bool(writable) and not any(map(os.listdir, writable))
        said = {**early_launch.hint(), **({NOTHING_KEPT_FLAG: "1"} if nothing_kept else {})}
        return Worker(
            argv,
            group=group,
            cwd=plugin.cwd,
            env={**self._env, **said} if said else self._env,
            loop=pool.loop,
            max_output=plugin.max_out,
            memory_bytes=self._memory,
            pool=pool,
            sandboxed=sandboxed,
            relayed=self.sandbox.relays(plugin.uses_llm),
            log=lambda pid: self.logs.for_process(plugin.id, pid),
            popen=early.popen if early is not None else None,
        )

    def prestart(self, plugin_id: str, artifacts: str | None = None) -> bool:
        """Start one worker of a plugin a turn is about to call, when none runs yet, without waiting for it:
        a cold `mrpvm ask` overlaps that start (interpreter, imports, the sentence model) with the stages
        before the call. Whatever stands in the way (unknown, one-shot, crash-looping, another loop's
        supervisor, a spawn failure) is left to the call itself, which reports it; True when one started.
        `artifacts`: the folder the turn's calls will name, bound (created) now: a folder first named by
        the call would retire this worker for a fresh one (a fresh home's every prestart was lost)."""
        plugin = self._plugins.get(plugin_id)
        if plugin is None:
            try:
                plugin = self._plugin(plugin_id, "")
            except PluginCallError:
                return False
        if self._closed or not plugin.worker:
            return False
        # before any call (a one-turn process starts its workers first) bind as the first call would
        loop = self._bind_loop() if self._loop is None else asyncio.get_running_loop()
        if loop is not self._loop:
            return False
        pool = self._pool(plugin, loop)
        if pool.slots or plugin.breaker.retry_in(loop.time()) > 0.0:
            return False
        try:
            if artifacts and not os.path.isdir(artifacts):  # one that exists is bound already
                self._artifacts(plugin, "", artifacts, for_worker=True)
            return pool.fill(upto=1) == 1
        except (ProcessFailure, PluginCallError):
            return False

    def _pool(self, plugin: PluginState, loop: asyncio.AbstractEventLoop, lane: bool = False) -> WorkerPool:
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

    def _background_pool(self, plugin: PluginState, loop: asyncio.AbstractEventLoop) -> WorkerPool:
        """Where a BACKGROUND_OPS call runs: its lane; but while the lane has no worker and the main pool
        has an idle one (a one-turn `mrpvm ask`: its recordOutcome would start a whole worker for a call
        nobody waits for), that idle worker. A daemon starts its lanes with its pools (`warm`)."""
        lane, main = plugin.lane, plugin.pool
        if (lane is None or lane.slots == 0) and main is not None and any(w.usable for w in main.idle):
            return main
        return self._pool(plugin, loop, lane=True)

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
