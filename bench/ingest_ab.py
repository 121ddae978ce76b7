"""A real `mrpvm ingest` (a fresh process and home) in one or more checkouts, alternated: wall seconds, units/s
and CPU seconds of the whole process tree by process name (sampled from /proc every 20 ms until each
process ends, so workers that exit with the command are counted).

    python3 bench/ingest_ab.py FILE --checkout A [--checkout B …] [--rounds 3] [--plugins a,b] [--json]
                               [--timeline 0.1]

--timeline SECS prints, for each run, the CPU each process name used in each SECS-long slice of the run (a
process-by-process timeline: which stage keeps which core busy, where a core idles).

A checkout may carry extra environment for its runs: `--checkout DIR@NAME=VALUE,NAME2=VALUE2`.

Each checkout needs `make setup` (its own .venv). Times drift with machine load: the rounds alternate the
checkouts (A B A B …) and each line notes the 1-minute load average. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from perfkit import _name, cpu_seconds, loadavg, tree  # type: ignore[import-not-found]


def _proc_name(pid: int) -> str:
    """perfkit's name, but "bwrap" for a sandbox's bwrap (its argv also names the plugin's module)."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return "?"
    return "bwrap" if os.path.basename(argv0) == b"bwrap" else _name(pid)


def _timeline(samples: list[tuple[float, str, int, float]], step: float) -> list[str]:
    """Lines `t0-t1 s  name cpu, …` of the CPU each process name used in each `step`-second slice (a pid's
    first sample counts from 0: a process born inside a slice is charged its CPU so far there)."""
    seen: dict[int, float] = {}
    slices: dict[int, dict[str, float]] = {}
    for t, name, pid, secs in samples:
        used = secs - seen.get(pid, 0.0)
        seen[pid] = secs
        if used > 0:
            got = slices.setdefault(int(t / step), {})
            got[name] = got.get(name, 0.0) + used
    lines = []
    for n in range(max(slices, default=-1) + 1):
        got = slices.get(n, {})
        busy = ", ".join(f"{k} {v:.2f}" for k, v in sorted(got.items(), key=lambda kv: -kv[1]))
        lines.append(
            f"  {n * step:5.2f}-{(n + 1) * step:5.2f} s  {sum(got.values()) / step:4.2f} cores  {busy}"
        )
    return lines


def run_once(
    checkout: Path, file: str, plugins: str | None, extra: dict[str, str] | None = None, step: float = 0.0
) -> dict:
    home = tempfile.mkdtemp(prefix="ingab-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")} | (extra or {})
    env["MRPVM_HOME"] = home
    if plugins:
        env["MRPVM_ENABLED_PLUGINS"] = plugins
    load = loadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [str(checkout / ".venv" / "bin" / "mrpvm"), "ingest", "--kb", "x", "--json", file],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    last: dict[int, tuple[str, float]] = {}
    samples: list[tuple[float, str, int, float]] = []
    while proc.poll() is None:
        for pid in tree(proc.pid):
            name = last[pid][0] if pid in last else _proc_name(pid)
            secs = cpu_seconds(pid)  # a forked helper of a plugin is sampled as a process of its own
            if secs is not None:
                last[pid] = (name, secs)
                if step:
                    samples.append((time.perf_counter() - t0, name, pid, secs))
        time.sleep(0.01 if step else 0.02)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    children = os.times()
    by_name: dict[str, float] = {}
    for name, secs in last.values():
        by_name[name] = round(by_name.get(name, 0.0) + secs, 2)
    units = 0
    for db in Path(home).glob("*.db"):
        try:
            units = sqlite3.connect(db).execute("select count(*) from units").fetchone()[0]
        except sqlite3.Error:
            pass
    shutil.rmtree(home, ignore_errors=True)
    return {
        "checkout": str(checkout),
        "rc": proc.returncode,
        "wall_s": round(wall, 3),
        "units": units,
        "units_per_s": round(units / wall) if units else 0,
        "cpu_s_sampled": round(sum(by_name.values()), 2),
        "cpu_by_name": dict(sorted(by_name.items(), key=lambda kv: -kv[1])),
        "load": load,
        "children_cpu_total": round(children.children_user + children.children_system, 2),
        "stderr_tail": err[-300:] if proc.returncode else "",
        "timeline": _timeline(samples, step) if step else [],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--checkout", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--plugins", default="sd-symbolic,kb-fast,kb-thinkingdb")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--timeline", type=float, default=0.0, help="print each run's CPU by process per SECS")
    a = ap.parse_args()
    results: dict[str, list[dict]] = {c: [] for c in a.checkout}
    for r in range(a.rounds):
        order = a.checkout if r % 2 == 0 else list(reversed(a.checkout))
        for c in order:
            path, _, assigns = c.partition("@")  # CHECKOUT@NAME=VALUE,NAME=VALUE: extra environment
            extra = dict(kv.split("=", 1) for kv in assigns.split(",") if kv)
            res = run_once(Path(path).resolve(), a.file, a.plugins, extra, a.timeline)
            results[c].append(res)
            if not a.json:
                top = ", ".join(f"{k} {v}" for k, v in list(res["cpu_by_name"].items())[:5])
                print(
                    f"round {r + 1} {c}: rc {res['rc']} wall {res['wall_s']} s, {res['units_per_s']} units/s, "
                    f"CPU {res['cpu_s_sampled']} s ({top}), load {res['load']}{' ' + res['stderr_tail'] if res['rc'] else ''}",
                    flush=True,
                )
                for line in res["timeline"]:
                    print(line)
    summary = {
        c: {
            "wall_s_median": statistics.median(x["wall_s"] for x in rs),
            "units_per_s_median": statistics.median(x["units_per_s"] for x in rs),
            "cpu_s_median": statistics.median(x["cpu_s_sampled"] for x in rs),
        }
        for c, rs in results.items()
    }
    if a.json:
        print(json.dumps({"runs": results, "summary": summary}))
    else:
        for c, s in summary.items():
            print(
                f"{c}: median wall {s['wall_s_median']} s, {s['units_per_s_median']} units/s, CPU {s['cpu_s_median']} s"
            )


if __name__ == "__main__":
    main()
