"""`mrpvm serve` under cProfile (CPU time of the event-loop thread) from SIGUSR1 on, stats written at exit.

PERF_CPROFILE=out.pstats CHECKOUT/.venv/bin/python daemon_cprofile.py serve --port 0
(daemon_kb_load.py --cprofile out.pstats signals it after the warm-up; read with `python -m pstats`)
"""

from __future__ import annotations

import atexit
import cProfile
import os
import signal
import sys
import time

PROFILE = cProfile.Profile(time.thread_time)  # CPU time: a loaded machine does not inflate it


def _dump() -> None:
    PROFILE.disable()
    PROFILE.dump_stats(os.environ["PERF_CPROFILE"])


if __name__ == "__main__":
    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, lambda *_: PROFILE.enable())
    from mrpvm.shells.cli.main import main

    sys.exit(main(sys.argv[1:]))
