"""The end of a one-turn kernel's plugin processes, after the kernel itself has ended.

A one-turn `mrpvm ask` has printed its answer when it closes its supervisor; waiting there for every worker's
exit (bwrap tearing down each namespace) and for the removal of their control groups costs it 20–50 ms of
wall on a busy machine, for nothing its user needs. So its close (`Supervisor.aclose(detach=True)`) sends
every worker EOF and hands the rest to this script, started detached (it leaves the kernel's session at once, no terminal,
nothing of the kernel imported: `python -I -S reaper.py GRACE BASE...`):

- it waits for the kernel to end: its stdin is a pipe only the kernel holds open, so EOF means the kernel
  is gone (however it ended);
- by then each sandbox is ending too (bwrap's --die-with-parent), and a worker run without the sandbox had
  EOF on its stdin; whatever is still in one of the kernel's control groups after GRACE seconds is killed
  (SIGKILL to each member, as the supervisor's close does after its grace);
- it removes every group under the kernel's bases (`<own group>/mrpvm-<kernel pid>` per hierarchy), then the
  bases, and exits — within LIMIT_S even if a group cannot be removed (the next kernel removes the bases of
  kernels no longer running: cgroups._make_base).
So nothing the kernel started outlives it by more than the grace, and nothing is left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

LIMIT_S = 10.0


def members(folder: str) -> list[int]:
    try:
        with open(os.path.join(folder, "cgroup.procs")) as f:
            return [int(pid) for pid in f.read().split()]
    except (OSError, ValueError):
        return []


def sweep(bases: list[str], kill: bool) -> list[str]:
    """Remove what can be removed (killing the members first when `kill`); the folders still there."""
    left = []
    for base in bases:
        with contextlib.suppress(OSError):
            for name in os.listdir(base):
                group = os.path.join(base, name)
                if not os.path.isdir(group):
                    continue
                if kill:
                    for pid in members(group):
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.rmdir(group)
        try:
            os.rmdir(base)
        except FileNotFoundError:
            continue
        except OSError:
            left.append(base)
    return left


def main(argv: list[str]) -> int:
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)  # a Ctrl-C meant for the kernel does not stop its cleanup
    with contextlib.suppress(OSError):
        os.setsid()  # out of the kernel's session and terminal
    grace = float(argv[0])
    bases = argv[1:]
    with contextlib.suppress(OSError):
        while os.read(0, 4096):  # EOF: the kernel has ended
            pass
    start = time.monotonic()
    pause = 0.002
    while bases:
        waited = time.monotonic() - start
        bases = sweep(bases, kill=waited >= grace)
        if not bases or waited >= LIMIT_S:
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
