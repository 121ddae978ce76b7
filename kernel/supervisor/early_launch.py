"""Workers a one-turn `mrpvm ask` starts before the kernel is imported, adopted by its supervisor.

A cold `mrpvm ask` spends ~0.1 s of one core importing the kernel (asyncio, the supervisor, the store)
before `prestart_turn` can start the turn's workers, while the other core idles. So the kernel keeps a
record of the workers a one-turn process started (`record`: each plugin's exact command line, folder and
environment, as the supervisor built them) in `<home>/run/early-workers.json`, and the next one-turn
process `launch`es the same processes first, with nothing of the kernel loaded but this module and the
control groups'. The record is only a guess, never trusted:

- the supervisor adopts a launched process (`take`) only for a worker it is starting anyway, and only when
  the command line, folder and environment it would use now are the recorded ones (the same sandbox, the
  same binds, the same limits: a changed config, manifest or environment means a fresh start);
- every launched process not adopted is killed as soon as the turn's workers are started (`stop_all`,
  also at the supervisor's close and at exit), its control group removed;
- a record that cannot be read, or a launch that fails, starts nothing: the turn starts its workers as
  without it.
The record lives in the kernel home, which plugins never see; it is written by the kernel (mode 0600).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess

from . import cgroups, home_records

TYPE_CHECKING = False  # neither typing nor pathlib is loaded before the launch: the workers start first
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .cgroups import Group

RECORD = os.path.join("run", "early-workers.json")
VERSION = 1
# Said to every worker this one-turn process starts, launched or not, when its question is not among the home's
# recent turns (kernel/question_seen.py): a worker that encodes the question may load its model at once
# (sdk embedding/encoder.worker_started). Like process.NOTHING_KEPT_FLAG, never part of a record or of the
# environment a launch is compared by: the next process, asked again, is not told.
NEW_QUESTION_FLAG = "MRPVM_NEW_QUESTION"
_hint: dict[str, str] = {}


def hint(flags: dict[str, str] | None = None) -> dict[str, str]:
    """This process's workers' extra environment (`flags` replace it when given): what the record never keeps."""
    if flags is not None:
        _hint.clear()
        _hint.update(flags)
    return _hint


class Launched:
    """A process started from the record: its Popen, control group and the launch it was given."""

    __slots__ = ("popen", "group", "argv", "cwd", "env")

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        group: Group | None,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
    ):
        self.popen, self.group, self.cwd, self.env = popen, group, cwd, env
        self.argv = argv  # the command line without the control group's launcher


_launched: dict[str, Launched] = {}


def start_process(
    argv: list[str], cwd: Path | str, env: dict[str, str], sandboxed: bool = False
) -> subprocess.Popen[bytes]:
    """`argv` started as every plugin process is: three pipes, no shell, no inherited fds, its own process
    group (pgid = pid: `killpg` ends it and what it started) and its own session. `sandboxed`: `argv` is
    bubblewrap with `--new-session` (sandbox.py), which gives the plugin its session itself, so bwrap is only
    put in a process group of its own: with `setsid()` in the vfork child (which also makes it a scheduler
    autogroup) the spawn blocked the kernel 8–10 ms while another of its threads ran Python code, against
    0.5–0.6 ms with `process_group=0` (quiet machine, 200 MB process; the same without such a thread)."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=not sandboxed,
        process_group=0 if sandboxed else None,
        close_fds=True,
        bufsize=0,
    )


def key_of(planner: str | None, sd: str | None, kb: str | None, gs: str | None) -> dict[str, str | None]:
    """What a record is kept for: the turn's pins (the workers a turn starts first follow from them and
    from the home's last turn)."""
    return {"planner": planner, "sd": sd, "kb": kb, "gs": gs}


def record(home: Path | str, key: dict[str, str | None], workers: dict[str, dict[str, object]]) -> None:
    """Keep `workers` (plugin id -> {argv, cwd, env, processes, memory}) for the next one-turn process whose
    turn has the same `key` (its pins); written atomically, readable by the kernel's user only."""
    if not workers:
        return
    previous = recorded(home)
    if previous is not None and previous.get("key") == key and _same(previous.get("workers"), workers):
        return  # the same again: not rewritten
    home_records.write(home, RECORD, {"version": VERSION, "key": key, "workers": workers})  # in start order


