"""`mrpvm serve` timing each wait of a turn for an earlier turn's background call (its session's last
recordOutcome) before it calls that planner; from SIGUSR1 on, a summary written at exit. With it, what such
a wait is made of (`parts`, wall ms): each recordOutcome call's round trip, each batch's fold, and the event
loop's lag (how late a 5 ms sleep wakes up: what every resumption of a waiting task pays).

PERF_WAITS=out.json CHECKOUT/.venv/bin/python daemon_waits.py serve --port 0
(daemon_kb_load.py --waits out.json signals it after the warm-up and reports the summary)
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import signal
import sys
import time
from typing import Any

WAITS: list[float] = []
PARTS: dict[str, list[float]] = {"outcome_call": [], "fold": [], "loop_lag": []}
ON = [False]
LAG_TICK_S = 0.005


def install() -> None:
    from mrpvm.kernel.engine.scope import TurnCalls

    orig = TurnCalls.after_earlier

    async def after_earlier(self: TurnCalls, plugin_id: str) -> None:
        t = time.perf_counter()
        try:
            await orig(self, plugin_id)
        finally:
            if ON[0]:
                WAITS.append((time.perf_counter() - t) * 1000.0)

    TurnCalls.after_earlier = after_earlier  # type: ignore[method-assign]
    _install_parts()


def _timed(part: str, orig: Any, keep: Any = lambda *a, **kw: True) -> Any:
    async def timed(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return await orig(*a, **kw)
        finally:
            if ON[0] and keep(*a, **kw):
                PARTS[part].append((time.perf_counter() - t) * 1000.0)

    return timed


def _install_parts() -> None:
    from mrpvm.kernel.engine import outcome_batch
    from mrpvm.kernel.supervisor.core import Supervisor

    batcher = outcome_batch.OutcomeBatcher
    batcher._fold = _timed("fold", batcher._fold)  # type: ignore[method-assign]
    Supervisor.call = _timed(  # type: ignore[method-assign]
        "outcome_call", Supervisor.call, lambda _s, _p, request, **kw: request.op == "recordOutcome"
    )
    submit = batcher.submit
    ticking: list[bool] = []

    async def submit_and_tick(self: Any, *a: Any, **kw: Any) -> Any:
        if not ticking:  # the loop's lag, sampled from the first outcome on (the daemon's loop)
            ticking.append(True)
            asyncio.get_running_loop().create_task(_lag())
        return await submit(self, *a, **kw)

    batcher.submit = submit_and_tick  # type: ignore[method-assign]


async def _lag() -> None:
    while True:
        t = time.perf_counter()
        await asyncio.sleep(LAG_TICK_S)
        if ON[0]:
            PARTS["loop_lag"].append((time.perf_counter() - t - LAG_TICK_S) * 1000.0)


def _quantiles(values: list[float]) -> list[float]:
    v = sorted(values)
    at = lambda q: round(v[min(len(v) - 1, int(q * len(v)))], 2) if v else 0.0  # noqa: E731
    return [at(0.5), at(0.9), at(0.99), round(v[-1], 2) if v else 0.0]


def summary() -> dict:
    return {
        "turns_that_waited": len(WAITS),
        "over_1ms": sum(1 for x in WAITS if x > 1.0),
        "p50_p90_p99_max_ms": _quantiles(WAITS),
        "total_ms": round(sum(WAITS), 1),
        "parts_p50_p90_p99_max_ms": {k: {"n": len(v), "ms": _quantiles(v)} for k, v in PARTS.items()},
    }


def _dump() -> None:
    with open(os.environ["PERF_WAITS"], "w") as f:
        json.dump(summary(), f)


if __name__ == "__main__":
    install()
    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, lambda *_: ON.__setitem__(0, True))
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
