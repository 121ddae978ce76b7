"""Workers launched before the kernel is imported (kernel/supervisor/early_launch.py): a one-turn process
launches what the home's last one-turn process recorded; the supervisor adopts a launched process only for a
worker it starts anyway and only when the command line, folder and environment it would use now are the
recorded ones; everything else launched is stopped (when the turn's workers are started, at close), and a
record that cannot be used starts nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import early_launch
from supervisor_support import new_supervisor, process_gone, request, run, wait_gone

KEY = early_launch.key_of(None, None, None, None)


@pytest.fixture(autouse=True)
def _nothing_left():
    yield
    early_launch.stop_all()


def _record(registry: Registry, home: Path) -> dict:
    """What a supervisor that started echo-worker keeps, written to `home` as prestart_turn writes it."""

    async def go():
        async with new_supervisor(registry) as sup:
            assert sup.prestart("echo-worker")
            await sup.call("echo-worker", request("echo:first"))
            return dict(sup.launches)

    launches = run(go)
    early_launch.record(home, KEY, launches)
    return launches


def _record_memory(home: Path) -> int:
    return early_launch.recorded(home)["workers"]["echo-worker"]["memory"]


async def _ask(registry: Registry) -> tuple[bool, list[int], str, int, dict[str, int]]:
    async with new_supervisor(registry) as sup:
        started = sup.prestart("echo-worker")
        pids = sup.pids()
        answer = (await sup.call("echo-worker", request("echo:hi"))).document.answer
        return started, pids, answer, sup.health()["echo-worker"]["spawns"], early_launch.launched()


def test_a_recorded_worker_is_launched_first_and_adopted_by_the_supervisor(
    registry: Registry, tmp_path: Path
):
    _record(registry, tmp_path)
    assert early_launch.launch(tmp_path, KEY) == ["echo-worker"]
    pid = early_launch.launched()["echo-worker"]
    limits = Path(f"/proc/{pid}/limits").read_text()
    address_space = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    assert address_space.split()[3] == str(_record_memory(tmp_path))  # bounded before it is adopted

    started, pids, answer, spawns, left = run(lambda: _ask(registry))
    assert started is True and pids == [pid]  # the launched process is the pool's worker
    assert answer == "You asked: echo:hi" and spawns == 1 and left == {}
    assert process_gone(pid)  # stopped with the supervisor, as any worker


def test_a_launch_whose_command_line_or_environment_changed_is_stopped_and_started_afresh(
    registry: Registry, tmp_path: Path
):
    launches = _record(registry, tmp_path)
    changed = {
        "echo-worker": {**launches["echo-worker"], "env": {**launches["echo-worker"]["env"], "X": "1"}}
    }
    early_launch.record(tmp_path, KEY, changed)
    assert early_launch.launch(tmp_path, KEY) == ["echo-worker"]
    stale = early_launch.launched()["echo-worker"]

    started, pids, answer, spawns, left = run(lambda: _ask(registry))
    assert started is True and pids != [stale] and len(pids) == 1
    assert answer == "You asked: echo:hi" and left == {}
    assert run(lambda: wait_gone(stale))


def test_a_launched_worker_nobody_starts_is_stopped_by_stop_all_and_by_the_supervisors_close(
    registry: Registry, tmp_path: Path
):
    _record(registry, tmp_path)
    early_launch.launch(tmp_path, KEY)
    first = early_launch.launched()["echo-worker"]
    early_launch.stop_all()  # prestart_turn: the turn started its workers, this one was not among them
    assert early_launch.launched() == {} and process_gone(first)

    early_launch.launch(tmp_path, KEY)
    second = early_launch.launched()["echo-worker"]

    async def close_without_starting():
        async with new_supervisor(registry):
            pass

    run(close_without_starting)
    assert early_launch.launched() == {} and process_gone(second)


@pytest.mark.parametrize(
    "damage",
    ["not json", "wrong key", "wrong version", "no such program", "bad entry", "writable by others"],
)
def test_a_record_that_cannot_be_used_starts_nothing_and_the_turn_starts_its_worker(
    registry: Registry, tmp_path: Path, damage: str
):
    launches = _record(registry, tmp_path)
    path = tmp_path / early_launch.RECORD
    data = json.loads(path.read_text())
    if damage == "not json":
        path.write_text("{\x00")
    elif damage == "wrong key":
        data["key"] = early_launch.key_of("planner-x", None, None, None)
    elif damage == "wrong version":
        data["version"] = 0
    elif damage == "no such program":
        data["workers"]["echo-worker"] = {**launches["echo-worker"], "argv": [str(tmp_path / "missing")]}
    elif damage == "bad entry":
        data["workers"]["echo-worker"] = {"argv": "python", "cwd": 3}
    if damage != "not json":
        path.write_text(json.dumps(data))
    if damage == "writable by others":
        path.chmod(0o666)
        assert early_launch.recorded(tmp_path) is None

    launched = early_launch.launch(tmp_path, KEY)
    assert launched in ([], ["echo-worker"])  # a missing program may start its control group's launcher
    started, pids, answer, spawns, left = run(lambda: _ask(registry))
    assert started is True and len(pids) == 1 and answer == "You asked: echo:hi"
    assert left == {} and early_launch.launched() == {}


def test_the_record_is_private_to_the_kernels_user_and_unchanged_records_are_not_rewritten(
    registry: Registry, tmp_path: Path
):
    launches = _record(registry, tmp_path)
    path = tmp_path / early_launch.RECORD
    assert path.stat().st_mode & 0o777 == 0o600
    before = path.stat().st_mtime_ns
    early_launch.record(tmp_path, KEY, launches)
    assert path.stat().st_mtime_ns == before
    early_launch.record(tmp_path, KEY, {})  # nothing started: the record is kept
    assert early_launch.recorded(tmp_path)["workers"] == json.loads(json.dumps(launches))


def test_the_same_workers_in_another_order_are_recorded_again_and_launched_in_that_order(tmp_path: Path):
    """The record's order is the launch order (a turn's first-called plugin first): a turn that started the
    same workers in another order rewrites it."""
    waiting = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    spec = {"cwd": str(tmp_path), "env": {}, "processes": 64, "memory": 1 << 31}
    workers = {name: {"argv": [*waiting, name], **spec} for name in ("planner-x", "sd-x")}
    early_launch.record(tmp_path, KEY, workers)
    early_launch.record(tmp_path, KEY, dict(reversed(workers.items())))
    assert list(early_launch.recorded(tmp_path)["workers"]) == ["sd-x", "planner-x"]
    assert early_launch.launch(tmp_path, KEY) == ["sd-x", "planner-x"]


def test_the_launcher_loads_neither_asyncio_nor_the_supervisor():
    import subprocess
    import sys

    code = (
        "import sys; from mrpvm.kernel.supervisor import early_launch; "
        "print(sorted(m for m in ('asyncio', 'mrpvm.kernel.supervisor.core', 'mrpvm.kernel.store') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
