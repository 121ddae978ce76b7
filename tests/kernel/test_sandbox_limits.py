"""What no plugin gets, whoever runs the kernel: capabilities (a root kernel's plugins included), and more
processes or memory than the whole-sandbox limits allow (kernel/supervisor/cgroups.py).

These run as the CI user, root: the case where bubblewrap keeps every capability unless told to drop them.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path

import pytest
from mrpvm.kernel.config import SandboxConfig
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import SANDBOX_LIMIT, cgroups
from mrpvm.kernel.supervisor.sandbox import sandbox_status
from supervisor_support import (
    PLUGINS,
    answer_json,
    build_registry,
    error_of,
    limits,
    manifest,
    new_supervisor,
    processes_with,
    request,
    run,
    sandboxed_supervisor,
)

EPERM = 1
TOKEN = f"limits-{uuid.uuid4().hex}"  # unique on this machine, unlike the script's name


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    folder = tmp_path_factory.mktemp("hostile")
    shutil.copy(PLUGINS / "hostile.py", folder / "hostile.py")
    data = manifest("hostile", "hostile.py", worker=False, timeoutMs=60000)
    data["args"].append(TOKEN)  # in every child's command line too: how the test finds stragglers
    (folder / "hostile.json").write_text(json.dumps(data))
    registry = Registry.load(folder)
    assert not registry.rejected, registry.rejected
    return registry


def test_a_sandboxed_plugin_holds_no_capability_and_cannot_remount(hostile: Registry) -> None:
    async def go():
        async with sandboxed_supervisor(hostile) as sup:
            return answer_json(await sup.call("hostile", request("caps")))

    seen = run(go)
    status = seen["status"]
    for key in ("CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"):
        assert int(status[key], 16) == 0, (key, status)
    assert status["NoNewPrivs"] == "1"
    assert seen["remount"] == -1 and seen["remount_errno"] == EPERM  # /usr stays read-only
    assert seen["umount"] == -1 and seen["umount_errno"] == EPERM  # nothing can be unmounted
    assert seen["wrote_usr"] is False
    assert seen["uid"] == os.getuid()  # a root kernel's plugin is uid 0 in its namespace, without powers


def test_the_whole_sandbox_limits_are_reported() -> None:
    """`mrpvm config show` and `/ready` say which limits hold; on this machine (root, cgroups), both."""
    status = sandbox_status(SandboxConfig(), limits(pluginProcesses=64, pluginMemoryMB=512)).limits
    assert status is not None
    assert status.mechanism.startswith("cgroup v"), status
    assert status.processes == 64 and status.memoryMB == 512


def test_without_cgroups_the_fallback_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "layout", lambda: "cgroup v1: the pids controller is not mounted")
    monkeypatch.setattr(cgroups, "nproc_applies", lambda: False)  # root: RLIMIT_NPROC does not bind it
    as_root = cgroups.status(64, 512, sandboxed=True)
    assert as_root.mechanism == "none" and "does not bind root" in as_root.reason
    monkeypatch.setattr(cgroups, "nproc_applies", lambda: True)  # a user
    as_user = cgroups.status(64, 512, sandboxed=True)
    assert as_user.mechanism.startswith("rlimit") and as_user.processes == 64 and as_user.memoryMB == 0
    assert "pids controller is not mounted" in as_user.reason


def _gone(marker: str, within_s: float = 10.0) -> bool:
    """No live process carries `marker` (allowing the kernel the instant it takes to deliver SIGKILL)."""
    end = time.monotonic() + within_s
    while processes_with(marker) and time.monotonic() < end:
        time.sleep(0.05)
    return processes_with(marker) == []


def _ended_at_the_limit(hostile: Registry, prompt: str, **overrides: int):
    async def go():
        async with sandboxed_supervisor(hostile, limits=limits(**overrides)) as sup:
            err = await error_of(sup.call("hostile", request(prompt), timeout_s=60))
            return err, sup.health()["hostile"]

    return run(go)


def test_a_fork_bomb_ends_at_the_process_limit(hostile: Registry) -> None:
    err, health = _ended_at_the_limit(hostile, "forkbomb:2000", pluginProcesses=64)
    # not the 60 s deadline: the plugin would answer after its children sleep, but the sandbox ended
    assert err.code == SANDBOX_LIMIT and "process limit (64" in err.error.message, err.error
    assert health["errors"] == {SANDBOX_LIMIT: 1}
    assert _gone(TOKEN)  # every child went with it


def test_children_together_end_at_the_memory_limit(hostile: Registry) -> None:
    """Two children of 300 MiB each: each below the 512 MB per-process limit, together above it."""
    err, _ = _ended_at_the_limit(hostile, "memory:300,2", pluginMemoryMB=512)
    assert err.code == SANDBOX_LIMIT and "memory limit (512 MB" in err.error.message, err.error
    assert _gone(TOKEN)


def test_no_control_group_is_left_behind(hostile: Registry) -> None:
    found = cgroups.layout()
    assert not isinstance(found, str), found

    async def go():
        async with sandboxed_supervisor(hostile) as sup:
            for _ in range(3):
                await sup.call("hostile", request("caps"))

    run(go)
    for base in {found.pids_base, found.memory_base}:
        left = [name for name in os.listdir(base) if os.path.isdir(os.path.join(base, name))]
        assert left == [], left


def test_with_a_control_group_a_setsid_child_dies_even_unsandboxed(tmp_path: Path) -> None:
    """The group's members are killed at the exit: a child that left the session goes too (without the
    group it escapes: test_sandbox.py::test_without_the_sandbox_a_setsid_child_escapes)."""
    registry = build_registry(tmp_path / "plugins")
    marker = f"600.{uuid.uuid4().int % 10**9:09d}"

    async def go() -> list[int]:
        async with new_supervisor(registry) as sup:
            await sup.call("bad-oneshot", request(f"escape:{marker}"))
        return processes_with(marker)

    escaped = run(go)
    for pid in escaped:
        os.kill(pid, 9)
    assert escaped == []


def test_config_show_and_ready_say_which_limits_hold(tmp_path: Path, http) -> None:
    from cli_support import cli_env, mrpvm

    shown = mrpvm(cli_env(tmp_path / "home"), "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    limits_shown = json.loads(shown.stdout)["sandbox"]["limits"]
    assert limits_shown["mechanism"].startswith("cgroup v") and limits_shown["processes"] == 256
    ready = http.get("/ready").json()["sandbox"]["limits"]
    assert ready["mechanism"] == limits_shown["mechanism"] and ready["memoryMB"] == 2048
