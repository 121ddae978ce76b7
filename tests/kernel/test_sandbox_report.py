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
    """KernelContext.open starts bubblewrap's probe before loading the registry (probe_early): the Sandbox
    built next waits for that probe and reports what a probe of its own would, and the probe runs once."""
    import subprocess

    from mrpvm.kernel.config import SandboxConfig
    from mrpvm.kernel.supervisor import sandbox

    expected = sandbox.sandbox_status(SandboxConfig())
    runs: list[str] = []
    real_run = subprocess.run

    def counted(argv, *args, **kwargs):
        runs.append(argv[-1])
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(sandbox.subprocess, "run", counted)
    monkeypatch.setattr(sandbox, "_early", {})
    sandbox._probe.cache_clear()
    sandbox.probe_early(SandboxConfig(mode="off"))
    assert sandbox._early == {}  # no sandbox, no probe
    sandbox.probe_early(SandboxConfig())
    (thread,) = sandbox._early.values()
    assert thread.name == "sandbox-probe"
    assert sandbox.sandbox_status(SandboxConfig()) == expected
    assert not thread.is_alive() and runs == ["--version", "true"]  # bwrap --version, then /bin/true inside
    sandbox.probe_early(SandboxConfig())
    assert sandbox.sandbox_status(SandboxConfig()) == expected and len(runs) == 2
