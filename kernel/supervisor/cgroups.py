"""Whole-sandbox limits: a cap on the processes (and threads) and on the memory of a plugin together with
everything it starts, per started process (a one-shot call, or a warm worker).

RLIMIT_AS (`limits.pluginMemoryMB`) bounds each process alone: two children of 1.5 GiB each pass a 2 GiB
limit. A control group bounds them together. Where the kernel can manage control groups it creates one
group per plugin process under its own (`<own group>/mrpvm-<kernel pid>/p<n>`), sets `pids.max`
(`limits.pluginProcesses`) and the memory limit (`limits.pluginMemoryMB`, swap included), and starts the
plugin inside it: a fixed launcher (`/bin/sh` with a constant script, its arguments never parsed) writes
its own pid into the group, then execs the plugin's command line, so the group holds the process before
it can fork. The supervisor watches the group's counters while the process runs: a fork refused at the
process cap or a process killed at the memory limit ends the whole sandbox at once, and the call fails with
SANDBOX_LIMIT (not a timeout at the deadline).

Mechanisms, in order:
- cgroup v2, when the kernel's own group delegates the `pids` and `memory` controllers to its children
  (`cgroup.subtree_control` lists them, or they can be enabled) and is writable, else (a root kernel) the
  hierarchy's top group, where systemd enables them;
- cgroup v1, when the `pids` and `memory` hierarchies are mounted and the kernel's groups in them writable
  (root on most machines and CI containers);
- a transient scope of the user's systemd per plugin process (systemd_scope.py), for a kernel run by a
  user on cgroup v2 whose own group does not delegate (a login session);
- else RLIMIT_NPROC set inside the sandbox's user namespace (counts the sandbox's processes only), which
  holds for a kernel run by a user; Linux exempts root (uid 0) from RLIMIT_NPROC, so a root kernel without
  writable cgroups has no process cap, and no whole-sandbox memory limit anywhere without cgroups.
`status()` says which applies (`mrpvm config show`, `/ready`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import os

from . import systemd_scope
from .group_files import EventCounters, kill_members, limit_reached

TYPE_CHECKING = False  # typing is not loaded: a one-turn ask launches its workers before it (early_launch.py)
if TYPE_CHECKING:
    from .limits_status import LimitsStatus

V1_CONTROLLERS = ("pids", "memory")
SHELL = "/bin/sh"
# Join the group (both cgroup.procs files: v1 has one per controller, v2 names the same file twice), then
# become the plugin's command line. "$@" is executed as a vector: nothing in it is parsed. sh adds PWD to
# the environment; it is unset, so the plugin gets the environment as the kernel gave it.
JOIN_SCRIPT = (
    '{ echo $$ > "$1" && echo $$ > "$2"; } 2>/dev/null '
    '|| { echo "mrpvm: cannot join the sandbox control group" >&2; exit 125; }; shift 2; unset PWD OLDPWD; exec "$@"'
)
SCOPE_MECHANISM = "systemd scope (cgroup v2, the user's manager)"
WATCH_INTERVAL_S = 0.2  # how often a running process's group counters are read (a limit ends it within this)


class _Layout:
    """Where this kernel creates its groups: one base folder per controller hierarchy (v2: one for both)."""

    __slots__ = ("version", "pids_base", "memory_base")

    def __init__(self, version: int, pids_base: str, memory_base: str):
        self.version, self.pids_base, self.memory_base = version, pids_base, memory_base


def _own_groups() -> dict[str, str]:
    """controller (or "" for v2) -> this process's group path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                out[name] = path
    return out


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root inside the hierarchy, fstype, super options) of every cgroup mount."""
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                out.append((fields[4], fields[3], tail[0], set(tail[2].split(","))))
    return out


def _join(mount: str, root: str, path: str) -> str:
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root) :] or "/"
    return os.path.normpath(os.path.join(mount, path.lstrip("/")))


def _make_base(parent: str) -> str:
    """`<parent>/mrpvm-<pid>`, created; stale bases of kernels no longer running are removed first."""
    with contextlib.suppress(OSError):
        for name in os.listdir(parent):
            if name.startswith("mrpvm-") and name[6:].isdigit() and not _alive(int(name[6:])):
                _remove_tree(os.path.join(parent, name))
    base = os.path.join(parent, f"mrpvm-{os.getpid()}")
    os.makedirs(base, exist_ok=True)
    atexit.register(_remove_empty, base)
    return base


def _remove_empty(base: str) -> None:
    """At exit: remove the base and the groups left in it that no process holds (never kills)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            if os.path.isdir(os.path.join(base, name)):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(base, name))
        os.rmdir(base)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_tree(folder: str) -> None:
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if os.path.isdir(os.path.join(folder, name)):
                kill_members(os.path.join(folder, name))
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(folder, name))
        os.rmdir(folder)


