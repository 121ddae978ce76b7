"""The daemon's event loop (shells/api/event_loop.py): uvloop when installed, asyncio's own when told or when
uvloop is missing; a bad MRPVM_EVENT_LOOP is refused in one line; /ready names the loop that runs, and a
daemon on asyncio's loop still answers and stops on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

import pytest
from api_support import Daemon
from mrpvm.shells.api import event_loop
from mrpvm.shells.api.event_loop import ENV, EventLoopError, loop_factory, running_loop_name


async def _name() -> str:
    await asyncio.sleep(0)
    return running_loop_name()


@pytest.mark.parametrize(
    ("setting", "expected"),
    [(None, "uvloop"), ("auto", "uvloop"), (" UVLOOP ", "uvloop"), ("asyncio", "asyncio")],
)
def test_the_setting_picks_the_loop(setting, expected):
    environ = {} if setting is None else {ENV: setting}
    assert event_loop.run(_name(), environ) == expected


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert loop_factory({}) is None
    assert event_loop.run(_name(), {ENV: "auto"}) == "asyncio"
    with pytest.raises(EventLoopError, match="not installed"):
        loop_factory({ENV: "uvloop"})


@pytest.mark.parametrize("setting", ["libuv", "", "asyncio,uvloop", "1"])
def test_a_setting_naming_no_loop_is_refused(setting):
    if not setting:  # empty means unset: the default
        assert loop_factory({ENV: setting}) is not None
        return
    with pytest.raises(EventLoopError, match=ENV):
        loop_factory({ENV: setting})


def test_a_refused_setting_leaves_no_coroutine_unawaited(recwarn):
    with pytest.raises(EventLoopError):
        event_loop.run(_name(), {ENV: "nope"})
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def test_serve_refuses_a_bad_setting_in_one_line(tmp_path):
    env = Daemon(tmp_path / "home").env | {ENV: "libuv"}
    done = subprocess.run(
        [sys.executable, "-m", "mrpvm.shells.cli.main", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert ENV in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("setting", ["uvloop", "asyncio"])
def test_the_daemon_runs_and_stops_on_either_loop(tmp_path, setting):
    daemon = Daemon(tmp_path / "home", env={ENV: setting}).start()
    try:
        with daemon.client() as http:
            ready = http.get("/ready")
            assert ready.status_code == 200 and ready.json()["eventLoop"] == setting
            turn = http.post("/chat/completions", json={"message": "Hello?", "stream": False})
            assert turn.status_code == 200 and turn.json()["response_markdown"]
    finally:
        code = daemon.stop()
    assert code in (0, -signal.SIGTERM)
    assert not any("Traceback" in line for line in daemon.log)
