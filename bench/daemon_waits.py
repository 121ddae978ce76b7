"""`mrpvm serve` timing each wait of a turn for an earlier turn's background call (its session's last
recordOutcome) before it calls that planner; from SIGUSR1 on, a summary written at exit.

PERF_WAITS=out.json CHECKOUT/.venv/bin/python daemon_waits.py serve --port 0
(daemon_kb_load.py --waits out.json signals it after the warm-up and reports the summary)
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import sys
import time

WAITS: list[float] = []
ON = [False]


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


def summary() -> dict:
    v = sorted(WAITS)
    at = lambda q: round(v[min(len(v) - 1, int(q * len(v)))], 2) if v else 0.0  # noqa: E731
    return {
        "turns_that_waited": len(v),
        "over_1ms": sum(1 for x in v if x > 1.0),
        "p50_p90_p99_max_ms": [at(0.5), at(0.9), at(0.99), round(v[-1], 2) if v else 0.0],
        "total_ms": round(sum(v), 1),
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
