"""Replay recorded plugin request bodies in-process: CPU per call, first and repeated, optionally profiled.

    CHECKOUT/.venv/bin/python bench/replay_request.py DIR/kb-fast.retrieve.*.json [--repeat 5] [--rounds R] [--profile N] [--digest]
        [--warm N]

Bodies come from `daemon_kb_load.py --requests DIR` (daemon_requests.py). The plugin is imported from its
module (`mrpvm.plugins.<id with _>.__main__`) and each body runs through `Plugin.run`, as a warm worker
would: first pass (cold caches) then `--repeat` passes (`--rounds` times: the mean and the best round, the
latter the figure least moved by other processes on a loaded machine). `--warm N`: the first N bodies (in the
order of their recorded number) run once before the first pass and are left out of the timed passes: the
first pass then costs what questions the worker has not seen cost (e.g. the bodies of a load with
`--load-questions … --distinct`: the warm-up's questions, then each a new one over the same units). `--profile N` prints cProfile's top N functions
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
    ap.add_argument("--warm", type=int, default=0, help="run the first N bodies once, untimed")
    ap.add_argument(
        "--thread",
        action="store_true",
        help="time the calling thread only (a worker's background work, e.g. gs-symbolic's encoder load "
        "once idle, left out)",
    )
    ap.add_argument(
        "--forget",
        action="store_true",
        help="after --warm, clear the plugin's own memos (every functools cache of its modules) but keep what "
        "else it holds (sentence vectors, the loaded encoder): the first pass then times the plugin's analysis "
        "of texts it has not seen, without encoding them",
    )
    a = ap.parse_args()
    a.bodies.sort(key=_number)
    clock = time.thread_time if a.thread else time.process_time
    plugin_id = os.path.basename(a.bodies[0]).split(".")[0]
    module = importlib.import_module(f"mrpvm.plugins.{plugin_id.replace('-', '_')}.__main__")
    plugin = module.plugin
    if plugin.on_worker_start is not None:
        plugin.on_worker_start()
    bodies = [open(p, "rb").read() for p in a.bodies]  # noqa: SIM115
    for body in bodies[: a.warm]:
        plugin.run(body)
    bodies = bodies[a.warm :] or bodies
    if a.forget:
        _forget(f"mrpvm.plugins.{plugin_id.replace('-', '_')}")
    t = clock()
    for body in bodies:
        _doc, failure, _ = plugin.run(body)
        if failure is not None:
            print("failure:", failure.code, failure.message, file=sys.stderr)
    first = (clock() - t) * 1000 / len(bodies)
    prof = cProfile.Profile() if a.profile else None
    if prof:
        prof.enable()
    rounds = []
    for _ in range(max(1, a.rounds)):
        t = clock()
        for _ in range(a.repeat):
            for body in bodies:
                plugin.run(body)
        rounds.append((clock() - t) * 1000 / (len(bodies) * max(1, a.repeat)))
    if prof:
        prof.disable()
    again = sum(rounds) / len(rounds)
    best = f", best of {len(rounds)} rounds {min(rounds):.2f}" if len(rounds) > 1 else ""
    print(
        f"{plugin_id}: {len(bodies)} bodies ({a.warm} warm-up); CPU ms per call: first {first:.2f}, repeated {again:.2f}{best}"
    )
    if prof:
        pstats.Stats(prof).sort_stats(a.sort).print_stats(a.profile)
    if a.digest:
        digest = hashlib.sha256()
        for _ in range(2):  # a warm worker's memory must not change a reply
            for body in bodies:
                digest.update(plugin.handle(body).encode())
        print(f"{plugin_id}: replies sha256 {digest.hexdigest()[:16]}")


def _forget(package: str) -> None:
    """Clear the functools caches of the modules under `package` (functions and methods of its classes)."""
    for name, module in list(sys.modules.items()):
        if name != package and not name.startswith(package + "."):
            continue
        for value in vars(module).values():
            members = [getattr(value, k, None) for k in vars(value)] if isinstance(value, type) else [value]
            for member in members:
                if callable(getattr(member, "cache_clear", None)):
                    member.cache_clear()


def _number(path: str) -> tuple[int, str]:
    """A body's recorded number (DIR/<plugin>.<op>.<n>.json): the order the calls came in."""
    stem = os.path.basename(path).rsplit(".", 2)
    return (int(stem[1]), path) if len(stem) == 3 and stem[1].isdigit() else (-1, path)


if __name__ == "__main__":
    main()
