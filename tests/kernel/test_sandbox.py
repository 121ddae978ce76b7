"""The plugin sandbox (kernel/supervisor/sandbox.py): hostile plugins in a real bubblewrap sandbox.

A plugin cannot read the kernel's secrets (its /proc environ, by pid, by parent or by scanning /proc),
cannot open the database or list the kernel home, writes only to its artifacts folder, has no network
(test_sandbox_network.py), and nothing it starts outlives the call — a child that called setsid
included. Where the machine lacks the mechanism the kernel says so, once.

These tests need bubblewrap (.ci/run installs it); they fail, not skip, without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest
from mrpvm.kernel.config import ConfigError, SandboxConfig
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import CRASHED, TIMEOUT, cgroups
from mrpvm.kernel.supervisor import sandbox as sandbox_module
from mrpvm.kernel.supervisor.sandbox import Sandbox, SandboxUnavailable, sandbox_status
from mrpvm.protocol.envelope import Paths
from supervisor_support import (
    answer_json,
    build_registry,
    error_of,
    new_supervisor,
    processes_with,
    request,
    run,
    sandboxed_supervisor,
)

TESTS = Path(__file__).resolve().parents[1] / "support"
SECRETS = {
    "MRPVM_LLM_API_KEY": "sk-upstream-SECRET-4d1c",
    "MRPVM_API_TOKEN": "daemon-token-SECRET-93ab",
    "SOME_OTHER_SECRET": "vault-SECRET-77e0",
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(tmp_path_factory.mktemp("plugins"))


def with_paths(prompt: str, artifacts: str | None) -> object:
    req = request(prompt)
    req.paths = Paths(artifacts=artifacts)
    return req


def unique_sleep() -> str:
    """A sleep duration no other process uses: the orphan's fingerprint in /proc."""
    return f"600.{uuid.uuid4().int % 10**9:09d}"


async def settle(marker: str, within_s: float = 10.0) -> list[int]:
    end = time.monotonic() + within_s
    while time.monotonic() < end and processes_with(marker):
        await anyio.sleep(0.02)
    return processes_with(marker)


def test_the_sandbox_is_active_on_this_machine() -> None:
    status = sandbox_status()
    assert status.active and status.mechanism.startswith("bubblewrap"), status
    assert Sandbox.from_environment().active  # what the CLI's plugin check/run and the daemon get


# --------------------------------------------------------------------------- secrets and the database


