"""`mrpvm serve` with what stops its event loop timed: the cyclic collector's collections and SQLite's
COMMITs (a commit that checkpoints the WAL copies it into the database and syncs both files); from SIGUSR1
on, a summary written at exit.

PERF_PAUSES=out.json CHECKOUT/.venv/bin/python daemon_pauses.py serve --port 0
(daemon_kb_load.py --pauses out.json signals it after the warm-up and reports the summary)

GC, per generation: collections, objects collected, the CPU inside them (thread_time) and the longest pause
(wall); the collector's state at exit (thresholds, objects frozen by gc.freeze). Commits (every thread's, the
event loop's on SQLite): how many, p50 / p99 / max / sum ms, and how many took over 5 ms.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import signal
import sys
import time

ON = [False]
STARTED: dict[int, tuple[float, float]] = {}
STATS: dict[int, dict[str, float]] = {}
COMMITS: list[float] = []


def _time_commits() -> None:
    from mrpvm.kernel.db.sqlite import SqliteDatabase

    orig = SqliteDatabase.transaction

    @contextlib.contextmanager
    def transaction(self):  # noqa: ANN001, ANN202 - a bench wrapper
        with orig(self) as conn:
            yield conn
            began = time.perf_counter()  # the body ended: the rest is the COMMIT
        if ON[0]:
            COMMITS.append((time.perf_counter() - began) * 1000.0)

    SqliteDatabase.transaction = transaction  # type: ignore[method-assign]


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


def _at(values: list[float], q: float) -> float:
    return round(values[min(len(values) - 1, int(q * len(values)))], 3) if values else 0.0


def summary() -> dict:
    commits = sorted(COMMITS)
    by_generation = {
        str(g): {k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}
        for g, row in sorted(STATS.items())
    }
    return {
        "generations": by_generation,
        "cpu_ms_total": round(sum(r["cpu_ms"] for r in STATS.values()), 2),
        "threshold": list(gc.get_threshold()),
        "frozen_objects": gc.get_freeze_count(),
        "commits": len(commits),
        "commit_ms_p50_p99_max_sum": [
            _at(commits, 0.5),
            _at(commits, 0.99),
            round(commits[-1], 2) if commits else 0.0,
            round(sum(commits), 1),
        ],
        "commits_over_5ms": sum(1 for c in commits if c > 5.0),
    }


def _dump() -> None:
    with open(os.environ["PERF_PAUSES"], "w") as fh:
        json.dump(summary(), fh)


if __name__ == "__main__":
    gc.callbacks.append(_callback)
    _time_commits()
    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, lambda *_: ON.__setitem__(0, True))
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
