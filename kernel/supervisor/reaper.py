"""The end of a one-turn kernel's plugin processes, after the kernel itself has ended.

A one-turn `mrpvm ask` has its answer when it closes its supervisor; waiting there for every worker's exit
(bwrap tearing down each namespace) and for the removal of their control groups costs it 20–50 ms of wall on
a busy machine, for nothing its user needs. So its close (`Supervisor.aclose(detach=True)`) sends every
worker EOF and hands the rest to a reaper, `/bin/sh` running SCRIPT (a constant: its arguments are never
parsed as code; ~1 ms of CPU to start, where a Python one costs 20–30 ms), started in its own process group
with an empty environment:

- it waits for the kernel to end: its stdin is a pipe only the kernel holds open, so EOF means the kernel
  is gone (however it ended); it ignores the terminal's signals meanwhile;
- by then each sandbox is ending too (bwrap's --die-with-parent), and a worker run without the sandbox had
  EOF on its stdin; whatever is still in one of the kernel's control groups after the grace is killed
  (SIGKILL to each member, as the supervisor's close does after its grace);
- it removes every group under the kernel's bases (`<own group>/mrpvm-<kernel pid>` per hierarchy), then the
  bases, and exits — after LIMIT_S even if a group cannot be removed (the next kernel removes the bases of
  kernels no longer running: cgroups._make_base).
So nothing the kernel started outlives it by more than the grace, and nothing is left behind.
"""

from __future__ import annotations

import math
import os
import subprocess

SHELL = "/bin/sh"
TICK_S = 0.02
LIMIT_S = 10.0
# $1: ticks of grace before members are killed, $2: ticks before giving up, then the bases.
SCRIPT = """trap '' INT HUP TERM QUIT
while read -r _; do :; done
grace=$1; limit=$2; shift 2; n=0
while :; do
  left=
  for base in "$@"; do
    [ -d "$base" ] || continue
    for group in "$base"/*/; do
      [ -d "$group" ] || continue
      if [ "$n" -ge "$grace" ]; then
        while read -r pid; do kill -9 "$pid"; done < "${group}cgroup.procs"
      fi
      rmdir "$group"
    done
    rmdir "$base" || left=1
  done 2>/dev/null
  [ -z "$left" ] && exit 0
  [ "$n" -ge "$limit" ] && exit 0
  n=$((n + 1)); sleep {tick}
done
""".replace("{tick}", str(TICK_S))


def start(bases: list[str], grace_s: float) -> int | None:
    """Start the reaper of `bases`; the write end of its pipe (held open until this process ends: closing it
    starts the reaper's work), or None when it could not be started."""
    read_end, write_end = os.pipe()  # not inheritable: only this process holds the write end
    ticks = [str(math.ceil(grace_s / TICK_S)), str(math.ceil(LIMIT_S / TICK_S))]
    try:
        subprocess.Popen(
            [SHELL, "-c", SCRIPT, "mrpvm-reaper", *ticks, *bases],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env={},  # nothing of the kernel's environment (its home, tokens)
            cwd="/",
            process_group=0,  # out of the terminal's foreground group (start_new_session: no vfork)
        )
    except (OSError, subprocess.SubprocessError):
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    return write_end