def _snoop(tmp_path: Path, registry_folder: Path, mode: str) -> dict:
    home = tmp_path / f"home-{mode}"
    home.mkdir()
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(TESTS)}
    proc = subprocess.run(
        [sys.executable, str(TESTS / "sandbox_driver.py"), str(registry_folder), str(home), mode]
        + ["bad-oneshot", "snoop:{pid}|{home}"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def test_a_plugin_cannot_read_the_kernels_secrets_nor_its_database(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    build_registry(folder)
    seen = _snoop(tmp_path, folder, "require")
    text = json.dumps(seen)
    for value in SECRETS.values():
        assert value not in text
    assert seen["kernelEnviron"] is None  # the kernel's pid does not exist in the plugin's /proc
    assert "MRPVM_LLM_API_KEY" not in (seen["parentEnviron"] or "")  # its parent: bwrap, scrubbed env
    assert seen["database"] is None and seen["databaseBytes"] == 0
    assert seen["home"] == []  # an empty tmpfs where the kernel home is


def test_without_the_sandbox_the_same_plugin_reaches_the_database(tmp_path: Path) -> None:
    """The check above can fail: with the sandbox off, the snooping plugin gets the database."""
    folder = tmp_path / "plugins"
    build_registry(folder)
    seen = _snoop(tmp_path, folder, "off")
    assert seen["databaseBytes"] > 0 and "sources" in (seen["database"] or [])
    assert "mrpvm.db" in seen["home"]


# --------------------------------------------------------------------------- nothing outlives the call


@pytest.mark.parametrize("plugin", ["bad-oneshot", "bad-worker"])
def test_a_child_that_calls_setsid_dies_with_the_call(registry: Registry, plugin: str) -> None:
    calls = 25
    marker = unique_sleep()

    async def go() -> tuple[list[int], list[int]]:
        async with sandboxed_supervisor(registry) as sup:
            for _ in range(calls):
                result = await sup.call(plugin, request(f"escape:{marker}"))
                assert answer_json(result)["child"] > 0
            left_while_open = await settle(marker)  # a warm worker is still alive here
        return left_while_open, await settle(marker)

    while_open, after_close = run(go, limit_s=120)
    assert while_open == [] and after_close == []


def _children_fds() -> list[str]:
    """What this process holds open of /proc/*/task/*/children (the stray sweeps' kept descriptors)."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/proc/") and target.endswith("/children"):
            held.append(target)
    return held


def test_sweeps_apart_in_time_kill_each_stray_through_kept_descriptors(registry: Registry) -> None:
    """Each call past the sweep interval leaves a stray that the next sweep kills; the sweeps re-read the
    worker's two children lists through the same descriptors, closed once the worker is gone."""
    marker = unique_sleep()

    async def go() -> tuple[list[list[int]], list[list[str]], list[int], list[str]]:
        async with sandboxed_supervisor(registry) as sup:
            left, held = [], []
            for _ in range(4):
                assert answer_json(await sup.call("bad-worker", request(f"escape:{marker}")))["child"] > 0
                left.append(await settle(marker))
                held.append(sorted(_children_fds()))
            pids = sup.pids()
        return left, held, pids, _children_fds()

    before = _children_fds()
    left, held, pids, after = run(go, limit_s=120)
    assert left == [[]] * 4  # every call's stray was killed while the worker lived on
    assert len(pids) == 1  # one warm worker served the four calls
    assert len(held[0]) == 2 and held == [held[0]] * 4  # bwrap's pid 1 and the plugin: the same two files
    assert after == before  # the worker was reaped: its descriptors are closed


def test_without_the_sandbox_a_setsid_child_escapes(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the sandbox fixes (and proof the count above can fail): with no sandbox and no control group
    (whose members die with the call too: test_sandbox_limits.py), the child outlives the call."""
    monkeypatch.setattr(cgroups, "new_group", lambda processes, memory_bytes: None)
    marker = unique_sleep()

    async def go() -> list[int]:
        async with new_supervisor(registry) as sup:
            await sup.call("bad-oneshot", request(f"escape:{marker}"))
        return processes_with(marker)

    escaped = run(go)
    try:
        assert len(escaped) == 1
    finally:
        for pid in escaped:
            os.kill(pid, 9)


def test_a_hanging_sandboxed_plugin_is_killed_with_everything_it_started(registry: Registry) -> None:
    marker = unique_sleep()

    async def go():
        async with sandboxed_supervisor(registry) as sup:
            await sup.call("bad-worker", request(f"escape:{marker}"))  # a stray, then a hang
            err = await error_of(sup.call("bad-worker", request("hang"), timeout_s=0.5))
            return err, await settle(marker), sup.pids()

    err, left, pids = run(go)
    assert err.code == TIMEOUT and left == []


def test_a_death_by_signal_is_reported_as_such(registry: Registry) -> None:
    async def go():
        async with sandboxed_supervisor(registry) as sup:
            one = await error_of(sup.call("bad-oneshot", request("self-kill")))
            two = await error_of(sup.call("bad-worker", request("self-kill")))
            return one, two

    one, two = run(go)
    for err in (one, two):
        assert err.code == CRASHED and err.error.exitCode == -9 and "signal 9" in err.error.message


# --------------------------------------------------------------------------- what a plugin sees


def test_the_environment_is_scrubbed_and_the_memory_limit_applies(registry: Registry) -> None:
    async def go():
        async with sandboxed_supervisor(registry, extra_env={"MRPVM_EXTRA": "1"}) as sup:
            return [answer_json(await sup.call(p, request("env"))) for p in ("bad-oneshot", "bad-worker")]

    for info in run(go):
        # bwrap sets PWD (the plugin folder) after its own environment options: harmless, so allowed
        # (MRPVM_* variables pass by design, e.g. MRPVM_HOME, which tests/conftest.py sets)
        assert set(info["env"]) <= {
            "PATH",
            "HOME",
            "LANG",
            "PWD",
            "MRPVM_EXTRA",
            "MRPVM_WORKER",
            "MRPVM_HOME",
            "OPENBLAS_NUM_THREADS",
            "OMP_NUM_THREADS",
            "MKL_NUM_THREADS",
        }
        assert info["env"]["OPENBLAS_NUM_THREADS"] == "1"
        assert not {"MRPVM_LLM_API_KEY", "MRPVM_API_TOKEN"} & set(info["env"])
        assert info["rlimit_as"] == 1024 << 20 and info["pid"] == 2  # pid 2 of its own pid namespace


def test_a_plugin_writes_only_its_artifacts_folder(registry: Registry, tmp_path: Path) -> None:
    home = tmp_path / "home"
    mine = home / "artifacts" / "kb1" / "bad-worker"
    other = home / "artifacts" / "kb1" / "someone-else"
    other.mkdir(parents=True)
    sandbox = Sandbox(SandboxConfig(mode="require"), home)

    async def go():
        async with sandboxed_supervisor(registry, sandbox=sandbox) as sup:
            results = {}
            for name, target in {
                "mine": mine / "index.bin",
                "other": other / "stolen.bin",
                "home": home / "config.json",
                "tmp-host": tmp_path / "outside.txt",
            }.items():
                for plugin in ("bad-worker", "bad-oneshot"):
                    folder = str(home / "artifacts" / "kb1" / plugin)
                    reply = await sup.call(plugin, with_paths(f"write:{target}", folder))
                    results[(name, plugin)] = answer_json(reply)["written"]
            return results

    results = run(go)
    assert results[("mine", "bad-worker")] is True and (mine / "index.bin").is_file()
    assert not any(written for (name, _), written in results.items() if name in ("other", "home"))
    assert not (other / "stolen.bin").exists() and not (home / "config.json").exists()
    assert not (tmp_path / "outside.txt").exists()  # what it wrote there landed in its private /tmp


def test_a_new_artifacts_folder_restarts_the_workers_with_it_bound(
    registry: Registry, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    sandbox = Sandbox(SandboxConfig(mode="require"), home)

    async def go():
        async with sandboxed_supervisor(registry, sandbox=sandbox) as sup:
            written, pids = [], []
            for kb in ("kb1", "kb2", "kb1", "kb3"):
                folder = home / "artifacts" / kb / "bad-worker"
                reply = await sup.call("bad-worker", with_paths(f"write:{folder / 'x'}", str(folder)))
                written.append(answer_json(reply)["written"])
                pids.append(sorted(sup.pids()))
            return written, pids, sup.health()["bad-worker"]["spawns"]

    written, pids, spawns = run(go)
    assert written == [True, True, True, True]
    assert spawns == 3  # kb1 (first start), kb2 (new folder), kb3 (new folder); kb1 again reuses


def test_a_warm_pool_is_refilled_at_once_when_a_new_artifacts_folder_retires_its_workers(
    registry: Registry, tmp_path: Path
) -> None:
    """A daemon starts its pools at their size; a new KB's folder retires their workers. Fresh ones with
    it bound take every slot at once, not one by one as calls come (in the middle of the next load)."""
    home = tmp_path / "home"
    sandbox = Sandbox(SandboxConfig(mode="require"), home)

    async def go():
        async with sandboxed_supervisor(registry, sandbox=sandbox) as sup:
            await sup.warm("bad-worker")
            before = set(sup.pids())
            folder = home / "artifacts" / "kb1" / "bad-worker"
            reply = await sup.call("bad-worker", with_paths(f"write:{folder / 'x'}", str(folder)))
            end = time.monotonic() + 10
            while set(sup.pids()) & before and time.monotonic() < end:  # the retired ones leave on EOF
                await anyio.sleep(0.02)
            return before, set(sup.pids()), answer_json(reply)["written"], sup.health()["bad-worker"]

    before, after, written, health = run(go)
    assert written is True
    assert len(before) == 2 and len(after) == 2 and not before & after
    assert health["spawns"] == 4


def test_an_artifacts_folder_holding_the_home_is_refused(registry: Registry, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sandbox = Sandbox(SandboxConfig(mode="require"), home)

    async def go():
        async with sandboxed_supervisor(registry, sandbox=sandbox) as sup:
            return [
                await error_of(sup.call("bad-oneshot", with_paths("echo:x", path)))
                for path in (str(tmp_path), str(home), str(home / "models"))
            ]

    for err in run(go):
        assert "would expose the kernel home" in err.error.message


# No network for any plugin, and LLM plugins reaching only the LLM endpoint: test_sandbox_network.py


def test_configured_read_and_write_paths_are_bound_but_never_the_home(
    registry: Registry, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    home = shared / "home"  # the home inside a bound folder stays hidden
    home.mkdir()
    (home / "mrpvm.db").write_text("not for plugins")
    sandbox = Sandbox(SandboxConfig(mode="require", writePaths=[str(shared)]), home)

    async def go():
        async with sandboxed_supervisor(registry, sandbox=sandbox) as sup:
            ok = answer_json(await sup.call("bad-oneshot", request(f"write:{shared / 'note.txt'}")))
            seen = answer_json(await sup.call("bad-oneshot", request(f"snoop:1|{home}")))
            return ok, seen

    ok, seen = run(go)
    assert ok["written"] is True and (shared / "note.txt").read_text() == "written by a plugin"
    assert seen["databaseBytes"] == 0 and seen["home"] == []


def test_a_configured_path_inside_the_home_is_a_config_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for config in (
        SandboxConfig(writePaths=[str(home / "artifacts")]),
        SandboxConfig(readPaths=[str(home)]),
    ):
        with pytest.raises(ConfigError, match="lies inside the kernel home"):
            Sandbox(config, home)
    assert Sandbox(SandboxConfig(writePaths=[str(tmp_path)]), home).config.writePaths == [str(tmp_path)]


# --------------------------------------------------------------------------- where the mechanism is missing


def test_a_missing_mechanism_is_announced_once(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(
        sandbox_module, "_which", lambda name: None if name == "bwrap" else "/usr/bin/" + name
    )
    monkeypatch.setattr(sandbox_module, "_announced", False)
    status = sandbox_status(SandboxConfig())
    assert not status.active and "bubblewrap is not installed" in status.reason
    with pytest.raises(SandboxUnavailable, match="require"):
        Sandbox(SandboxConfig(mode="require"))
    fallback = Sandbox(SandboxConfig(mode="auto"))
    assert not fallback.active and fallback.command(["python", "x.py"], "/", llm=False) == [
        "python",
        "x.py",
    ]
    sandbox_module.announce(fallback.status)
    sandbox_module.announce(fallback.status)
    err = capsys.readouterr().err
    assert err.count("plugin sandbox not active (bubblewrap is not installed") == 1


def test_turning_the_sandbox_off_is_said_too() -> None:
    status = sandbox_status(SandboxConfig(mode="off"))
    assert not status.active and "turned off by configuration" in status.notice()
    assert sandbox_status(SandboxConfig(mode="auto")).notice() == ""


def test_the_kernel_process_is_not_dumpable(registry: Registry) -> None:
    import ctypes

    new_supervisor(registry)  # any supervisor protects the process that runs it
    assert sandbox_module.protect_kernel() is True
    assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE: 0


def test_the_store_url_never_reaches_a_plugin() -> None:
    """It may carry the database password (README "Running on several machines")."""
    from mrpvm.kernel.supervisor.process import scrubbed_env

    url = "postgresql://mrpvm:db-SECRET-5e2a@db.internal/mrpvm"
    env = scrubbed_env({"MRPVM_STORE_URL": url}, environ={"MRPVM_STORE_URL": url, "MRPVM_HOME": "/h"})
    assert env == {"MRPVM_HOME": "/h"}
