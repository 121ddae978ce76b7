"""Replay recorded plugin request bodies in-process: CPU per call, first and repeated, optionally profiled.

    CHECKOUT/.venv/bin/python bench/replay_request.py DIR/kb-fast.retrieve.*.json [--repeat 5] [--rounds R] [--profile N] [--digest]

Bodies come from `daemon_kb_load.py --requests DIR` (daemon_requests.py). The plugin is imported from its
module (`mrpvm.plugins.<id with _>.__main__`) and each body runs through `Plugin.run`, as a warm worker
would: first pass (cold caches) then `--repeat` passes (`--rounds` times: the mean and the best round, the
latter the figure least moved by other processes on a loaded machine). `--profile N` prints cProfile's top N functions
of the repeated passes (cumulative). `--digest` prints a sha256 of every reply's CNL (first and repeated
passes): equal digests from two checkouts mean the change left the replies as they were.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import importlib
import os
import pstats
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bodies", nargs="+")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1, help="rounds of --repeat passes; also print the best")
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--sort", default="cumulative")
    ap.add_argument("--digest", action="store_true", help="print a sha256 of the replies (equivalence)")
    a = ap.parse_args()
    plugin_id = os.path.basename(a.bodies[0]).split(".")[0]
    module = importlib.import_module(f"mrpvm.plugins.{plugin_id.replace('-', '_')}.__main__")
    plugin = module.plugin
    if plugin.on_worker_start is not None:
        plugin.on_worker_start()
    bodies = [open(p, "rb").read() for p in a.bodies]  # noqa: SIM115
    t = time.process_time()
    for body in bodies:
        _doc, failure, _ = plugin.run(body)
        if failure is not None:
            print("failure:", failure.code, failure.message, file=sys.stderr)
    first = (time.process_time() - t) * 1000 / len(bodies)
    prof = cProfile.Profile() if a.profile else None
    if prof:
        prof.enable()
    rounds = []
    for _ in range(max(1, a.rounds)):
        t = time.process_time()
        for _ in range(a.repeat):
            for body in bodies:
                plugin.run(body)
        rounds.append((time.process_time() - t) * 1000 / (len(bodies) * max(1, a.repeat)))
    if prof:
        prof.disable()
    again = sum(rounds) / len(rounds)
    best = f", best of {len(rounds)} rounds {min(rounds):.2f}" if len(rounds) > 1 else ""
    print(
        f"{plugin_id}: {len(bodies)} bodies; CPU ms per call: first {first:.2f}, repeated {again:.2f}{best}"
    )
    if prof:
        pstats.Stats(prof).sort_stats(a.sort).print_stats(a.profile)
    if a.digest:
        digest = hashlib.sha256()
        for _ in range(2):  # a warm worker's memory must not change a reply
            for body in bodies:
                digest.update(plugin.handle(body).encode())
        print(f"{plugin_id}: replies sha256 {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
