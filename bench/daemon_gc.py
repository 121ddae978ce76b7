"""`mrpvm serve` with the cyclic collector's work timed; from SIGUSR1 on, a summary written at exit.

PERF_GC=out.json CHECKOUT/.venv/bin/python daemon_gc.py serve --port 0
(daemon_kb_load.py --gc out.json signals it after the warm-up and reports the summary)

Per generation: collections, objects collected, the event loop's CPU inside them (thread_time) and the
longest pause (wall); and the collector's state at exit (thresholds, objects frozen by gc.freeze).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import signal
import sys
import time

ON = [False]
STARTED: dict[int, tuple[float, float]] = {}
STATS: dict[int, dict[str, float]] = {}


def _callback(phase: str, info: dict) -> None:
    if not ON[0]:
        return
    generation = info["generation"]
    if phase == "start":
        STARTED[generation] = (time.perf_counter(), time.thread_time())
        return
    began = STARTED.pop(generation, None)
    if began is None:
        return
    wall, cpu = time.perf_counter() - began[0], time.thread_time() - began[1]
    row = STATS.setdefault(generation, {"collections": 0, "collected": 0, "cpu_ms": 0.0, "max_pause_ms": 0.0})
    row["collections"] += 1
    row["collected"] += info.get("collected", 0)
    row["cpu_ms"] += cpu * 1000.0
    row["max_pause_ms"] = max(row["max_pause_ms"], wall * 1000.0)


def summary() -> dict:
    by_generation = {
        str(g): {k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}
        for g, row in sorted(STATS.items())
    }
    return {
        "generations": by_generation,
        "cpu_ms_total": round(sum(r["cpu_ms"] for r in STATS.values()), 2),
        "threshold": list(gc.get_threshold()),
        "frozen_objects": gc.get_freeze_count(),
    }


def _dump() -> None:
    with open(os.environ["PERF_GC"], "w") as fh:
        json.dump(summary(), fh)


if __name__ == "__main__":
    gc.callbacks.append(_callback)
    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, lambda *_: ON.__setitem__(0, True))
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