def _v2_layout(mounts: list[tuple[str, str, str, set[str]]], own: dict[str, str]) -> _Layout | str:
    """The kernel's own group when it delegates pids and memory, else (root) the hierarchy's top group."""
    v2 = next((m for m in mounts if m[2] == "cgroup2"), None)
    if v2 is None or "" not in own:
        return "no cgroup v2 hierarchy"
    problems = []
    for group in dict.fromkeys((_join(v2[0], v2[1], own[""]), v2[0])):
        problem = _delegates(group)
        if problem:
            problems.append(problem)
            continue
        try:
            return _Layout(2, _make_base(group), _make_base(group))
        except OSError as err:
            problems.append(f"cannot create a group in {group} ({err.strerror})")
    return "cgroup v2: " + "; ".join(problems)


def _delegates(group: str) -> str:
    """Why `group`'s children cannot get the pids and memory controllers ("" when they can)."""
    control = os.path.join(group, "cgroup.subtree_control")
    try:
        with open(control) as f:
            enabled = set(f.read().split())
        missing = [c for c in V1_CONTROLLERS if c not in enabled]
        if missing:  # enabling them fails where the group holds processes (but at the top) or is not ours
            with open(control, "w") as f:
                f.write(" ".join(f"+{c}" for c in missing))
    except OSError as err:
        return f"{group} does not delegate pids and memory ({err.strerror})"
    return ""


def _v1_layout(mounts: list[tuple[str, str, str, set[str]]], own: dict[str, str]) -> _Layout | str:
    bases: dict[str, str] = {}
    for controller in V1_CONTROLLERS:
        mount = next((m for m in mounts if m[2] == "cgroup" and controller in m[3]), None)
        if mount is None or controller not in own:
            return f"cgroup v1: the {controller} controller is not mounted"
        group = _join(mount[0], mount[1], own[controller])
        try:
            bases[controller] = _make_base(group)
        except OSError as err:
            return f"cgroup v1: cannot create a group in {group} ({err.strerror})"
    return _Layout(1, bases["pids"], bases["memory"])


class _ScopeLayout:
    """Plugin processes start in transient scopes of the user's systemd (systemd_scope.py)."""

    __slots__ = ("command", "mount")

    def __init__(self, command: list[str], mount: str):
        self.command = command  # env <bus> systemd-run --user
        self.mount = mount  # the cgroup2 hierarchy the scopes live in


@functools.cache
def layout() -> _Layout | _ScopeLayout | str:
    """Where this process creates plugin groups, or why it cannot (once per process)."""
    if not os.path.exists(SHELL):
        return f"{SHELL} is missing (the launcher that joins a group)"
    mounts, own = _mounts(), _own_groups()
    reasons = []
    for probe in (_v2_layout, _v1_layout):
        found = probe(mounts, own)
        if isinstance(found, _Layout):
            return found
        reasons.append(found)
    v2 = next((m for m in mounts if m[2] == "cgroup2"), None)
    if v2 is not None:
        scope = systemd_scope.probe()
        if not isinstance(scope, str):
            return _ScopeLayout(scope, v2[0])
        reasons.append(scope)
    return "; ".join(reasons)


def nproc_applies() -> bool:
    """RLIMIT_NPROC binds the sandbox's processes only for a kernel that is not root (Linux exempts uid 0)."""
    return os.geteuid() != 0


def status(processes: int, memory_mb: int, sandboxed: bool) -> LimitsStatus:
    from .limits_status import LimitsStatus  # msgspec: not loaded by a launch before the kernel's imports

    found = layout()
    if isinstance(found, _Layout):
        return LimitsStatus(mechanism=f"cgroup v{found.version}", processes=processes, memoryMB=memory_mb)
    if isinstance(found, _ScopeLayout):
        return LimitsStatus(mechanism=SCOPE_MECHANISM, processes=processes, memoryMB=memory_mb)
    if sandboxed and nproc_applies():
        return LimitsStatus(
            mechanism="rlimit (RLIMIT_NPROC in the sandbox's user namespace)",
            processes=processes,
            reason=found,
        )
    why = found if sandboxed else f"{found}; and the sandbox is not active"
    if sandboxed:
        why += "; RLIMIT_NPROC does not bind root"
    return LimitsStatus(mechanism="none", reason=why)


_ENDED: set[SandboxGroup] = set()  # groups whose process exited, waiting for the last member to leave


