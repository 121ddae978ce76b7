#!/usr/bin/env python3
"""What one stray sweep of a sandboxed warm worker costs the daemon (kernel/supervisor/strays.py).

    CHECKOUT/.venv/bin/python bench/stray_sweep.py [--sweeps 20000] [--rounds 5]

Starts `bwrap --unshare-pid … sleep` (the layout a sandboxed worker has: the started pid → bwrap's pid 1 of
the plugin's pid namespace → the plugin, pid 2 there), then times `StraySweeper.sweep()` on it with nothing
to kill — what the daemon pays after every call, at most once per SWEEP_INTERVAL_S per worker. Prints the
CPU µs per sweep (best round) of the checkout whose interpreter runs it: run it with each checkout's venv to
compare (the sweeps a load makes: `daemon_kb_load.py --cprofile`, `strays.py:…(sweep)` calls).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import time

from mrpvm.kernel.supervisor.strays import StraySweeper


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SystemExit("bubblewrap (bwrap) is not installed")
    proc = subprocess.Popen(
        [bwrap, "--unshare-pid", "--die-with-parent", "--dev-bind", "/", "/", "sleep", "600"]
    )
    try:
        sweeper = StraySweeper(proc.pid)
        end = time.monotonic() + 5
        while sweeper.plugin is None and time.monotonic() < end:  # bwrap's pid 1 and the plugin start
            sweeper.sweep()
            time.sleep(0.01)
        if sweeper.plugin is None:
            raise SystemExit("could not find the sandboxed process")
        best = float("inf")
        for _ in range(a.rounds):
            start = time.process_time()
            for _ in range(a.sweeps):
                sweeper.sweep()
            best = min(best, (time.process_time() - start) / a.sweeps)
        print(
            f"stray sweep, nothing to kill: {best * 1e6:.2f} µs CPU (best of {a.rounds} rounds of {a.sweeps})"
        )
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
