"""What pipelining the lexical ingest could save on two cores, at most: sd's build and the two kb upserts,
in the order an ingest runs them today against side by side.

    CHECKOUT/.venv/bin/python bench/ingest_pipeline_ceiling.py FILE [--rounds 3] [--json]

- today:     sd-symbolic's build on both cores (halves.py), then kb-fast's and kb-thinkingdb's upserts of its
             units side by side (each its own process, as the workers are);
- pipelined: sd's build on one core while both upserts run beside it on the other — the ceiling of a design
             in which sd hands its units on as it builds them and the kb-plugins index them meanwhile: here the
             upserts have every unit from the start (a real stream waits for the last part, and adds a parse
             and a staged write per part).
Each upsert runs in a process started beforehand (its imports done, a fresh KB store in a temporary folder),
from the units file an ingest hands it (protocol/handoff.py, with sd's shipped analysis). Prints each round's
makespan (wall from the build's start to the last upsert's end) and the parts' CPU; asserts nothing. On a
shared host, run it inside bench/quiet_cpu.sh: only the two scenarios' ratio in the same minutes means anything.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_analysed_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.handoff import encode_handoff, ship_analysis

UPSERT = r"""
import sys, tempfile, time
from mrpvm.plugins.kb_common.store import KBStore
from mrpvm.plugins.kb_thinkingdb.facts import write_facts
from mrpvm.protocol.gc_pause import paused_gc
from mrpvm.protocol.handoff import decode_handoff
data = open(sys.argv[2], "rb").read()
print("ready", flush=True)
sys.stdin.read(1)
cpu = time.process_time()
handed = decode_handoff(data, "src")
with tempfile.TemporaryDirectory() as root:
    store = KBStore(root)
    with paused_gc():
        hook = write_facts if sys.argv[1] == "kb-thinkingdb" else None
        store.upsert("src", "source.md", handed.units, hook, summary={}, analysis=handed.analysis)
    store.close()
print(f"{time.process_time() - cpu:.4f}", flush=True)
"""
PLUGINS = ("kb-fast", "kb-thinkingdb")


def _upserts(units_file: Path) -> list[subprocess.Popen[str]]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", UPSERT, plugin, str(units_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for plugin in PLUGINS
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return procs


def _go(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("x")
        proc.stdin.flush()


def _cpu(procs: list[subprocess.Popen[str]]) -> list[float]:
    out = [float(proc.stdout.readline()) for proc in procs if proc.stdout is not None]
    for proc in procs:
        proc.wait()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    text = Path(a.file).read_text()
    meta = SourceMeta("src", "source.md", "text")
    units, analysis = build_analysed_tree(text, meta, halves=False)
    folder = Path(tempfile.mkdtemp(prefix="pipeline-ceiling-"))
    units_file = folder / "units.bin"
    units_file.write_bytes(encode_handoff("src", "source.md", text, units, shipped=ship_analysis(analysis)))
    gc.disable()  # as the sd worker builds a source
    rows = []
    for n in range(a.rounds):
        procs = _upserts(units_file)
        start = time.perf_counter()
        build_analysed_tree(text, meta, halves=True)
        build = time.perf_counter() - start
        _go(procs)
        kb_cpu = _cpu(procs)
        today = time.perf_counter() - start
        procs = _upserts(units_file)
        start = time.perf_counter()
        _go(procs)
        build_analysed_tree(text, meta, halves=False)
        serial = time.perf_counter() - start
        piped_cpu = _cpu(procs)
        piped = time.perf_counter() - start
        rows.append(
            {
                "round": n,
                "units": len(units),
                "today_s": round(today, 3),
                "today_build_s": round(build, 3),
                "today_kb_cpu_s": kb_cpu,
                "pipelined_s": round(piped, 3),
                "pipelined_build_s": round(serial, 3),
                "pipelined_kb_cpu_s": piped_cpu,
                "load": round(os.getloadavg()[0], 1),
            }
        )
        if not a.json:
            r = rows[-1]
            print(
                f"round {n}: today {r['today_s']:.3f} s (halves build {r['today_build_s']:.3f}, then the upserts)"
                f"  pipelined {r['pipelined_s']:.3f} s (serial build {r['pipelined_build_s']:.3f})"
                f"  kb CPU {kb_cpu} / {piped_cpu}  load {r['load']}",
                flush=True,
            )
    units_file.unlink()
    folder.rmdir()
    if a.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