def _same(previous: object, workers: dict[str, dict[str, object]]) -> bool:
    """The recorded workers are these, in this order (the order `launch` starts them in)."""
    return isinstance(previous, dict) and previous == workers and list(previous) == list(workers)


def recorded(home: Path | str) -> dict[str, object] | None:
    """The record as written, or None (home_records.read: only a record this user wrote and nobody else can
    change is ever run)."""
    return home_records.read(home, RECORD, VERSION)


def launch(home: Path | str, key: dict[str, str | None]) -> list[str]:
    """Start the recorded workers of a turn with this `key`; the plugin ids started (none on any problem)."""
    data = recorded(home)
    workers = data.get("workers") if data is not None and data.get("key") == key else None
    if not isinstance(workers, dict):
        return []
    started = []
    for plugin_id, spec in workers.items():
        if plugin_id in _launched or not isinstance(spec, dict):
            continue
        with contextlib.suppress(Exception):  # a bad entry or a failed start: the supervisor starts it
            _launch_one(plugin_id, spec)
            started.append(plugin_id)
    if started:
        atexit.register(stop_all)
    return started


def _launch_one(plugin_id: str, spec: dict[str, object]) -> None:
    argv, cwd, env = spec["argv"], spec["cwd"], spec["env"]
    processes, memory = spec["processes"], spec["memory"]
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and argv):
        raise ValueError("argv")
    if not (isinstance(cwd, str) and isinstance(env, dict) and isinstance(processes, int)):
        raise ValueError("spec")
    if not isinstance(memory, int):
        raise ValueError("memory")
    group = cgroups.new_group(processes, memory) if spec.get("grouped") else None
    if spec.get("grouped") and group is None:
        raise OSError("no control group")  # the supervisor would start it with the RLIMIT fallback
    try:
        # setsid even when sandboxed: no other thread runs yet, so it costs nothing here (see start_process),
        # and each bwrap keeps its own scheduler autogroup while it builds its sandbox beside the CLI's imports
        popen = start_process(group.launcher(argv) if group is not None else argv, cwd, {**env, **_hint})
    except BaseException:
        if group is not None:
            group.remove()
        raise
    if group is not None:
        group.started(popen.pid)
    _limit_memory(popen.pid, memory)
    _launched[plugin_id] = Launched(popen, group, list(argv), cwd, dict(env))


def _limit_memory(pid: int, memory: int) -> None:
    """RLIMIT_AS on the launched process at once, as ChildProcess sets it on a plugin started without the
    sandbox (a sandboxed command line sets it itself, through prlimit, to the same value): the plugin's code
    runs from its start, long before the supervisor adopts it."""
    import resource

    with contextlib.suppress(OSError, ValueError):
        resource.prlimit(pid, resource.RLIMIT_AS, (memory, memory))


def take(
    plugin_id: str, argv_for: Callable[[bool], list[str]], cwd: str, env: dict[str, str]
) -> Launched | None:
    """The launched process of `plugin_id` when it still runs the command line (`argv_for(grouped)`: the one
    the supervisor would start now, in a control group or not), folder and environment the supervisor would
    use now; it is the caller's from here on. Else None, and that process is stopped."""
    launched = _launched.pop(plugin_id, None)
    if launched is None:
        return None
    if (
        launched.argv == argv_for(launched.group is not None)
        and launched.cwd == cwd
        and launched.env == env
        and launched.popen.poll() is None
    ):
        return launched
    _stop(launched)
    return None


def launched() -> dict[str, int]:
    """plugin id -> pid of each process launched and not yet adopted nor stopped."""
    return {plugin_id: one.popen.pid for plugin_id, one in _launched.items()}


def stop_all() -> None:
    """Stop every launched process not adopted: killed with its session and control group, reaped."""
    while _launched:
        _stop(_launched.popitem()[1])


def _stop(launched: Launched) -> None:
    popen = launched.popen
    with contextlib.suppress(OSError):
        os.killpg(popen.pid, signal.SIGKILL)  # its own session: the sandbox and all it started
    if launched.group is not None:
        launched.group.kill()
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        popen.wait(timeout=5)
    if launched.group is not None:
        launched.group.release()
