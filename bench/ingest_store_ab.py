"""The write stages of a lexical ingest (the kernel's store commit, each kb-plugin's index write), A/B between
checkouts, alternated in the same minutes: runs `bench/ingest_stage_cpu.py FILE --json` with each checkout's
own venv, `--rounds` times each (A B A B …), and prints each stage's CPU and wall seconds per round and their
medians, with the 1-minute load average of each run.

    python3 bench/ingest_store_ab.py FILE --checkout /work/base27 --checkout . [--rounds 3] [--json]

Each checkout needs `make setup`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

STAGES = ("kernel_commit", "kb-fast_upsert", "kb-thinkingdb_upsert", "sd_run", "kernel_parse")
HERE = Path(__file__).resolve().parent


def run_once(checkout: Path, file: str) -> dict[str, float]:
    """One in-process pass of every stage in `checkout`'s venv (this checkout's stage script)."""
    out = subprocess.run(
        [str(checkout / ".venv/bin/python"), str(HERE / "ingest_stage_cpu.py"), file, "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=checkout,
    ).stdout
    return json.loads(out[out.index("{") :])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--checkout", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    checkouts = [Path(c).resolve() for c in a.checkout]
    runs: dict[str, list[dict[str, float]]] = {str(c): [] for c in checkouts}
    for r in range(a.rounds):
        for c in checkouts:
            load = os.getloadavg()[0]
            fig = run_once(c, a.file)
            fig["load"] = round(load, 2)
            runs[str(c)].append(fig)
            if not a.json:
                cells = ", ".join(
                    f"{s} {fig[f'{s}_cpu_s']:.3f}/{fig[f'{s}_wall_s']:.3f}"
                    for s in STAGES
                    if f"{s}_cpu_s" in fig
                )
                print(f"round {r + 1} {c}: load {load:.2f}: {cells} (cpu/wall s)", flush=True)
    summary = {
        c: {
            f"{s}_{k}_median": statistics.median(f[f"{s}_{k}_s"] for f in figs)
            for s in STAGES
            for k in ("cpu", "wall")
            if f"{s}_{k}_s" in figs[0]
        }
        for c, figs in runs.items()
    }
    if a.json:
        print(json.dumps({"runs": runs, "medians": summary}, indent=1))
        return
    for c, med in summary.items():
        print(c + ": medians " + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))


if __name__ == "__main__":
    main()
