"""`mrpvm ask --kb` with a daemon running on the same home: the CLI process's wall time and CPU, beside the
turn's own time in the daemon (the footer's "N ms"), so the CLI's share is visible (issue 22: ≤ 150 ms).

    .venv/bin/python bench/ask_daemon.py [--runs 10] [--doc FILE] [--question Q] [--source] [--cli MRPVM ...]

The daemon is this checkout's (PERF_OURS, perfkit); the document is ingested into a KB first, or with
`--source` each ask sends it (`mrpvm ask --source DOC`: one request to a daemon that takes the chat body's
`sources`, three — session, context, chat — from a CLI that predates them). Several `--cli` executables
(another checkout's .venv/bin/mrpvm: A/B) are run alternately against the same daemon.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfkit as pk  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--doc", type=Path, default=ROOT / "examples" / "tessel-build.md")
    ap.add_argument("--question", default="How do I clean a broken cache?")
    ap.add_argument("--cli", action="append", default=None, help="an mrpvm executable (repeatable: A/B)")
    ap.add_argument("--source", action="store_true", help="send the document with each ask (no KB)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    clis = args.cli or [str(pk.MRPVM)]
    home = pk.new_home("perf-ask-daemon")
    env = pk.ours_env(home)
    if not args.source:
        subprocess.run(
            [str(pk.MRPVM), "ingest", "--kb", "bench", str(args.doc)],
            env=env,
            check=True,
            capture_output=True,
        )
    where = ["--source", str(args.doc)] if args.source else ["--kb", "bench"]
    daemon = pk.start_ours(home)
    runs: dict[str, list[tuple[float, float, float]]] = {c: [] for c in clis}
    try:
        for cli in clis:  # one unmeasured ask each: files cached, the daemon's workers warm
            subprocess.run([cli, "ask", *where, args.question], env=env, capture_output=True, check=True)
        for _ in range(args.runs):
            for cli in clis:
                cpu, start = _child_cpu(), time.perf_counter()
                done = subprocess.run(
                    [cli, "ask", "-v", *where, args.question],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                wall, used = time.perf_counter() - start, _child_cpu() - cpu
                footer = re.search(r"· (\d+) ms · .*daemon", done.stderr)
                if done.returncode not in (0, 3) or footer is None:
                    raise SystemExit(f"{cli}: not answered by the daemon: {done.stderr[-500:]}")
                runs[cli].append((wall * 1000, used * 1000, float(footer.group(1))))
    finally:
        daemon.stop()
    out = {
        cli: {
            "wall_ms": pk.mmm([r[0] for r in rows], 0),
            "cli_cpu_ms": pk.mmm([r[1] for r in rows], 0),
            "turn_in_daemon_ms": pk.mmm([r[2] for r in rows], 0),
        }
        for cli, rows in runs.items()
    }
    out["load_average"] = pk.loadavg()  # type: ignore[assignment]
    if args.json:
        print(json.dumps(out))
    else:
        for cli, figures in out.items():
            print(cli, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
