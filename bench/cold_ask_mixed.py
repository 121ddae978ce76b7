"""Cold `mrpvm ask --source` of varied questions, one after the other, A/B between two checkouts.

    python3 bench/cold_ask_mixed.py --a /work/base32 --b /work/perf57 [--suites 8] [--per 2] [--rounds 1]

A one-turn process starts the workers its turn is expected to call before its first call, guessed from the
home's recent turns (kernel/engine/warm_start.py); `cold_ask_cpu.py` repeats one question, where the guess
is always right. This one asks the first `--per` questions of the first `--suites` dev suites
(eval/dev/devNN: their story as `--source`) in turn, each checkout in its own fresh home (/tmp/mixed_<name>),
the checkouts alternated ask by ask (which goes first flips each ask), and prints per checkout the CPU of the
process tree (a control group, as cold_ask_cpu.py; needs a writable one), the wall, the python processes
started (distinct plugin command lines).
On a busy machine compare CPU, not wall.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cold_ask_cpu import one_run  # noqa: E402


def questions(checkout: str, suites: int, per: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(glob.glob(f"{checkout}/eval/dev/dev*/eval.json"))[:suites]:
        suite = json.loads(Path(path).read_text())
        story = str(Path(path).parent / suite.get("storyFile", "story.nl"))
        out.extend((story, q["input"]) for q in suite["questions"][:per])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--suites", type=int, default=8)
    ap.add_argument("--per", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    checkouts = {"A": a.a.rstrip("/"), "B": a.b.rstrip("/")}
    homes = {k: f"/tmp/mixed_{Path(v).name}" for k, v in checkouts.items()}
    for home in homes.values():
        shutil.rmtree(home, ignore_errors=True)
    asks = questions(checkouts["A"], a.suites, a.per) * a.rounds
    totals = {k: {"cpu": 0.0, "wall": 0.0, "procs": 0} for k in checkouts}
    for i, (story, question) in enumerate(asks):
        order = ["A", "B"] if i % 2 == 0 else ["B", "A"]
        line = []
        for k in order:
            os.environ["MRPVM_HOME"] = homes[k]
            command = [f"{checkouts[k]}/.venv/bin/mrpvm", "ask", "--no-daemon", "--source", story, question]
            wall, cpu, by_command = one_run(command)
            procs = sum(1 for cmd in by_command if "mrpvm.plugins" in cmd)  # distinct plugin workers
            totals[k]["cpu"] += cpu
            totals[k]["wall"] += wall
            totals[k]["procs"] += procs
            line.append(f"{k} cpu {cpu:.2f} wall {wall:.2f} workers {procs}")
        load = os.getloadavg()[0]
        print(f"{i + 1:3d} {' | '.join(line)}  (load {load:.1f})  {Path(story).parent.name}: {question[:50]}")
    n = len(asks)
    for k, t in totals.items():
        print(
            f"{k} {checkouts[k]}: {n} asks, CPU of the trees {t['cpu']:.2f} s ({t['cpu'] / n:.3f} s an ask), "
            f"wall {t['wall']:.1f} s, worker processes {t['procs']} ({t['procs'] / n:.2f} an ask)"
        )


if __name__ == "__main__":
    main()
