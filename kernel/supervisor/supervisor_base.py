"""The supervisor's state and the helpers both call modes share: plugin lookup and admission, deadlines,
the sandbox's artifacts folders, and how a failure is recorded (kernel/supervisor/core.py composes them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from mrpvm.kernel.config import LimitsConfig
from mrpvm.kernel.errors import UnknownPluginError
from mrpvm.kernel.registry import Registry

from . import cgroups, probe_cache
from .cgroups import Group
from .errors import (
    CRASHED,
    INPUT_TOO_LARGE,
    PLUGIN_UNAVAILABLE,
    PROTOCOL_ERROR,
    SHUTDOWN,
    TIMEOUT,
    UNKNOWN_PLUGIN,
    CallError,
    PluginCallError,
    ProcessFailure,
)
from .held import HeldWork
from .plugin_log import PluginLogs
from .plugin_state import PluginState
from .process import ChildProcess, worker_env
from .sandbox import Sandbox, announce, protect_kernel

DEFAULT_LIMITS = LimitsConfig(
    pluginTimeoutMs=15000,
    pluginMemoryMB=2048,
    maxOutputBytes=16 << 20,
    crashLoopThreshold=3,
    crashBackoffMs=1000,
    crashBackoffMaxMs=60000,
)
SPIN_US = 200  # busy-poll a worker's reply this long when it is the only call in flight (_worker_call)
CLOSE_GRACE_S = 1.0


class SupervisorBase:
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
        self._env = worker_env(extra_env)
        self._memory = self.limits.pluginMemoryMB << 20
        self.sandbox.status.limits = cgroups.status(
            self.limits.pluginProcesses, self.limits.pluginMemoryMB, self.sandbox.active
        )
        self._spin_s = spin_us / 1e6
        self._close_grace_s = close_grace_s
        self._plugins: dict[str, PluginState] = {}
        self._held = HeldWork()
        self._oneshot_procs: set[ChildProcess] = set()
        # plugin id -> how its last worker was started: what early_launch.record keeps for the next process
        self.launches: dict[str, dict[str, object]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._seq = 0
        self._active = 0
        self._closed = False

    # ------------------------------------------------------------------ lookup

    @property
    def environment(self) -> dict[str, str]:
        """The environment every plugin process gets (process.worker_env: PATH, HOME, LANG, MRPVM_* and
        the extra), a copy."""
        return dict(self._env)

    def _plugins_started(self) -> bool:
        return bool(self._oneshot_procs) or any(
            pool.workers for p in self._plugins.values() for pool in p.pools()
        )

    def _plugin(self, plugin_id: str, op: str) -> PluginState:
        plugin = self._plugins.get(plugin_id)
        if plugin is None:
            try:
                entry = self.registry.get(plugin_id)
            except UnknownPluginError as err:
                raise PluginCallError(
                    CallError(code=UNKNOWN_PLUGIN, message=str(err), plugin=plugin_id, op=op)
                ) from None
            plugin = self._plugins[plugin_id] = PluginState(entry, self.limits, self.sandbox)
        return plugin

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, this supervisor bound to it: on the first call or prestart, or again when
        nothing runs; a supervisor whose processes run on another loop raises RuntimeError."""
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
        return loop

    def _admit(self, plugin: PluginState, op: str) -> asyncio.AbstractEventLoop:
        if self._closed:
            self._raise(plugin, op, ProcessFailure(SHUTDOWN, "the supervisor is shut down"), count=False)
        loop = self._bind_loop()
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

    def _deadline_ms(
        self, plugin: PluginState, timeout_s: float | None, beyond_manifest: bool = False
    ) -> int:
        if timeout_s is None:
            return plugin.timeout_ms
        if beyond_manifest:  # the kernel gave an LLM plugin's call the time its LLM calls need
            return max(1, int(timeout_s * 1000))
        return max(1, min(plugin.timeout_ms, int(timeout_s * 1000)))

    # ------------------------------------------------------------------ the sandbox's artifacts folders

    def _artifacts(
        self, plugin: PluginState, op: str, path: str | None, *, for_worker: bool | None = None
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

    def _command(self, plugin: PluginState, writable: list[str]) -> tuple[list[str], Group | None]:
        """The argv that starts one process of `plugin`, and the control group it joins (cgroups.py), or
        with no group where cgroups are out of reach, the RLIMIT_NPROC fallback inside the sandbox."""
        group = cgroups.new_group(self.limits.pluginProcesses, self._memory)
        argv = self._argv(plugin, writable, grouped=group is not None)
        return (group.launcher(argv) if group is not None else argv), group

    def _argv(self, plugin: PluginState, writable: list[str], *, grouped: bool) -> list[str]:
        """The command line of one process of `plugin` (without a control group's launcher); `grouped`: it
        starts inside a control group (else the RLIMIT_NPROC fallback applies inside the sandbox)."""
        processes = self.limits.pluginProcesses
        nproc = processes if not grouped and self.sandbox.active and cgroups.nproc_applies() else None
        return self.sandbox.command(
            plugin.argv,
            plugin.cwd,
            llm=plugin.uses_llm,
            writable=writable,
            readable=[plugin.handoff.path] if plugin.handoff is not None else [],
            memory_bytes=self._memory,
            processes=nproc,
        )

    # ------------------------------------------------------------------ errors and accounting

    def _check_size(self, plugin: PluginState, op: str, body: bytes) -> None:
        if len(body) > plugin.max_in:
            failure = ProcessFailure(
                INPUT_TOO_LARGE,
                f"request of {len(body)} bytes exceeds maxInputSizeBytes {plugin.max_in}; not started",
                details={"size": len(body), "limit": plugin.max_in},
            )
            self._raise(plugin, op, failure, count=False)

    def _record(self, plugin: PluginState, op: str, failure: ProcessFailure, count: bool = True) -> CallError:
        if self._closed and failure.code in (CRASHED, TIMEOUT, PROTOCOL_ERROR):
            failure.code, failure.message = SHUTDOWN, f"shut down during the call ({failure.message})"
        if self.sandbox.active and failure.stderr and probe_cache.failed_in_bwrap(failure.stderr):
            probe_cache.forget(self.sandbox.home)  # a kept probe may have vouched for a sandbox that fails
        error = failure.to_error(plugin.id, op)
        plugin.errors[error.code] += 1
        plugin.last_error = error
        if count and self._loop is not None:
            if failure.crash:
                plugin.breaker.failure(self._loop.time())
            elif error.code not in (SHUTDOWN, TIMEOUT):
                plugin.breaker.success()  # the process answered: it is not crash-looping
        return error

    def _raise(self, plugin: PluginState, op: str, failure: ProcessFailure, count: bool = True) -> NoReturn:
        raise PluginCallError(self._record(plugin, op, failure, count)) from None
