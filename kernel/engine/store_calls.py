"""A turn's store reads and writes off the turn's path: inline on an embedded store, on a thread on a server.

On SQLite (the default) a planner's learned records and its observations are one local statement or one
short transaction, like the turn's own commit, which runs inline on the event loop: a thread hop
(anyio's worker queue, a futex wake-up each way, the loop's self-pipe) costs more CPU than the statement
(issue 22: ~1 ms a turn in the daemon, for two hops). On PostgreSQL each is a server round trip, so it
runs on a worker thread and the loop serves other turns meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread

if TYPE_CHECKING:
    from ..store import Store

T = TypeVar("T")


async def store_call(store: Store, fn: Callable[..., T], *args: object) -> T:
    """`fn(*args)`: inline when the store is embedded (SQLite), else on a worker thread."""
    if store.backend == "sqlite":
        return fn(*args)
    return await anyio.to_thread.run_sync(fn, *args)
