"""`mrpvm serve` counting, per plugin.op, the kernel's plugin calls and the jobs that reached a worker
(a worker wake-up: a reply memo's hit is a call but no job); from SIGUSR1 on, written at exit.

PERF_COUNTS=out.json CHECKOUT/.venv/bin/python daemon_call_counts.py serve --port 0
(daemon_kb_load.py --counts out.json signals it after the warm-up and reports them per turn)

A worker's CPU a call is mostly the refill of the caches it left while asleep (ISSUE22_FIGURES.md,
session 32 perf56): worker jobs a turn is the figure that refill scales with.
"""

from __future__ import annotations

import atexit
import collections
import contextvars
import json
import os
import signal
import sys
from typing import Any

CALLS: collections.Counter[str] = collections.Counter()
JOBS: collections.Counter[str] = collections.Counter()
CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar("current", default="?")
ON = [False]


def install() -> None:
    import mrpvm.kernel.supervisor.core as core
    import mrpvm.kernel.supervisor.pool as pool_mod

    orig_call, orig_submit = core.Supervisor._call, pool_mod.WorkerPool.submit

    async def _call(self: Any, plugin_id: str, request: Any, *rest: Any, **kw: Any) -> Any:
        name = f"{plugin_id}.{getattr(request, 'op', '?')}"
        CURRENT.set(name)  # this call's task context: its pool submit sees it
        if ON[0]:
            CALLS[name] += 1
        return await orig_call(self, plugin_id, request, *rest, **kw)

    def submit(self: Any, job: Any) -> None:
        if ON[0]:
            JOBS[CURRENT.get()] += 1
        orig_submit(self, job)

    core.Supervisor._call = _call  # type: ignore[method-assign]
    pool_mod.WorkerPool.submit = submit  # type: ignore[method-assign]


def _dump() -> None:
    with open(os.environ["PERF_COUNTS"], "w") as f:
        json.dump({"calls": dict(CALLS), "worker_jobs": dict(JOBS)}, f)


if __name__ == "__main__":
    install()
    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, lambda *_: ON.__setitem__(0, True))
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
