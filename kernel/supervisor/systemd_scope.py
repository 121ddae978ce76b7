"""Whole-sandbox limits through the user's systemd: a transient scope per plugin process.

A kernel run by a user on a systemd machine sits in its login session's scope, which does not delegate
the `pids` and `memory` controllers (cgroups.py's own-group path fails) and may not move processes into
other groups (cgroup v2 lets a writer move a process only under a common ancestor it may write). The
user's systemd manager may: `systemd-run --user --scope` registers a scope with the limits as unit
properties (`TasksMax`, `MemoryMax`, `MemorySwapMax=0`), moves itself into it and then execs the plugin's
command line, so the plugin (same pid, same pipes) and everything it starts are counted together.

The supervisor watches the scope's counters like a group of its own (`pids.events` max, `memory.events`
oom_kill: SANDBOX_LIMIT) and kills what is left in it after the exit; systemd removes the empty scope
(`--collect`). Used only where the manager answers a probe (once per kernel process); each start costs
the manager's round trip (tens of milliseconds), paid by one-shot calls and worker starts, not by warm
calls.
"""

from __future__ import annotations

import itertools
import os
import subprocess

from .group_files import EventCounters, kill_members, limit_reached

PROBE_TIMEOUT_S = 5.0
BUS_ENV = ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")  # how systemd-run finds the user's manager
ENV = "/usr/bin/env"


def _run_command() -> list[str] | str:
    """`env <bus variables> systemd-run --user`, or why the user's manager is out of reach."""
    if os.geteuid() == 0:
        return "a root kernel manages control groups itself"
    import shutil

    systemd_run = shutil.which("systemd-run", path=os.environ.get("PATH") or os.defpath)
    if systemd_run is None:
        return "no systemd-run"
    bus = [f"{name}={os.environ[name]}" for name in BUS_ENV if os.environ.get(name)]
    if not bus:
        return "no user session bus (XDG_RUNTIME_DIR is not set)"
    if not os.path.exists(ENV):
        return f"{ENV} is missing"
    return [ENV, *bus, systemd_run, "--user"]


def probe() -> list[str] | str:
    """The command prefix that starts a scope, once the manager has started a trial scope with limits;
    else why not."""
    command = _run_command()
    if isinstance(command, str):
        return f"systemd scope: {command}"
    trial = [*command, "--scope", "--quiet", "--collect", "-p", "TasksMax=8", "-p", "MemoryMax=64M", "--"]
    try:
        done = subprocess.run(
            [*trial, "/bin/true"], capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as err:
        return f"systemd scope: the user's manager did not start a trial scope ({err})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"systemd scope: the user's manager refused a trial scope ({said[-1] if said else done.returncode})"
    return command


def group_of(pid: int) -> str | None:
    """The cgroup v2 path of `pid` (relative to the hierarchy), None when it has exited."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].rstrip("\n")
    except OSError:
        return None
    return None


class ScopeGroup:
    """One plugin process in its own transient scope: the same duties as cgroups.SandboxGroup."""

    _counter = itertools.count(1)

    def __init__(self, command: list[str], mount: str, processes: int, memory_bytes: int):
        self.command, self.mount = command, mount
        self.unit = f"mrpvm-{os.getpid()}-p{next(self._counter)}.scope"
        self.processes, self.memory_bytes = processes, memory_bytes
        self.pid: int | None = None
        self.folder: str | None = None  # the scope's group, known once the plugin runs in it
        self.counters = EventCounters()

    def launcher(self, argv: list[str]) -> list[str]:
        """`argv` started inside a new scope with the limits; the bus variables are not passed on."""
        limits = [f"TasksMax={self.processes}", f"MemoryMax={self.memory_bytes}", "MemorySwapMax=0"]
        properties = [arg for limit in limits for arg in ("-p", limit)]
        unset = [arg for name in BUS_ENV for arg in ("-u", name)]
        scope = ["--scope", "--quiet", "--collect", f"--unit={self.unit}", *properties, "--"]
        return [*self.command, *scope, ENV, *unset, *argv]

    def started(self, pid: int) -> None:
        self.pid = pid

    def _scope_folder(self) -> str | None:
        if self.folder is None and self.pid is not None:
            path = group_of(self.pid)
            if path is not None and path.rstrip("/").endswith("/" + self.unit):
                self.folder = os.path.join(self.mount, path.lstrip("/"))
        return self.folder

    def exceeded(self) -> str | None:
        folder = self._scope_folder()
        if folder is None:
            return None
        return limit_reached(
            self.counters, folder, folder, "memory.events", self.processes, self.memory_bytes
        )

    def kill(self) -> None:
        folder = self._scope_folder()
        if folder is not None:
            kill_members(folder)

    def release(self) -> bool:
        """Kill what is left; systemd removes the emptied scope itself (`--collect`)."""
        self.counters.close()
        self.kill()
        return True

    def remove(self) -> bool:
        return True
