"""What the supervisor does on every warm call and every watch tick, done once where once is enough.

A worker call naming an artifacts folder already checked and bound is not resolved again (binds.py); a
group's event counters are read through descriptors opened once (group_files.py). Both keep their answers:
a folder that holds the home is still refused, a counter written since is still seen, and nothing stays
open after the group's release. A one-turn ask's recordOutcome runs on the idle planner worker instead of
starting the background lane's own (worker_mode.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mrpvm.kernel.config import SandboxConfig
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor.binds import ArtifactBinds
from mrpvm.kernel.supervisor.errors import ProcessFailure
from mrpvm.kernel.supervisor.group_files import EventCounters, limit_reached
from mrpvm.kernel.supervisor.sandbox import Sandbox
from mrpvm.protocol.envelope import BuildPlanPayload, RecordOutcomePayload, Request
from supervisor_support import new_supervisor, run

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_warm_worker_call_checks_its_artifacts_folder_once(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    sandbox = Sandbox(SandboxConfig(mode="off"), home)
    checked: list[str] = []
    real = sandbox.artifacts_problem

    def counting(path: str) -> str | None:
        checked.append(path)
        return real(path)

    monkeypatch.setattr(sandbox, "artifacts_problem", counting)
    binds = ArtifactBinds(sandbox, "kb-x", tmp_path)
    folder = str(home / "artifacts" / "kb1" / "kb-x")
    assert binds.for_call(folder, worker=True) == (None, True)  # new: created, workers restart with it
    assert os.path.isdir(folder)
    for _ in range(5):
        assert binds.for_call(folder, worker=True) == (None, False)
    assert checked == [folder, folder]  # the call that made it and the first that found it known

    other = str(home / "artifacts" / "kb2" / "kb-x")
    assert binds.for_call(other, worker=True) == (None, True)
    assert checked[-1] == other
    assert binds.for_worker() == sorted([folder, other])

    # a folder that would expose the home is refused on every call, also after others were remembered
    for _ in range(2):
        with pytest.raises(ProcessFailure) as err:
            binds.for_call(str(home), worker=True)
        assert "would expose the kernel home" in err.value.message
    # a one-shot call is checked every time and gets its folder to bind
    before = len(checked)
    assert binds.for_call(folder, worker=False) == (folder, False)
    assert binds.for_call(folder, worker=False) == (folder, False)
    assert len(checked) == before + 2


def test_event_counters_reread_the_current_values_through_one_descriptor(tmp_path: Path) -> None:
    (tmp_path / "pids.events").write_text("max 0\n")
    counters = EventCounters()
    before = _open_fds()
    assert counters.read(str(tmp_path), "pids.events", "max") == 0
    opened = _open_fds() - before
    assert len(opened) == 1
    with open(tmp_path / "pids.events", "r+") as f:  # rewritten in place, as a cgroup file changes
        f.write("max 7\n")
    assert counters.read(str(tmp_path), "pids.events", "max") == 7
    assert _open_fds() - before == opened  # the same descriptor, not a new one per read

    # a file that appears later is read once it exists; a missing key or file reads 0
    assert counters.read(str(tmp_path), "memory.events", "oom_kill") == 0
    (tmp_path / "memory.events").write_text("low 0\noom 1\noom_kill 2\n")
    assert counters.read(str(tmp_path), "memory.events", "oom_kill") == 2
    assert counters.read(str(tmp_path), "memory.events", "absent") == 0
    (tmp_path / "bad.events").write_text("max lots\n")
    assert counters.read(str(tmp_path), "bad.events", "max") == 0

    counters.close()
    assert _open_fds() - before == set()
    # after the release a late check still answers, without keeping anything open
    assert counters.read(str(tmp_path), "pids.events", "max") == 7
    assert _open_fds() - before == set()


def test_the_limit_reached_is_named_from_the_counters(tmp_path: Path) -> None:
    (tmp_path / "pids.events").write_text("max 0\n")
    (tmp_path / "memory.events").write_text("oom_kill 0\n")
    counters = EventCounters()
    args = (counters, str(tmp_path), str(tmp_path), "memory.events", 64, 256 << 20)
    assert limit_reached(*args) is None
    (tmp_path / "memory.events").write_text("oom_kill 1\n")
    reason = limit_reached(*args)
    assert reason is not None and "memory limit (256 MB together" in reason
    (tmp_path / "pids.events").write_text("max 3\n")
    reason = limit_reached(*args)
    assert reason is not None and "process limit (64 processes" in reason
    counters.close()


def _plan() -> Request:
    return Request(prompt="q", context=[], op="buildPlan", payload=BuildPlanPayload())


def _outcome() -> Request:
    return Request(
        prompt="q", context=[], op="recordOutcome", payload=RecordOutcomePayload(plannerId="planner-default")
    )


def test_a_one_turn_ask_records_its_outcome_on_the_idle_worker_not_a_new_one(tmp_path: Path) -> None:
    """`mrpvm ask`: the planner's worker is idle when recordOutcome comes; starting the background lane's
    own worker for it cost a whole interpreter start. A daemon (`warm`) keeps the lane.

    The real planner with a 60 s timeoutMs (its 5 s would include the rest of the lane worker's cold start,
    beside four others after `warm` on a busy machine): which worker serves the call is checked, not speed."""
    manifest = json.loads((MANIFESTS / "planner-default.json").read_text())
    (tmp_path / "planner-default.json").write_text(json.dumps({**manifest, "timeoutMs": 60_000}))
    registry = Registry.load(tmp_path)

    async def cli() -> tuple[int, int, int]:
        async with new_supervisor(registry) as sup:
            await sup.call("planner-default", _plan())  # a cold ask's planning, then its outcome
            plugin = sup._plugins["planner-default"]
            for _ in range(2):
                result = await sup.call("planner-default", _outcome())
                assert result.document.result.status in ("success", "weak")
            lane = plugin.lane.slots if plugin.lane is not None else 0
            return lane, plugin.pool.slots, len(sup.pids())

    assert run(cli) == (0, 1, 1)

    async def daemon() -> tuple[float, int]:
        async with new_supervisor(registry) as sup:
            await sup.warm("planner-default")
            plugin = sup._plugins["planner-default"]
            main_before = plugin.pool.ewma_s
            await sup.call("planner-default", _outcome())
            assert plugin.pool.ewma_s == main_before  # the main pool's workers were left to buildPlan
            return plugin.lane.ewma_s, plugin.lane.slots

    ewma, slots = run(daemon)
    assert ewma > 0 and slots == 2  # `warm` started both lane workers

    async def all_busy() -> int:
        async with new_supervisor(registry) as sup:
            await sup.call("planner-default", _plan())
            plugin = sup._plugins["planner-default"]
            plugin.pool.idle.clear()  # its only worker taken (as by a buildPlan in flight)
            plugin.pool.busy += 1
            await sup.call("planner-default", _outcome())
            plugin.pool.busy -= 1
            return plugin.lane.slots

    assert run(all_busy) == 1  # no idle worker to borrow: the lane starts its own