class SandboxGroup:
    """The control group of one plugin process: made with its limits, watched, removed after the exit."""

    _counter = itertools.count(1)

    def __init__(self, found: _Layout, processes: int, memory_bytes: int):
        self.version = found.version
        name = f"p{next(self._counter)}"
        self.pids_dir = os.path.join(found.pids_base, name)
        self.memory_dir = os.path.join(found.memory_base, name)
        self.processes, self.memory_bytes = processes, memory_bytes
        self.dirs = list(dict.fromkeys((self.pids_dir, self.memory_dir)))
        self.counters = EventCounters()
        for folder in self.dirs:
            os.mkdir(folder)
        try:
            self._write(self.pids_dir, "pids.max", str(processes))
            if self.version == 2:
                self._write(self.memory_dir, "memory.max", str(memory_bytes))
                self._write(self.memory_dir, "memory.swap.max", "0", optional=True)
            else:
                self._write(self.memory_dir, "memory.limit_in_bytes", str(memory_bytes))
                self._write(self.memory_dir, "memory.memsw.limit_in_bytes", str(memory_bytes), optional=True)
        except OSError:
            self.remove()
            raise

    @staticmethod
    def _write(folder: str, name: str, value: str, optional: bool = False) -> None:
        try:
            with open(os.path.join(folder, name), "w") as f:
                f.write(value)
        except OSError:
            if not optional:
                raise

    def launcher(self, argv: list[str]) -> list[str]:
        """`argv` started inside this group (its pid joins before it runs anything of the plugin)."""
        procs = [os.path.join(self.pids_dir, "cgroup.procs"), os.path.join(self.memory_dir, "cgroup.procs")]
        return [SHELL, "-c", JOIN_SCRIPT, "mrpvm-join", *procs, *argv]

    def started(self, pid: int) -> None:
        """The group holds the process before it runs (the launcher joins it): nothing to learn."""

    def exceeded(self) -> str | None:
        events = "memory.events" if self.version == 2 else "memory.oom_control"
        return limit_reached(
            self.counters, self.pids_dir, self.memory_dir, events, self.processes, self.memory_bytes
        )

    def kill(self) -> None:
        """SIGKILL every process still in the group (a straggler the namespace teardown has not reached)."""
        for folder in self.dirs:
            kill_members(folder)

    def release(self) -> bool:
        """After its process exited: kill what is left in the group and remove it; False while members
        are still leaving (`settle` finishes the job)."""
        self.counters.close()
        self.kill()
        if self.remove():
            _ENDED.discard(self)
            return True
        _ENDED.add(self)
        return False

    def remove(self) -> bool:
        """Remove the group; False while processes are still leaving it (call again later)."""
        self.counters.close()
        done = True
        for folder in self.dirs:
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                pass
            except OSError:
                done = False
        return done


Group = SandboxGroup | systemd_scope.ScopeGroup


def new_group(processes: int, memory_bytes: int) -> Group | None:
    """A group for one plugin process, or None where control groups cannot be used (or fail just now)."""
    found = layout()
    if isinstance(found, _ScopeLayout):
        return systemd_scope.ScopeGroup(found.command, found.mount, processes, memory_bytes)
    if not isinstance(found, _Layout):
        return None
    try:
        return SandboxGroup(found, processes, memory_bytes)
    except OSError:
        return None


async def settle(limit_s: float = 3.0) -> None:
    """Remove the groups of exited processes whose members are still leaving (the supervisor's close)."""
    import asyncio

    waited, pause = 0.0, 0.001
    while True:
        for group in list(_ENDED):
            group.release()
        if not _ENDED or waited >= limit_s:
            return
        await asyncio.sleep(pause)  # members leave within a few ms: look again soon, then less often
        waited += pause
        pause = min(pause * 2, 0.02)


_handed_over: list[int] = []  # the write end of the reaper's pipe: held open until this process ends


def hand_over(groups: list[Group | None], grace_s: float) -> bool:
    """Leave the end of these groups' processes and the removal of every group of this kernel to a detached
    reaper (reaper.py) that starts its work when this process ends; False (nothing started) unless every
    group is one of this kernel's own (not a systemd scope) and the reaper could be started."""
    from . import reaper

    found = layout()
    if not isinstance(found, _Layout) or not all(isinstance(g, SandboxGroup) for g in groups):
        return False
    if _handed_over:
        return True  # this process's reaper already removes everything under the bases
    write_end = reaper.start(list(dict.fromkeys((found.pids_base, found.memory_base))), grace_s)
    if write_end is None:
        return False
    _handed_over.append(write_end)
    atexit.unregister(_remove_empty)  # the reaper removes the bases once the groups are empty
    return True
