"""The systemd-scope path of the whole-sandbox limits (a kernel run by a user in a login session).

This machine and CI have no systemd manager (and mount cgroup v1), so `systemd-run` is played by a small
script with the behaviour the path relies on: it records the scope's limits as a cgroup2 folder would
show them, puts its own pid in the scope, and execs the command line (the same pid runs the plugin). The
supervisor's real process code starts the plugin through it and watches the scope's counters.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from mrpvm.kernel.supervisor import cgroups, systemd_scope
from mrpvm.kernel.supervisor.process import ChildProcess

FAKE_SYSTEMD_RUN = """#!{python}
import os, sys
root = {root!r}
args = sys.argv[1:]
cut = args.index("--")
options, command = args[:cut], args[cut + 1:]
if os.environ.get("XDG_RUNTIME_DIR") is None or "--user" not in options or "--scope" not in options:
    sys.exit("Failed to connect to bus: No medium found")
unit = next((o.split("=", 1)[1] for o in options if o.startswith("--unit=")), "run-probe.scope")
props = dict(options[i + 1].split("=", 1) for i, o in enumerate(options) if o == "-p")
folder = os.path.join(root, "user.slice", "app.slice", unit)
os.makedirs(folder, exist_ok=True)
files = {{"pids.max": props["TasksMax"], "memory.max": props["MemoryMax"],
         "memory.swap.max": props.get("MemorySwapMax", "max"), "pids.events": "max 0\\n",
         "memory.events": "oom 0\\noom_kill 0\\n", "cgroup.procs": str(os.getpid()) + "\\n"}}
for name, value in files.items():
    with open(os.path.join(folder, name), "w") as f:
        f.write(value)
os.makedirs(os.path.join(root, "by-pid"), exist_ok=True)
with open(os.path.join(root, "by-pid", str(os.getpid())), "w") as f:
    f.write("/user.slice/app.slice/" + unit)
os.execvp(command[0], command)
"""


@pytest.fixture
def user_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's login session on cgroup v2: its own group does not delegate, the top is not writable,
    and `systemd-run --user` reaches a manager (the script above)."""
    root = tmp_path / "cgroup2"
    session = root / "user.slice" / "session-2.scope"
    session.mkdir(parents=True)
    for group in (root, session):
        (group / "cgroup.subtree_control").mkdir()  # not writable: neither delegates
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "systemd-run"
    fake.write_text(FAKE_SYSTEMD_RUN.format(python=sys.executable, root=str(root)))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setattr(systemd_scope.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(cgroups, "_mounts", lambda: [(str(root), "/", "cgroup2", {"rw"})])
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"": "/user.slice/session-2.scope"})
    monkeypatch.setattr(systemd_scope, "group_of", lambda pid: _read(root / "by-pid" / str(pid)))
    cgroups.layout.cache_clear()
    yield root
    cgroups.layout.cache_clear()


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def test_a_user_kernel_without_delegation_uses_systemd_scopes(user_session):
    found = cgroups.layout()
    assert isinstance(found, cgroups._ScopeLayout)
    status = cgroups.status(64, 512, sandboxed=True)
    assert status.mechanism == cgroups.SCOPE_MECHANISM
    assert (status.processes, status.memoryMB) == (64, 512)
    assert (user_session / "user.slice" / "app.slice" / "run-probe.scope" / "pids.max").read_text() == "8"


def test_no_bus_means_no_scope_and_the_reason_is_said(user_session, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    cgroups.layout.cache_clear()
    status = cgroups.status(64, 512, sandboxed=False)
    assert status.mechanism == "none" and "no user session bus" in status.reason


def test_a_refusing_manager_is_said(user_session, monkeypatch):
    (user_session.parent / "bin" / "systemd-run").write_text("#!/bin/sh\necho 'Access denied' >&2\nexit 1\n")
    cgroups.layout.cache_clear()
    assert "refused a trial scope (Access denied)" in cgroups.status(64, 512, sandboxed=False).reason


async def _run_in_scope(group: cgroups.Group, argv: list[str], hit_limit: Path | None) -> ChildProcess:
    loop = asyncio.get_running_loop()
    child = ChildProcess(
        group.launcher(argv),
        cwd="/",
        env={"PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]},
        loop=loop,
        on_stdout=lambda data: None,
        on_stdout_eof=lambda: None,
        on_exit=lambda code: None,
        group=group,
    )
    if hit_limit is not None:
        for _ in range(500):  # the scope exists once the fake manager has run
            if hit_limit.parent.exists() and (hit_limit.parent / "cgroup.procs").exists():
                break
            await asyncio.sleep(0.01)
        hit_limit.write_text("max 1\n")  # the scope refused a fork at TasksMax
    await asyncio.wait_for(child.exited, 60)
    return child


def test_a_plugin_runs_in_its_scope_with_the_limits_and_a_refused_fork_ends_it(user_session):
    group = cgroups.new_group(processes=32, memory_bytes=128 << 20)
    assert isinstance(group, systemd_scope.ScopeGroup)
    scope = user_session / "user.slice" / "app.slice" / group.unit
    launcher = group.launcher(["/bin/sleep", "60"])
    assert launcher[-2:] == ["/bin/sleep", "60"] and "-u" in launcher  # the bus variables are not passed on
    child = asyncio.run(_run_in_scope(group, ["/bin/sleep", "60"], scope / "pids.events"))
    assert (scope / "pids.max").read_text() == "32"
    assert (scope / "memory.max").read_text() == str(128 << 20)
    assert (scope / "memory.swap.max").read_text() == "0"
    assert (scope / "cgroup.procs").read_text().split() == [str(child.pid)]  # the plugin is the scope's
    assert child.limit_exceeded is not None and "process limit (32 processes" in child.limit_exceeded


def test_the_plugin_sees_no_bus_variables(user_session, tmp_path):
    group = cgroups.new_group(processes=32, memory_bytes=128 << 20)
    assert group is not None
    out = tmp_path / "env.txt"
    child = asyncio.run(_run_in_scope(group, ["/bin/sh", "-c", f"env > {out}"], None))
    assert child.returncode == 0 and child.limit_exceeded is None
    seen = out.read_text()
    assert "PATH=" in seen and "XDG_RUNTIME_DIR" not in seen
