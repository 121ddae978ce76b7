"""Independent plugin calls side by side (docs/ARCHITECTURE.md §4, "Overlap").

The supervisor is asyncio-only, so plain asyncio tasks are used (a fraction of an anyio task group's
cost); a cancelled waiter cancels the task it awaits, so cancel scopes around a turn still reach them.

`hold_spin` is the supervisor's `starting_batch()` (one more call counted in flight while a batch of
calls starts): the supervisor busy-polls a fast plugin's reply when that call is the only one in
flight, which would keep the next call of the batch from sending its request until the reply came.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..supervisor import Supervisor

PendingCall = Callable[[], Coroutine[Any, Any, Any]]  # a plugin call not started yet


async def run_all(calls: list[PendingCall], supervisor: Supervisor | None = None) -> None:
    """Run independent calls concurrently (see `concurrently`); one call runs inline."""
    if len(calls) == 1:
        await calls[0]()
    elif calls:
        async with concurrently(calls, supervisor):
            pass


@asynccontextmanager
async def concurrently(calls: list[PendingCall], supervisor: Supervisor | None = None) -> AsyncIterator[None]:
    """Start independent calls as tasks, in list order (their trace nodes keep that order), let each
    send its request, run the body, then wait for every call. If the body or a call fails, or the turn
    is cancelled, the calls still running are cancelled."""
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(fn()) for fn in calls]
    try:
        await let_requests_out(supervisor)  # every task runs up to its first wait: its request is sent
        yield
        for task in tasks:
            await task
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


async def let_requests_out(supervisor: Supervisor | None) -> None:
    """One event-loop trip in which the calls just started send their requests, none busy-polling."""
    with hold_spin(supervisor):
        await asyncio.sleep(0)


@contextmanager
def hold_spin(supervisor: Supervisor | None) -> Iterator[None]:
    """While calls are being started together, none may busy-poll its reply.

    The supervisor busy-polls a fast plugin's reply when that call is the only one in flight, which
    would keep the next task from sending its request until the reply came; counting one more call in
    flight while the batch starts keeps every call of the batch on the event loop.
    """
    if supervisor is None:
        yield
        return
    with supervisor.starting_batch():
        yield
