"""Plugin calls that overlap: independent calls run side by side, and calls started ahead of their turn.

The supervisor is asyncio-only, so plain asyncio tasks are used (a fraction of an anyio task group's
cost); a cancelled waiter cancels the task it awaits, so cancel scopes around a turn still reach them.

`Background` holds the calls a turn leaves running once its answer is ready (recordOutcome): a later
turn waits for the ones pending when it started before it calls the same plugin, so it sees exactly
what it would have seen had they run in sequence; `KernelContext.aclose` drains them.

`hold_spin` is the supervisor's `starting_batch()` (one more call counted in flight while a batch of
calls starts): the supervisor busy-polls a fast plugin's reply when that call is the only one in
flight, which would keep the next call of the batch from sending its request until the reply came.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from mrpvm.protocol.envelope import Request

from ..supervisor import CallResult, PluginCallError

if TYPE_CHECKING:
    from .stages import TurnState

log = logging.getLogger("mrpvm.kernel")


async def run_all(calls: list[Callable[[], Awaitable[Any]]], supervisor: Any = None) -> None:
    """Run independent calls concurrently (see `concurrently`); one call runs inline."""
    if len(calls) == 1:
        await calls[0]()
    elif calls:
        async with concurrently(calls, supervisor):
            pass


@asynccontextmanager
async def concurrently(
    calls: list[Callable[[], Awaitable[Any]]], supervisor: Any = None
) -> AsyncIterator[None]:
    """Start independent calls as tasks, in list order (their trace nodes keep that order), let each
    send its request, run the body, then wait for every call. If the body or a call fails, or the turn
    is cancelled, the calls still running are cancelled.

    """
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(fn()) for fn in calls]
    try:
        with hold_spin(supervisor):
            await asyncio.sleep(0)  # every task runs up to its first wait: its request is sent
        yield
        for task in tasks:
            await task
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


@contextmanager
def hold_spin(supervisor: Any) -> Iterator[None]:
    """While calls are being started together, none may busy-poll its reply.

    The supervisor busy-polls a fast plugin's reply when that call is the only one in flight, which
    would keep the next task from sending its request until the reply came; counting one more call in
    flight while the batch starts keeps every call of the batch on the event loop.
    """
    starting = getattr(supervisor, "starting_batch", None)
    if starting is None:
        yield
        return
    with starting():
        yield


class Early:
    """A plugin call started before its turn in the stage logic, to overlap another plugin's call.

    Only the supervisor call runs early: the trace node, the attempt, the failure memory and the
    planner's attempt list are recorded when (and only if) the stage logic reaches that call, exactly as
    for a call made then (`TurnState.call(..., early=...)`); an early call never reached is recorded as
    an `event` node by `discard`. Started only for plugins that declare no LLM calls.
    """

    def __init__(self, state: TurnState, plugin_id: str, request: Request, timeout_s: float):
        self.state = state
        self.plugin_id = plugin_id
        self.request = request
        self.timeout_s = timeout_s
        self.started = time.perf_counter()
        self.result: CallResult | None = None
        self.failure: PluginCallError | None = None
        self.used = False
        self.key: tuple[str, ...] | None = None  # the memo key of the call it stands for
        # `follow(self)`, run once this call answered, may start the call that would come next on its
        # result (an early retrieve's solve): kept as `next`, used or discarded like this one
        self.follow: Callable[[Early], Early | None] | None = None
        self.next: Early | None = None
        # Counted as in flight from now on, so the call the caller makes meanwhile does not busy-poll
        # its reply (see `hold_spin`) before this one has sent its request.
        self._hold: Any = hold_spin(state.ctx.supervisor)
        self._hold.__enter__()
        self.task = asyncio.get_running_loop().create_task(self._run())
        self.task.add_done_callback(lambda _: self._release())

    def _release(self) -> None:
        if self._hold is not None:
            hold, self._hold = self._hold, None
            hold.__exit__(None, None, None)

    async def _run(self) -> None:
        state = self.state
        if state._earlier and self.plugin_id in state._earlier:
            await state.after_earlier(self.plugin_id)
        self._release()
        state._busy()
        try:
            self.result = await state.ctx.supervisor.call(
                self.plugin_id, self.request, timeout_s=self.timeout_s
            )
        except PluginCallError as err:
            self.failure = err
        finally:
            state._idle()
        if self.follow is not None and self.result is not None:
            try:
                self.next = self.follow(self)
            except Exception:  # noqa: BLE001 - a follow-up is an optimisation: the stage logic calls anyway
                log.exception("could not start the call that follows an early %s", self.request.op)

    async def outcome(self) -> tuple[CallResult | None, PluginCallError | None]:
        self.used = True
        await self.task
        return self.result, self.failure

    async def settle(self) -> None:
        """Wait for the call to end. An unused call's unexpected failure is not the turn's: a call made
        in sequence would never have been made."""
        try:
            await self.task
        except Exception:
            if self.used:
                raise

    def cancel(self) -> None:
        self.task.cancel()
        if self.next is not None:
            self.next.cancel()

    def discard(self, parent: str, frame_id: str, reason: str) -> None:
        """Record an early call the stage logic did not use (its result is dropped)."""
        if self.used:
            return
        self.used = True
        if self.failure is not None:
            status = self.failure.error.code
        elif self.result is not None:
            status = self.result.document.result.status
        else:
            status = "error" if self.task.done() else "running"
        node = self.state.trace.node(
            "event",
            f"early {self.request.op} by {self.plugin_id} not used: {reason}",
            parent=parent,
            frameId=frame_id,
            pluginId=self.plugin_id,
            status="unused",
            output={"callStatus": status},
        )
        node.durationMs = 0.0


class Background:
    """Plugin calls left running after a turn answered (one per kernel context: `ctx.background`).

    A job is tagged with the plugin ids it calls, the session it belongs to and its scope: the KB the
    turn had mounted (None: none), since a plugin keeps what it learns per KB (its artifact folder).
    `snapshot(scope)` (taken when a turn starts) and `wait_for(...)` let a later turn wait, before
    calling a plugin, for exactly the jobs of its scope calling it that were pending when it started;
    a turn on another KB never waits for them. A job's failure is logged, never raised to a waiter: the
    turn that started it has already answered.
    """

    def __init__(self) -> None:
        # job -> (plugin ids it calls, its session, its scope, the tasks a later call to those plugins
        # waits for)
        self._jobs: dict[
            asyncio.Task, tuple[frozenset[str], str | None, str | None, tuple[asyncio.Task, ...]]
        ] = {}

    def __len__(self) -> int:
        return len(self._jobs)

    def start(
        self,
        job: Awaitable[Any],
        plugin_ids: Iterable[str],
        session_id: str | None = None,
        calls: Iterable[asyncio.Task] = (),
        scope: str | None = None,
    ) -> asyncio.Task:
        """Run `job`; a later turn of `scope` calling one of `plugin_ids` waits for `calls` (the job's
        plugin calls; default: the whole job), not for the bookkeeping the job does after them."""
        task = asyncio.get_running_loop().create_task(job)
        self._jobs[task] = (frozenset(plugin_ids), session_id, scope, tuple(calls) or (task,))
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task) -> None:
        self._jobs.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("a background plugin call failed", exc_info=task.exception())

    def snapshot(self, scope: str | None) -> dict[str, list[asyncio.Task]]:
        """Plugin id -> the calls to it still running in a job of `scope` now (empty when none: the
        common case)."""
        if not self._jobs:
            return {}
        out: dict[str, list[asyncio.Task]] = {}
        for plugin_ids, _, job_scope, calls in self._jobs.values():
            if job_scope != scope:
                continue
            waits = [c for c in calls if not c.done()]
            for plugin_id in plugin_ids if waits else ():
                out.setdefault(plugin_id, []).extend(waits)
        return out

    def pending(self, session_id: str | None = None) -> list[asyncio.Task]:
        """Jobs still running (of one session when given)."""
        return [t for t, (_, s, _, _) in self._jobs.items() if session_id is None or s == session_id]

    @staticmethod
    async def wait_for(tasks: Iterable[asyncio.Task]) -> None:
        """Wait until these jobs end; their outcome is theirs (failures are logged by `_done`).
        Cancelling the waiter does not cancel the jobs."""
        waiting = [t for t in tasks if not t.done()]
        if waiting:
            await asyncio.wait(waiting)

    async def drain(self, session_id: str | None = None) -> None:
        """Wait for every pending job (of one session when given), including jobs started meanwhile."""
        while jobs := self.pending(session_id):
            await self.wait_for(jobs)
