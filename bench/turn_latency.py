"""Kernel overhead of one symbolic-style turn through warm workers.

A turn runs planner (pre/post) → sd → kb notification → kb → gs → validator → recordOutcome → commit,
all through scripted fast test plugins (tests/support/engine_plugins) kept warm by the supervisor. Some calls
overlap (the sd call with the pre-seed plan, the kb notification with the post-seed plan, recordOutcome
with the commit notification), so kernel overhead = the turn's wall time minus the time during which at
least one plugin call was in flight (framing, IPC and parsing included; overlapping calls count once).
The breakdown splits that overhead into SQLite persistence (session, planner EWMA, turn commit with its
staged units and trace; some of it overlaps a plugin call) and the engine loop itself.

    .venv/bin/python bench/turn_latency.py [--turns N] [--continue-session] [--json]

Each turn opens a fresh session by default; --continue-session runs every turn in one session (its
history grows; the store reads the last messages and the session's units each turn).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "tests" / "support" / "engine_plugins"

UNITS = [
    {
        "id": f"session::bench::unit-{i:03d}",
        "sourceId": "turn",
        "chunkId": "turn::chunk-000",
        "kuType": "atomic",
        "role": "Description",
        "topic": f"topic {i}",
        "claim": f"Claim number {i} about the benchmark subject.",
    }
    for i in range(3)
]
SCRIPT = {
    "planner-a": {
        "buildPlan": {
            "plan": {"kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"], "validatorOrder": ["val-a"]}
        },
        "recordOutcome": {},
    },
    "sd-a": {
        "detectSeeds": {
            "intents": [{"act": "explain", "intent": "how does the subject work", "output": "answer"}],
            "units": UNITS,
        }
    },
    "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "gs-a": {"solve": {"answer": "The subject works as the claims say.", "sources": "evidence"}},
    "val-a": {"validate": {"status": "accepted"}},
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def measure(turns: int, warmup: int, continue_session: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="mrpvm-bench-"))
    try:
        return await _measure(tmp, turns, warmup, continue_session)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def _measure(tmp: Path, turns: int, warmup: int, continue_session: bool) -> dict:
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.knowledge.context import open_context

    (tmp / "script.json").write_text(json.dumps(SCRIPT))
    home = tmp / "home"
    home.mkdir()
    (home / "config.json").write_text(
        json.dumps(
            {
                "plugins": {
                    "stageOrders": {"sd": ["sd-a"], "kb": ["kb-a"], "gs": ["gs-a"], "val": ["val-a"]},
                    "plannerOrder": ["planner-a"],
                }
            }
        )
    )
    environ = {
        "MRPVM_HOME": str(home),
        "MRPVM_ENABLED_PLUGINS": "planner-a,sd-a,kb-a,gs-a,val-a",
        "MRPVM_PLUGIN_ALLOWLIST": "",
        "MRPVM_WRAPPER_FOLDERS": "",
        "MRPVM_SANDBOX_READ_PATHS": str(tmp),  # the sandbox hides /tmp; the plugins read their script here
    }
    ctx = await open_context(
        environ, manifests_dir=PLUGINS, extra_env={"MRPVM_TEST_SCRIPT": str(tmp / "script.json")}
    )
    overhead, total, plugin, store = [], [], [], []
    spent = [0.0]

    def timed(method):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[0] += (time.perf_counter() - start) * 1000.0

        return wrapper

    for name in (
        "create_session",
        "draft_session",
        "get_session",
        "session_units",
        "list_turns",
        "recent_user_messages",
        "planner_stats",
        "record_planner_outcome",
        "commit_turn",
    ):
        if hasattr(ctx.store, name):
            setattr(ctx.store, name, timed(getattr(ctx.store, name)))
    session_id = None
    try:
        for i in range(warmup + turns):
            spent[0] = 0.0
            start = time.perf_counter()
            result = await run_turn(
                ctx, TurnRequest(message="How does the subject work?", session_id=session_id)
            )
            wall = (time.perf_counter() - start) * 1000.0
            if result.status != "success":
                raise SystemExit(f"bench turn did not succeed: {result.status}")
            if i >= warmup:
                total.append(wall)
                plugin.append(result.plugin_ms)
                overhead.append(wall - result.plugin_ms)
                store.append(spent[0])
            if continue_session:
                session_id = result.session_id
        calls = sum(1 for n in result.execution_trace["nodes"] if n["kind"] == "plugin")
    finally:
        await ctx.aclose()
    return {
        "turns": turns,
        "session": "continued" if continue_session else "fresh per turn",
        "plugin_calls_per_turn": calls,
        "kernel_overhead_p50_ms": round(statistics.median(overhead), 3),
        "kernel_overhead_p90_ms": round(percentile(overhead, 0.9), 3),
        "store_p50_ms": round(statistics.median(store), 3),
        "engine_overhead_p50_ms": round(
            statistics.median(o - s for o, s in zip(overhead, store, strict=True)), 3
        ),
        "turn_p50_ms": round(statistics.median(total), 3),
        "turn_p90_ms": round(percentile(total, 0.9), 3),
        "plugin_time_p50_ms": round(statistics.median(plugin), 3),
        "target_kernel_overhead_p50_ms": 1.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--continue-session", action="store_true", help="run every turn in one session")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = anyio.run(measure, args.turns, args.warmup, args.continue_session)
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:32} {value}")
    sys.exit(0)


if __name__ == "__main__":
    main()
