"""Where the sandbox's state is reported: `mrpvm config show` (JSON and text), the daemon's `GET /ready`,
and the one-line warning of a token-less `mrpvm serve` whose plugins run without the sandbox."""

from __future__ import annotations

import json
import time

import httpx
from api_support import Daemon
from cli_support import cli_env, mrpvm

WARNING = "mrpvm: warning: no token and the plugin sandbox is not active"


def warnings_of(daemon: Daemon, wait_s: float = 0.0) -> list[str]:
    """The warning lines the daemon wrote (its stderr is drained by a thread: wait for one if told)."""
    end = time.monotonic() + wait_s
    while True:
        found = [line for line in daemon.log if line.startswith(WARNING)]
        if found or time.monotonic() >= end:
            return found
        time.sleep(0.05)


def test_config_show_reports_the_sandbox(tmp_path):
    env = cli_env(tmp_path / "home")
    shown = json.loads(mrpvm(env, "config", "show", "--json").stdout)["sandbox"]
    assert shown["mode"] == "auto" and shown["active"] is True and shown["mechanism"].startswith("bubblewrap")
    assert shown["reason"] == "" and any("LLM endpoint" in item for item in shown["isolation"])
    off = json.loads(mrpvm(env | {"MRPVM_SANDBOX": "off"}, "config", "show", "--json").stdout)["sandbox"]
    assert off["mode"] == "off" and off["active"] is False and off["mechanism"] == "none"
    assert "engine.sandbox.mode = off" in off["reason"]
    text = mrpvm(env, "config", "show").stdout.decode()
    assert "plugin sandbox (mode auto): active (bubblewrap" in text
    text = mrpvm(env | {"MRPVM_SANDBOX": "off"}, "config", "show").stdout.decode()
    assert "plugin sandbox (mode off): NOT active: turned off by configuration" in text


def test_ready_reports_the_sandbox_behind_the_token(tmp_path):
    with Daemon(tmp_path / "a", token="t") as daemon:
        assert "sandbox" not in httpx.get(daemon.url + "/health").json()  # the open probe says nothing
        assert httpx.get(daemon.url + "/ready").status_code == 401
        with daemon.client() as http:
            ready = http.get("/ready").json()
        assert ready["ready"] and ready["sandbox"]["active"] and ready["sandbox"]["mode"] == "auto"
        assert warnings_of(daemon, wait_s=1) == []
    with Daemon(tmp_path / "b", env={"MRPVM_SANDBOX": "off"}) as daemon:
        with daemon.client() as http:
            ready = http.get("/ready")
        assert ready.status_code == 200 and ready.json()["sandbox"]["active"] is False  # not unready
        warnings = warnings_of(daemon, wait_s=10)
        assert len(warnings) == 1 and "--token" in warnings[0]


def test_no_warning_when_the_sandbox_keeps_plugins_off_the_network(tmp_path):
    with Daemon(tmp_path / "c") as daemon:  # token-less, sandbox active
        assert warnings_of(daemon, wait_s=1) == []
    with Daemon(tmp_path / "d", token="t", env={"MRPVM_SANDBOX": "off"}) as tokened:
        assert warnings_of(tokened, wait_s=1) == []


def test_the_probe_started_early_is_the_one_the_sandbox_uses(monkeypatch):
    """KernelContext.open starts bubblewrap's probe before loading the registry without waiting for it
    (probe_early; a one-turn ask's early launch does the same before the kernel's imports): the Sandbox built
    next waits for that probe and reports what a probe of its own would, and the probe runs once."""
    from mrpvm.kernel.config import SandboxConfig
    from mrpvm.kernel.supervisor import sandbox, sandbox_probe

    expected = sandbox.sandbox_status(SandboxConfig())
    spawned: list[str] = []
    real_spawn = sandbox_probe._spawn

    def counted(argv):
        spawned.append(argv[-1])
        return real_spawn(argv)

    monkeypatch.setattr(sandbox_probe, "_spawn", counted)
    monkeypatch.setattr(sandbox_probe, "_started", {})
    monkeypatch.setattr(sandbox_probe, "_results", {})
    sandbox.probe_early(SandboxConfig(mode="off"))
    assert sandbox_probe.started() == []  # no sandbox, no probe
    sandbox.probe_early(SandboxConfig())
    assert sandbox_probe.started() == [sandbox._which("bwrap")]
    assert spawned == ["--version", "true"]  # bwrap --version, and /bin/true inside a sandbox: not waited for
    assert sandbox.sandbox_status(SandboxConfig()) == expected
    assert sandbox_probe.started() == []  # collected
    sandbox.probe_early(SandboxConfig())
    assert sandbox.sandbox_status(SandboxConfig()) == expected and len(spawned) == 2


def test_a_probe_that_cannot_start_says_why(monkeypatch, tmp_path):
    from mrpvm.kernel.supervisor import sandbox_probe

    monkeypatch.setattr(sandbox_probe, "_started", {})
    monkeypatch.setattr(sandbox_probe, "_results", {})
    missing = str(tmp_path / "bwrap")
    label, problem = sandbox_probe.result(missing)
    assert label == "" and problem.startswith(f"{missing} cannot run:")
    false = tmp_path / "fails"
    false.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    false.chmod(0o755)
    label, problem = sandbox_probe.result(str(false))
    assert (
        problem
        == "bubblewrap cannot create the namespaces here: bwrap: No permissions to create new namespace"
    )
