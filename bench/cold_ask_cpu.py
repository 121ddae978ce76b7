"""Wall time and CPU of a whole `mrpvm ask` process tree (the CLI and every plugin worker it starts).

    CHECKOUT/.venv/bin/python bench/cold_ask_cpu.py [--runs N] -- mrpvm ask --no-daemon --source FILE "question"

The command runs in a fresh control group (cgroup v1 `cpuacct`, else a cgroup v2 group under this process's
own), whose CPU counter includes the sandboxed workers (they are not the CLI's waited children, so
`time`/rusage miss them); each process's CPU is polled from /proc every 10 ms (a process ending between two
polls loses at most that much). Needs a writable control group (root on most machines). On a busy 2-core
machine compare CPU, not wall: the wall time of a saturated machine measures the other load.
To compare two checkouts, give each its own MRPVM_HOME: alternated in one home, each run finds the other's
early-launch record (kernel/supervisor/early_launch.py) and kept `--source` units, and starts afresh.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

V1 = Path("/sys/fs/cgroup/cpuacct")


def new_group() -> tuple[Path, str]:
    """(a fresh group's folder, its CPU counter file name)."""
    name = f"mrpvm-bench-{os.getpid()}-{time.monotonic_ns()}"
    if (V1 / "cpuacct.usage").exists():
        group = V1 / name
        group.mkdir()
        return group, "cpuacct.usage"
    own = Path("/proc/self/cgroup").read_text().splitlines()[0].split("::", 1)[1]
    group = Path("/sys/fs/cgroup") / own.lstrip("/") / name
    group.mkdir()
    return group, "cpu.stat"


def cpu_seconds(group: Path, counter: str) -> float:
    text = (group / counter).read_text()
    if counter == "cpuacct.usage":
        return int(text) / 1e9
    usage = next(line for line in text.splitlines() if line.startswith("usage_usec"))
    return int(usage.split()[1]) / 1e6


def one_run(command: list[str]) -> tuple[float, float, dict[str, float]]:
    group, counter = new_group()
    tick = os.sysconf("SC_CLK_TCK")

    def enter() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))

    start = time.perf_counter()
    proc = subprocess.Popen(command, preexec_fn=enter, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    per: dict[str, tuple[str, float]] = {}
    while True:
        for pid in (group / "cgroup.procs").read_text().split():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]
            except OSError:
                continue
            cpu = (int(stat[11]) + int(stat[12])) / tick
            if "python" in cmd or pid not in per:
                per[pid] = (cmd.strip(), cpu)
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    wall = time.perf_counter() - start
    total = cpu_seconds(group, counter)
    for _ in range(50):  # the last processes leave the group (killed workers take longer on a loaded host)
        time.sleep(0.2)
        try:
            group.rmdir()
            break
        except OSError:
            continue
    by_command: dict[str, float] = {}
    for cmd, cpu in per.values():
        by_command[cmd] = by_command.get(cmd, 0.0) + cpu
    return wall, total, by_command


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        sys.exit("give the command after --")
    for i in range(a.runs):
        wall, total, by_command = one_run(command)
        load = os.getloadavg()[0]
        print(f"run {i + 1}: wall {wall:.2f} s, CPU of the tree {total:.2f} s (load {load:.1f})")
        for cmd, cpu in sorted(by_command.items(), key=lambda kv: -kv[1]):
            if cpu >= 0.02:
                print(f"    {cpu:5.2f} s  {cmd}")


if __name__ == "__main__":
    main()
