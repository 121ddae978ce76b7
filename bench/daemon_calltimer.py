"""`mrpvm serve` with timers on every worker call, split into its parts (no project change).

    PERF_CALLTIMES=calltimes.json CHECKOUT/.venv/bin/python daemon_calltimer.py serve --port 0
    (daemon_kb_load.py --calltimer does this and prints the table)

Per plugin.op, from the kernel's side (perf_counter in the daemon):
  pre     Supervisor._call start -> job submitted to the pool (admit, encode, size check)
  queue   submitted -> written to a worker (waiting for a free worker, or a worker's start)
  worker  written -> the reply handled by the event loop (pipe, scheduling, the plugin's own work)
  resume  reply handled -> the awaiting call resumes (event-loop latency)
  post    resumed -> the call returns (CNL parse and validation)
Written as JSON to $PERF_CALLTIMES when the daemon exits.
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import json
import os
import time

import mrpvm.kernel.supervisor.core as core
import mrpvm.kernel.supervisor.pool as pool_mod

OP = contextvars.ContextVar("op", default="")
REC = contextvars.ContextVar("rec", default=None)
REPLY: dict[int, float] = {}
ROWS: list[tuple] = []


def install() -> None:
    Sup, Pool = core.Supervisor, pool_mod.WorkerPool
    orig_call, orig_wc = Sup._call, Sup._worker_call
    orig_submit, orig_done = Pool.submit, Pool.done

    @functools.wraps(orig_call)
    async def _call(self, plugin_id, request, timeout_s, *rest):
        t0 = time.perf_counter()
        rec = {"t0": t0}
        tok_r = REC.set(rec)
        try:
            return await orig_call(self, plugin_id, request, timeout_s, *rest)
        finally:
            t_end = time.perf_counter()
            REC.reset(tok_r)
            job = rec.get("job")
            if job is not None and "t_submit" in rec:
                t_reply = REPLY.pop(id(job), None)
                t_resume = rec.get("t_resume")
                if t_reply is not None and t_resume is not None and job.sent_at:
                    ROWS.append(
                        (
                            f"{plugin_id}.{request.op}",
                            t0,
                            rec["t_submit"] - t0,
                            job.sent_at - rec["t_submit"],
                            t_reply - job.sent_at,
                            t_resume - t_reply,
                            t_end - t_resume,
                            t_end - t0,
                        )
                    )

    @functools.wraps(orig_wc)
    async def _worker_call(self, *a, **k):
        try:
            return await orig_wc(self, *a, **k)
        finally:
            rec = REC.get()
            if rec is not None:
                rec["t_resume"] = time.perf_counter()

    @functools.wraps(orig_submit)
    def submit(self, job):
        rec = REC.get()
        if rec is not None and "job" not in rec:
            rec["job"], rec["t_submit"] = job, time.perf_counter()
        return orig_submit(self, job)

    @functools.wraps(orig_done)
    def done(self, worker, job, body):
        REPLY[id(job)] = time.perf_counter()
        return orig_done(self, worker, job, body)

    Sup._call, Sup._worker_call, Pool.submit, Pool.done = _call, _worker_call, submit, done


def dump() -> None:
    out = os.environ.get("PERF_CALLTIMES")
    if out:
        with open(out, "w") as f:
            json.dump(ROWS, f)


if __name__ == "__main__":
    import signal
    import sys

    install()
    atexit.register(dump)
    signal.signal(signal.SIGTERM, lambda *_: (dump(), os._exit(0)))
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
