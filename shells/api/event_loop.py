"""The daemon's event loop: uvloop (libuv) when it is installed, else asyncio's own.

`mrpvm serve` runs on uvloop: the same HTTP, worker pipes (`add_reader`), pidfd reaping, timers and
`call_soon_threadsafe` cost its one loop thread less CPU a turn than asyncio's selector loop
(bench/ISSUE22_FIGURES.md, session 19 perf17). `MRPVM_EVENT_LOOP` chooses: `auto` (default: uvloop when
it imports, else asyncio), `uvloop` (refused when it is not installed) or `asyncio`. The one-shot CLI
keeps asyncio's loop: importing uvloop costs a cold `mrpvm ask` more CPU than its few turns save.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

ENV = "MRPVM_EVENT_LOOP"
CHOICES = ("auto", "uvloop", "asyncio")

T = TypeVar("T")


class EventLoopError(ValueError):
    """MRPVM_EVENT_LOOP names no loop, or names uvloop where it is not installed."""


def loop_factory(environ: Mapping[str, str] | None = None) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory of the loop MRPVM_EVENT_LOOP asks for (None: asyncio's default loop)."""
    source = os.environ if environ is None else environ
    choice = (source.get(ENV) or "auto").strip().lower()
    if choice not in CHOICES:
        raise EventLoopError(f"{ENV}={source.get(ENV)!r}: expected one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise EventLoopError(f"{ENV}=uvloop but uvloop is not installed") from None
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], environ: Mapping[str, str] | None = None) -> T:
    """`asyncio.run(main)` on the loop MRPVM_EVENT_LOOP asks for."""
    try:
        factory = loop_factory(environ)
    except EventLoopError:
        main.close()  # never awaited: no "coroutine was never awaited" warning
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def running_loop_name() -> str:
    """`uvloop` or `asyncio`: the loop this coroutine runs on (for /ready)."""
    loop = asyncio.get_running_loop()
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
