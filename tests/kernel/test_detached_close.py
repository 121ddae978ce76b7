"""A one-turn kernel's close (`Supervisor.aclose(detach=True)`, kernel/supervisor/reaper.py): it returns
without waiting for its workers' exits or their control groups' removal, and once the process has ended
nothing it started is left: no worker process, no control group, not the kernel's base groups."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mrpvm.kernel.supervisor import cgroups, reaper

SUPPORT = Path(__file__).resolve().parents[1] / "support"

SCRIPT = """
import asyncio, json, os, sys
from pathlib import Path
sys.path.insert(0, {support!r})
from supervisor_support import build_registry, request, sandboxed_supervisor
from mrpvm.kernel.supervisor import cgroups, reaper

async def main():
    supervisor = sandboxed_supervisor(build_registry(Path({folder!r})))
    await supervisor.call("echo-worker", request("one"))
    await supervisor.call("echo-oneshot", request("two"))
    pids = supervisor.pids()
    found = cgroups.layout()
    bases = sorted({{found.pids_base, found.memory_base}})
    await supervisor.aclose(detach=True)
    groups = [name for base in bases for name in os.listdir(base) if os.path.isdir(os.path.join(base, name))]
    print(json.dumps({{"pids": pids, "bases": bases, "groups": groups}}), flush=True)

asyncio.run(main())
os._exit(0)
"""


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie no parent reaps yet: ended
    except OSError:
        return True


def test_the_close_of_an_ending_kernel_leaves_nothing_behind(tmp_path: Path) -> None:
    if not isinstance(cgroups.layout(), cgroups._Layout):
        pytest.skip("needs control groups this kernel manages itself")
    script = SCRIPT.format(support=str(SUPPORT), folder=str(tmp_path / "plugins"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["pids"] and seen["groups"]  # the close returned before its worker's group was removed
    deadline = time.monotonic() + 30  # a guard against a hang, not a measure
    while time.monotonic() < deadline:
        if not any(os.path.exists(b) for b in seen["bases"]) and all(gone(p) for p in seen["pids"]):
            break
        time.sleep(0.05)
    assert [b for b in seen["bases"] if os.path.exists(b)] == []
    assert [p for p in seen["pids"] if not gone(p)] == []


def test_no_reaper_for_groups_the_kernel_does_not_own() -> None:
    """A process without a group of its own (systemd scope, no cgroups) is closed as before, in the call."""
    assert cgroups.hand_over([None], 1.0) is False


def test_the_reaper_waits_for_the_kernels_end_then_kills_what_stays_and_removes_the_groups() -> None:
    """A member that ignores its EOF is killed after the grace, never before the kernel (here: the pipe's
    write end) is gone; then its group and the base are removed."""
    found = cgroups.layout()
    if not isinstance(found, cgroups._Layout):
        pytest.skip("needs control groups this kernel manages itself")
    base = os.path.join(os.path.dirname(found.pids_base), f"mrpvm-reaper-test-{os.getpid()}")
    os.makedirs(os.path.join(base, "p1"))
    stays = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        with open(os.path.join(base, "p1", "cgroup.procs"), "w") as f:
            f.write(str(stays.pid))
        write_end = reaper.start([base], 0.1)
        assert write_end is not None
        time.sleep(0.3)  # longer than the grace: the reaper still waits for the kernel's end
        assert stays.poll() is None and os.path.isdir(base)
        os.close(write_end)
        assert stays.wait(timeout=30) == -9
        deadline = time.monotonic() + 30
        while os.path.exists(base) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not os.path.exists(base)
    finally:
        stays.kill()
        stays.wait()
