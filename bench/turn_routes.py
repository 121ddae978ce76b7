#!/usr/bin/env python3
"""What routed a daemon load's turns: the planner that led each, and the gs solves that did real work.

    python3 bench/turn_routes.py TURNS.jsonl [...]   (TURNS.jsonl: daemon_kb_load.py --out; its --json output
                                                    beside it as TURNS.json is read when present)

Per run: turns led by each planner, their order as a strip ('D' = planner-depth led; bursts show the
planner lead moving back and forth), gs solves slower than 1 ms (a reply memo hit costs ~0.1 ms; a slower
one computed, or waited for an identical call in flight) and the (question, kb view) pairs they fell on,
and the slowest planner-depth buildPlan (a worker pool restarted mid-load shows as 250-900 ms).
Session 28 (perf44): the CPU a turn was bimodal because some runs let planner-depth lead 20-120 turns.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path


def summary(path: Path) -> str:
    turns = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    lead: collections.Counter[str] = collections.Counter()
    slow: collections.Counter[tuple[str, str]] = collections.Counter()
    strip, depth_plans = [], []
    for turn in turns:
        calls = turn.get("calls", [])
        first = next((name.split(".")[0] for name, _ in calls if name.endswith("buildPlan")), "-")
        lead[first] += 1
        strip.append("D" if first == "planner-depth" else ".")
        view = "-"
        for name, ms in calls:
            if name.endswith(".retrieve"):
                view = name.split(".")[0]
            elif name == "gs-symbolic.solve" and ms > 1.0:
                slow[(turn.get("q", "")[:40], view)] += 1
            elif name == "planner-depth.buildPlan":
                depth_plans.append(ms)
    lines = [f"{path.name}: {len(turns)} turns, led by {dict(lead)}"]
    side = path.with_suffix(".json")
    if side.exists():
        run = json.loads(side.read_text())
        cpu = run.get("cpu_ms_per_turn_by_process", {})
        lines.append(
            f"  CPU ms/turn {run.get('cpu_ms_per_turn')} (gs {cpu.get('gs_symbolic', 0)}, kb-balanced "
            f"{cpu.get('kb_balanced', 0)}, planner-depth {cpu.get('planner_depth', 0)}), p99 {run.get('p99_ms')} ms,"
            f" settle {run.get('settle_s')} s"
        )
    lines.append(f"  gs solves > 1 ms: {sum(slow.values())} on {len(slow)} (question, view) pairs")
    if depth_plans:
        lines.append(
            f"  planner-depth buildPlan: {len(depth_plans)} calls, slowest {max(depth_plans):.0f} ms"
        )
    lines.append("  " + "".join(strip))
    return "\n".join(lines)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(summary(Path(arg)))
