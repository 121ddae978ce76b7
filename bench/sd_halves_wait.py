"""How long sd-symbolic's two-core build leaves its parent waiting for the forked child, in-process.

    CHECKOUT/.venv/bin/python bench/sd_halves_wait.py FILE [--runs 2]

Runs `build_analysed_tree(halves=True)` (GC off and the startup objects frozen, as the worker runs a source
op) after a serial warm-up build, and prints per build: the wall, the CPU of the parent and of its forked
children, and the time the parent spent in each job's wait for its child (halves.py `_fork`'s wait: the
child's last items, its encode and the transfer). Alternate two checkouts (each with its own venv) to compare;
on a loaded machine the wait, not the wall, is the figure that shows how the work is spread. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import resource
import time
from collections.abc import Callable
from pathlib import Path

import mrpvm.plugins.sd_symbolic.source_units.halves as halves
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_analysed_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

waits: list[float] = []
_fork = halves._fork


def timed_fork(work: Callable[[], bytes]) -> Callable[[], bytes | None] | None:
    wait = _fork(work)
    if wait is None:
        return None

    def timed() -> bytes | None:
        start = time.perf_counter()
        try:
            return wait()
        finally:
            waits.append(time.perf_counter() - start)

    return timed


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    text = Path(a.file).read_text(encoding="utf-8")
    meta = SourceMeta("src", Path(a.file).name, "markdown", created_at="2026-01-01T00:00:00+00:00")
    halves._fork = timed_fork  # type: ignore[assignment]
    gc.disable()
    gc.freeze()
    build_analysed_tree(text, meta, halves=False)  # the caches warm, as in a worker's second source
    for _ in range(a.runs):
        waits.clear()
        wall, cpu, child = time.perf_counter(), time.process_time(), children_cpu()
        build_analysed_tree(text, meta, halves=True)
        wall, cpu, child = time.perf_counter() - wall, time.process_time() - cpu, children_cpu() - child
        jobs = " + ".join(f"{w:.3f}" for w in waits)
        print(
            f"wall {wall:.2f} s, CPU {cpu:.2f} + children {child:.2f} s, parent waited {sum(waits):.3f} s ({jobs})"
        )


if __name__ == "__main__":
    main()
