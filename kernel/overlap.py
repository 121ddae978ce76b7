"""Plugin calls that overlap: independent calls run side by side, and calls started ahead of their turn.

The supervisor is asyncio-only, so plain asyncio tasks are used (a fraction of an anyio task group's
cost); a cancelled waiter cancels the task it awaits, so cancel scopes around a turn still reach them.

`hold_spin` counts one more call in flight on the supervisor while a batch of calls starts: the
supervisor busy-polls a fast plugin's reply when that call is the only one in flight, which would keep
the next call of the batch from sending its request until the reply came. It reads the supervisor's
private in-flight counter (`_active`); a public hook on the supervisor would be the cleaner way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from mrpvm.protocol.envelope import Request

from .supervisor import CallResult, PluginCallError

if TYPE_CHECKING:
    from .stages import TurnState


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
    if supervisor is None or not hasattr(supervisor, "_active"):
        yield
        return
    supervisor._active += 1
    try:
        yield
    finally:
        supervisor._active -= 1


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
        # Counted as in flight from now on, so the call the caller makes meanwhile does not busy-poll
        # its reply (see `hold_spin`) before this one has sent its request.
        self._hold: Any = state.ctx.supervisor if hasattr(state.ctx.supervisor, "_active") else None
        if self._hold is not None:
            self._hold._active += 1
        self.task = asyncio.get_running_loop().create_task(self._run())
        self.task.add_done_callback(lambda _: self._release())

    def _release(self) -> None:
        if self._hold is not None:
            self._hold._active -= 1
            self._hold = None

    async def _run(self) -> None:
        state = self.state
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
