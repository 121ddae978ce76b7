"""The cyclic garbage collector paused while a whole source's objects are built or read.

A source's units, analyses and CNL lines hold no reference cycles, so the collections their allocations
trigger find nothing, yet they cost a quarter to three quarters of building, parsing or decoding a 1 MB
source (each collection walks every young object again). Reference counting still frees everything.

The pause is counted, so overlapping pauses (threads of one kernel) end only when the last one does, and
it is meant for bounded bulk steps, never for a whole server loop: cycles made meanwhile are collected
at the first collection after it ends.
"""

from __future__ import annotations

import gc
from _thread import allocate_lock

# threading and contextlib are not imported: this module is among the first `mrpvm ask` loads, and on the
# path a running daemon answers they would be a tenth of the process's own start
_lock = allocate_lock()
_depth = 0
_resume = False  # whether the collector was on when the outermost pause began
# A process's start (its imports: classes, functions, tables, little garbage) allocates some 35,000 tracked
# objects, which at the default threshold (700) cost 20–60 young collections: 15–40 ms of gs-symbolic's
# ~200 ms start, ~30 ms of a one-turn `mrpvm ask`. During the start a young collection runs only every
# STARTUP_THRESHOLD allocations (collections still run: nothing is left uncollected for good).
STARTUP_THRESHOLD = 100_000
_startup: tuple[int, int, int] | None = None  # the thresholds `end_startup` restores
# A daemon, once it serves (`settle_for_serving`): its start frozen, a young collection every SERVING_THRESHOLD
# allocations. Its turns make almost no reference cycles: over 1,000 turns of bench/daemon_kb_load.py (20
# sessions) the default threshold (700) ran 67–81 young collections that found nothing, ~1 ms of the event
# loop's CPU each, and one full collection (19–27 ms of CPU, an 80–117 ms pause on a busy machine: every turn
# in flight waits) that found 5 objects; with the start frozen and this threshold, one young collection
# (1.3 ms) in 1,000 turns (bench/daemon_pauses.py). The older generations keep their ratios.
SERVING_THRESHOLD = 10_000


class _Paused:
    """`with paused_gc():` — the collector off from the outermost entry to the matching exit."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _depth, _resume
        with _lock:
            if _depth == 0:
                _resume = gc.isenabled()
                gc.disable()
            _depth += 1

    def __exit__(self, *exc: object) -> None:
        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


_PAUSED = _Paused()


def paused_gc() -> _Paused:
    """A context manager pausing the collector (counted: nested and concurrent pauses end with the last)."""
    return _PAUSED


def defer_startup_collections() -> None:
    """Collect young objects only every STARTUP_THRESHOLD allocations until `end_startup` (or
    `freeze_startup_objects`); a second call changes nothing."""
    global _startup
    if _startup is None:
        _startup = gc.get_threshold()
        gc.set_threshold(STARTUP_THRESHOLD, *_startup[1:])


def end_startup() -> None:
    """The collector's thresholds as before `defer_startup_collections` (nothing when it was not called)."""
    global _startup
    if _startup is not None:
        gc.set_threshold(*_startup)
        _startup = None


def freeze_startup_objects() -> None:
    """End the start (`end_startup`) and move every object alive now (modules, tables, caches built at
    start) out of the collector's sight: a long-lived process then never walks them again in a full
    collection (`gc.freeze`, O(1); no collection first, so a process's start does not pay one)."""
    end_startup()
    gc.freeze()


def settle_for_serving() -> None:
    """A long-running server once it serves: its start frozen (`freeze_startup_objects`) and young
    collections every SERVING_THRESHOLD allocations. Collections still run; cycles are still freed."""
    freeze_startup_objects()
    gc.set_threshold(SERVING_THRESHOLD, *gc.get_threshold()[1:])
