"""Where a fresh `mrpvm ask --source FILE "question"` process spends its time, in-process.

    CHECKOUT/.venv/bin/python cold_ask_breakdown.py FILE "question" [--home DIR] [--json] [--rounds N]

Runs the real CLI entry point with timers (no project change): imports, KernelContext.open,
load_session_context (the --source file through the sd-plugin), run_turn, each plugin's first call
(Supervisor.call: the worker's sandboxed start + its first answer) and later calls, and
KernelContext.aclose (workers stopped). Each round is a fresh interpreter (subprocess of itself).
The home is kept between rounds (a shell user's existing ~/.mrpvm); it is created on first use.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time

T0 = time.perf_counter()


def child(file: str, q: str) -> dict:
    stats: dict[str, float] = {}
    seen: set[str] = set()

    def add(k: str, s: float) -> None:
        stats[k] = stats.get(k, 0.0) + s

    def wrap_async(owner, name, key_fn):
        orig = getattr(owner, name)

        @functools.wraps(orig)
        async def w(*a, **k):
            t = time.perf_counter()
            try:
                return await orig(*a, **k)
            finally:
                add(key_fn(a, k), time.perf_counter() - t)

        setattr(owner, name, w)

    t = time.perf_counter()
    from mrpvm.shells.cli.main import main as cli_main

    add("import cli (typer app)", time.perf_counter() - t)
    t = time.perf_counter()
    import mrpvm.kernel.context as kctx
    import mrpvm.kernel.engine as keng
    import mrpvm.kernel.supervisor.core as core
    import mrpvm.knowledge.ingest as king

    add("import kernel (context, engine, ingest, supervisor)", time.perf_counter() - t)

    def first(a, k):
        pid = a[1]  # Supervisor.call(plugin_id, request)
        op = getattr(a[2], "op", "") if len(a) > 2 else ""
        key = f"first call (worker start) {pid}" if pid not in seen else f"later calls {pid}.{op}"
        seen.add(pid)
        return key

    wrap_async(kctx.KernelContext, "open", lambda a, k: "KernelContext.open")
    wrap_async(kctx.KernelContext, "aclose", lambda a, k: "KernelContext.aclose")
    wrap_async(king, "load_session_context", lambda a, k: "load_session_context (--source, total)")
    wrap_async(keng, "run_turn", lambda a, k: "run_turn (total)")
    wrap_async(core.Supervisor, "call", first)
    old = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    t = time.perf_counter()
    try:
        rc = cli_main(["ask", "--source", file, q])
    except SystemExit as e:
        rc = e.code
    finally:
        sys.stdout.close()
        sys.stdout = old
    add("cli main (ask command)", time.perf_counter() - t)
    stats["process (from interpreter start)"] = time.perf_counter() - T0
    return {"rc": rc, "stages": stats}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("question")
    ap.add_argument("--home", default=os.path.join(tempfile.gettempdir(), "perf-cold-home"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.file, a.question)))
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")} | {"MRPVM_HOME": a.home}
    runs = []
    for i in range(a.rounds + 1):  # the first run (home creation, caches) is not counted
        t = time.perf_counter()
        r = subprocess.run(
            [sys.executable, __file__, "--child", a.file, a.question],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        wall = time.perf_counter() - t
        if r.returncode != 0:
            raise SystemExit(r.stderr[-2000:])
        d = json.loads(r.stdout.strip().splitlines()[-1])
        d["stages"]["wall (outside)"] = wall
        if i:
            runs.append(d)
    keys = sorted(
        {k for d in runs for k in d["stages"]},
        key=lambda k: -sorted(d["stages"].get(k, 0) for d in runs)[len(runs) // 2],
    )
    out = {}
    for k in keys:
        vals = sorted(d["stages"].get(k, 0.0) * 1000 for d in runs)
        out[k] = {
            "median_ms": round(vals[len(vals) // 2], 1),
            "min_ms": round(vals[0], 1),
            "max_ms": round(vals[-1], 1),
        }
    if a.json:
        print(json.dumps(out))
        return
    print(f"{a.file} / {a.question!r}: {a.rounds} fresh processes, median [min–max] ms")
    for k, v in out.items():
        print(f"  {v['median_ms']:8.1f} [{v['min_ms']:.1f}–{v['max_ms']:.1f}]  {k}")


if __name__ == "__main__":
    main()
