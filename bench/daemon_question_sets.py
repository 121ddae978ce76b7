"""Issue 22's daemon load on two question sets, two checkouts alternated: CPU a turn and p99 for each.

    .venv/bin/python bench/daemon_question_sets.py --home SETTLED_HOME --checkouts /work/base33 /work/perf69 \
        [--pairs 2] [--novel corpus/questions-crypto-novel.txt] [-- daemon_kb_load.py options]

The 20-question load (`daemon_kb_load.py`'s default questions) asks every session the same questions: after the
first round the kernel's reply memo answers gs-symbolic's solves, and the load says nothing of what a question
the home has not seen costs. Beside it this runs the novel set (`--load-questions NOVEL --distinct`: each session
its own questions, none asked before). Each run starts from a fresh copy of one settled home (a home a
`daemon_kb_load.py --home` run has ingested and warmed), the checkouts alternated within each pair (A B, then
B A) so that they share the host's minutes. Printed per set and checkout: the tree's CPU a turn, gs-symbolic's
and the daemon's share of it, p99 and turns a second (medians over the pairs), and each run's statuses.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def run(checkout: str, home: str, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="mrpvm-qsets-") as tmp:
        copy = os.path.join(tmp, "home")
        shutil.copytree(home, copy, symlinks=True)
        env = dict(os.environ, PERF_OURS=checkout)
        cmd = [sys.executable, str(BENCH / "daemon_kb_load.py"), "--json", "--home", copy, *extra]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", required=True, help="a settled home (copied for each run, never changed)")
    ap.add_argument("--checkouts", nargs=2, required=True, metavar=("A", "B"))
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--novel", default=str(BENCH / "corpus" / "questions-crypto-novel.txt"))
    ap.add_argument("load", nargs="*", help="daemon_kb_load.py options for every run (after --)")
    a = ap.parse_args()
    sets = {"repeated": [], "novel": ["--load-questions", a.novel, "--distinct"]}
    results: dict[tuple[str, str], list[dict]] = {}
    for pair in range(a.pairs):
        order = a.checkouts if pair % 2 == 0 else a.checkouts[::-1]
        for name, args in sets.items():
            for checkout in order:
                out = run(checkout, a.home, [*args, *a.load])
                results.setdefault((name, checkout), []).append(out)
                print(f"pair {pair + 1} {name} {checkout}: {_row(out)}", file=sys.stderr)
    print("| set | checkout | tree CPU ms a turn | gs-symbolic | daemon | p99 ms | turns/s | statuses |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, checkout), runs in results.items():
        med = {k: statistics.median(_figures(r)[k] for r in runs) for k in _figures(runs[0])}
        statuses = "; ".join(json.dumps(r.get("statuses", {}), sort_keys=True) for r in runs)
        print(
            f"| {name} | {checkout} | {med['tree']:.2f} | {med['gs']:.2f} | {med['daemon']:.2f} | "
            f"{med['p99']:,.0f} | {med['tps']:.1f} | {statuses} |"
        )


def _figures(out: dict) -> dict[str, float]:
    by = out.get("cpu_ms_per_turn_by_process", {})
    return {
        "tree": out["cpu_ms_per_turn"],
        "gs": by.get("gs_symbolic", 0.0),
        "daemon": by.get("mrpvm-daemon", 0.0) or by.get("python", 0.0),
        "p99": out["p99_ms"],
        "tps": out["turns_per_s"],
    }


def _row(out: dict) -> str:
    f = _figures(out)
    return f"tree {f['tree']:.2f} ms a turn, gs-symbolic {f['gs']:.2f}, p99 {f['p99']:,.0f} ms, errors {out['errors']}"


if __name__ == "__main__":
    main()
