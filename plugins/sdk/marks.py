"""A worker's steps on one clock, for benchmarks (bench/cold_ask_timeline.py --workers).

With MRPVM_WORKER_MARKS=1 in the kernel's environment (a plugin gets every MRPVM_* variable), a worker
writes one stderr line per step, `mark <CLOCK_MONOTONIC seconds> <its CPU ms so far> <step>`: its start,
each request and reply, a model's load. The supervisor keeps a worker's stderr in `<home>/logs/<plugin>.log`.
CLOCK_MONOTONIC is the machine's, inside the sandbox's namespaces too, so the lines fall in place beside the
CLI's own steps. Off (the default) a mark is one test of a module constant.
"""

from __future__ import annotations

import os
import time

ON = os.environ.get("MRPVM_WORKER_MARKS") == "1"


def mark(step: str) -> None:
    """One line on stderr when marks are on."""
    if ON:
        os.write(2, f"mark {time.monotonic():.4f} {time.process_time() * 1000:.0f} {step}\n".encode())
