"""When each step of one `mrpvm ask` process happens (ms from the interpreter's start), in the real order.

    CHECKOUT/.venv/bin/python bench/cold_ask_timeline.py [--rounds N] [--workers] -- ask --no-daemon --source FILE "question"

Unlike cold_ask_breakdown.py (which imports the kernel before the command runs, so the workers' early
launch comes later than in a user's process), this wraps the steps as their modules load (an import hook),
so the command's own import order is kept, with this process's CPU so far beside each step: the early launch, KernelContext's opening, the --source load,
the turn, each plugin call (the first one waits for its worker's start), each prestart, the context's
close and the process's end. Each round is a fresh interpreter; the rounds' timelines are printed one
after the other, then the median of each step's end.
`--workers` (needs MRPVM_HOME): the workers' own steps too — each one's start, request, reply and model load,
with its CPU so far (plugins/sdk/marks.py: MRPVM_WORKER_MARKS=1, read back from `<home>/logs`), on the
same clock, indented under the CLI's.
"""

from __future__ import annotations

import atexit
import functools
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import subprocess
import sys
import time

T0 = time.perf_counter()
EVENTS: list[tuple[float, float, str]] = []  # (ms from the start, this process's CPU ms so far, step)

# module -> (owner attribute or "", function name, label)
WRAP: dict[str, list[tuple[str, str, str]]] = {
    "mrpvm.kernel.supervisor.early_launch": [("", "launch", "early launch")],
    "mrpvm.knowledge.context": [("", "open_context", "open_context")],
    "mrpvm.kernel.engine.warm_start": [("", "prestart_turn", "prestart_turn")],
    "mrpvm.knowledge.ingest": [("", "load_session_context", "load --source")],
    "mrpvm.kernel.engine.turn": [("", "run_turn", "run_turn")],
    "mrpvm.kernel.supervisor.core": [
        ("Supervisor", "call", "call"),
        ("Supervisor", "prestart", "prestart"),
        ("Supervisor", "aclose", "supervisor close"),
    ],
    "mrpvm.kernel.context": [("KernelContext", "aclose", "context close")],
}


def mark(label: str) -> None:
    EVENTS.append(((time.perf_counter() - T0) * 1000, time.process_time() * 1000, label))


def _label(base: str, args: tuple) -> str:
    if base in ("call", "prestart") and len(args) > 1:
        op = getattr(args[2], "op", "") if len(args) > 2 else ""
        return f"{base} {args[1]}{'.' + op if op else ''}"
    return base


def _wrapped(fn, base: str):
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def awrap(*a, **k):
            label = _label(base, a)
            mark(f"> {label}")
            try:
                return await fn(*a, **k)
            finally:
                mark(f"< {label}")

        return awrap

    @functools.wraps(fn)
    def wrap(*a, **k):
        label = _label(base, a)
        mark(f"> {label}")
        try:
            return fn(*a, **k)
        finally:
            mark(f"< {label}")

    return wrap


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, name: str):
        self.inner, self.name = inner, name

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        for owner, name, label in WRAP[self.name]:
            target = getattr(module, owner) if owner else module
            setattr(target, name, _wrapped(getattr(target, name), label))


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in WRAP:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, fullname)
        return spec


def child(argv: list[str]) -> None:
    sys.meta_path.insert(0, _Finder())
    out = os.environ["TIMELINE_OUT"]

    def dump() -> None:
        mark("exit")
        with open(out, "w") as f:  # T0 on CLOCK_MONOTONIC: the workers' marks are on that clock
            json.dump({"t0": time.monotonic() - (time.perf_counter() - T0), "events": EVENTS}, f)

    atexit.register(dump)
    sys.argv = ["mrpvm", *argv]
    mark("start")
    from mrpvm.shells.cli.main import main

    sys.exit(main())


def worker_marks(t0: float) -> list[tuple[float, float, str]]:
    """The workers' marks of this round from `<MRPVM_HOME>/logs/*.log`, as (ms from T0, the worker's CPU ms,
    step)."""
    import glob
    import re

    found = []
    for path in glob.glob(os.path.join(os.environ["MRPVM_HOME"], "logs", "*.log")):
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r" mark ([\d.]+) (\d+) (.*)$", line)
                if m and float(m.group(1)) >= t0:
                    plugin = os.path.basename(path).removesuffix(".log")
                    found.append(
                        ((float(m.group(1)) - t0) * 1000, float(m.group(2)), f"    [{plugin}] {m.group(3)}")
                    )
    return found


def main() -> None:
    if os.environ.get("TIMELINE_OUT"):
        child(sys.argv[1:])
        return
    args = sys.argv[1:]
    rounds, workers = 1, False
    if args[:1] == ["--rounds"]:
        rounds, args = int(args[1]), args[2:]
    if args[:1] == ["--workers"]:
        workers, args = True, args[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    ends: dict[str, list[float]] = {}
    for i in range(rounds):
        out = f"/tmp/cold_ask_timeline.{os.getpid()}.json"
        start = time.perf_counter()
        marks = {"MRPVM_WORKER_MARKS": "1"} if workers else {}
        subprocess.run(
            [sys.executable, __file__, *args],
            env={**os.environ, "TIMELINE_OUT": out, **marks},
            stdout=subprocess.DEVNULL,
            check=False,
        )
        wall = (time.perf_counter() - start) * 1000
        with open(out) as f:
            dumped = json.load(f)
        os.unlink(out)
        events = dumped["events"]
        if workers:
            events = sorted([tuple(e) for e in events] + worker_marks(dumped["t0"]))
        print(f"round {i + 1}: wall {wall:.0f} ms (load {os.getloadavg()[0]:.1f})")
        print("     ms  CPU ms  step")
        for t, cpu, label in events:
            print(f"  {t:7.1f} {cpu:7.1f}  {label}")
            if label.startswith("<") or label in ("exit",):
                ends.setdefault(label, []).append(t)
                ends.setdefault(f"{label} (CPU)", []).append(cpu)
        ends.setdefault("wall (outside)", []).append(wall)
    if rounds > 1:
        print("median end of each step (ms):")
        for label, values in sorted(ends.items(), key=lambda kv: sorted(kv[1])[len(kv[1]) // 2]):
            values.sort()
            print(f"  {values[len(values) // 2]:7.1f}  {label}  ({len(values)})")


if __name__ == "__main__":
    main()
