"""Plugin logs: stderr lines go to `<home>/logs/<id>.log` (written by the kernel, rotated), `mrpvm plugin
logs` shows and follows them, and a failed call's trace node keeps the stderr tail."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_support import CLI, TESTS, cli_env, mrpvm
from engine_support import Harness, intent, nodes, unit
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.kernel.supervisor.plugin_log import LogFile, StderrLog
from mrpvm.kernel.supervisor.sandbox import sandbox_status
from mrpvm.kernel.trace import STDERR_TAIL_CHARS, clip_tail

AUTHOR_PLUGINS = TESTS / "author_plugins"
STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


@pytest.fixture
def env(tmp_path):
    clean = cli_env(tmp_path / "home")
    clean["MRPVM_WRAPPER_FOLDERS"] = str(AUTHOR_PLUGINS)
    clean["MRPVM_PLUGIN_ALLOWLIST"] = "chatty"
    return clean


def _run(env: dict, prompt: str, *flags: str, request_id: str = "") -> subprocess.CompletedProcess:
    body = {"prompt": prompt, "context": [{"title": "u1", "text": "Claim: c."}], "requestId": request_id}
    return mrpvm(env, "plugin", "run", "chatty", "--input", "-", *flags, stdin=json.dumps(body).encode())


def _log(env: dict) -> list[str]:
    path = Path(env["MRPVM_HOME"]) / "logs" / "chatty.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("flags", [(), ("--one-shot",)], ids=["worker", "one-shot"])
def test_stderr_lines_go_to_the_plugins_log_stamped_with_the_request(env, flags):
    proc = _run(env, "hello", *flags, request_id="req-77")
    assert proc.returncode == 0, proc.stderr
    lines = _log(env)
    assert [line.split("] ", 1)[1] for line in lines] == ["chatty: got 'hello'", "chatty: 1 context items"]
    import re

    assert all(re.match(STAMP + r" \[\d+ req-77\] ", line) for line in lines), lines
    assert oct(os.stat(Path(env["MRPVM_HOME"]) / "logs" / "chatty.log").st_mode & 0o777) == "0o600"


def test_the_final_error_line_is_not_logged_but_the_lines_before_it_are(env):
    proc = _run(env, "fail", "--one-shot", request_id="req-f")
    assert proc.returncode == 1
    assert json.loads(proc.stderr.decode().splitlines()[-1])["code"] == "CHATTY_FAILED"  # still reported
    text = "\n".join(_log(env))
    assert "chatty: got 'fail'" in text and "chatty: 1 context items" in text
    assert "CHATTY_FAILED" not in text


def test_a_sandboxed_plugin_cannot_write_its_own_log(env):
    assert sandbox_status().active  # the machine's sandbox (CI installs bubblewrap)
    _run(env, "hello", "--one-shot")  # the log exists now
    proc = _run(env, "forge", "--one-shot")
    assert proc.returncode == 0, proc.stderr
    assert "could not write the log" in proc.stdout.decode()
    text = "\n".join(_log(env))
    assert "FORGED" not in text and "chatty: got 'forge'" in text


def test_the_log_rotates_by_size_and_keeps_a_few_files(tmp_path):
    path = tmp_path / "logs" / "p.log"
    log = LogFile(path, max_bytes=400, keep=2)
    stream = StderrLog(log, pid=9)
    for i in range(60):
        stream.feed(f"line {i:03d} ".encode() + b"y" * 20 + b"\n")
    stream.close(0)
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["p.log", "p.log.1", "p.log.2"]
    assert all(p.stat().st_size <= 400 + 80 for p in path.parent.iterdir())
    newest = path.read_text().splitlines()
    assert newest[-1].endswith("line 059 " + "y" * 20)
    every = "".join(p.read_text() for p in (path.with_name("p.log.2"), path.with_name("p.log.1"), path))
    numbers = [int(line.split("line ")[1][:3]) for line in every.splitlines()]
    assert numbers == sorted(numbers) and numbers[-1] == 59 and numbers[0] > 0  # oldest dropped, in order


def test_a_held_error_line_is_logged_when_more_lines_follow_or_the_exit_is_clean(tmp_path):
    log = LogFile(tmp_path / "p.log")
    stream = StderrLog(log, pid=1)
    stream.feed(b'{"code":"X","message":"not the last"}\nafter\n{"code":"Y","message":"final"}\n')
    stream.close(3)
    text = (tmp_path / "p.log").read_text()
    assert '"code":"X"' in text and "after" in text and '"code":"Y"' not in text
    stream = StderrLog(log, pid=2)
    stream.feed(b'{"code":"Z","message":"exit 0: only a log line"}')  # no newline: flushed at exit
    stream.close(0)
    assert '"code":"Z"' in (tmp_path / "p.log").read_text()


def test_a_flood_without_newlines_is_cut_into_bounded_lines(tmp_path):
    stream = StderrLog(LogFile(tmp_path / "p.log"), pid=1)
    stream.feed(b"z" * 50_000)
    stream.close(0)
    lines = (tmp_path / "p.log").read_text().splitlines()
    assert len(lines) >= 6 and all(len(line) < 8192 + 100 for line in lines)


def test_plugin_logs_prints_the_last_lines(env):
    _run(env, "flood 30", "--one-shot")
    proc = mrpvm(env, "plugin", "logs", "chatty", "--lines", "3")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode().splitlines()
    assert len(out) == 3 and out[-1].endswith("flood line 00029 " + "x" * 60)
    by_folder = mrpvm(env, "plugin", "logs", str(AUTHOR_PLUGINS / "chatty"), "-n", "0")
    assert len(by_folder.stdout.decode().splitlines()) == 32


def test_plugin_logs_of_an_unknown_or_bad_id_is_one_error_line(env):
    proc = mrpvm(env, "plugin", "logs", "no-such-plugin")
    assert proc.returncode == 1 and b"no log for 'no-such-plugin'" in proc.stderr
    proc = mrpvm(env, "plugin", "logs", "../../etc/passwd")
    assert proc.returncode == 2 and b"is not a plugin id" in proc.stderr


def test_plugin_logs_follow_shows_new_lines_as_they_come(env):
    _run(env, "hello", "--one-shot")
    follower = subprocess.Popen(
        [*CLI, "plugin", "logs", "chatty", "--follow", "-n", "1"],
        stdout=subprocess.PIPE,
        env=env,
        cwd=PROJECT_ROOT,
        start_new_session=True,
        # as a terminal's foreground job: a suite started in the background (`cmd &` in a script) has SIGINT
        # ignored, which a child inherits through exec, and Ctrl-C must then reach the follower all the same
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert b"1 context items" in _read_line(follower, 20)
        _run(env, "second call", "--one-shot")
        assert b"chatty: got 'second call'" in _read_line(follower, 20)
    finally:
        _interrupt(follower)


def _interrupt(proc: subprocess.Popen) -> None:
    """Ctrl-C ends `--follow` with 130; a follower that outlives a generous bound is killed, so no process
    outlives the test."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise AssertionError("`plugin logs --follow` did not stop on Ctrl-C within 60 s") from None
    assert code == 130, code


def _read_line(proc: subprocess.Popen, timeout_s: float) -> bytes:
    assert proc.stdout is not None
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            return proc.stdout.readline()
    raise AssertionError("no line from `plugin logs --follow`")


def test_a_failed_calls_trace_node_keeps_the_stderr_tail_and_the_log_has_it(tmp_path):
    stderr = "".join(f"gs-a: step {i}\n" for i in range(300)) + "gs-a: giving up\n"
    script = {
        "sd-a": {
            "detectSeeds": {
                "intents": [intent("why is the sky blue")],
                "units": [unit("session::t::unit-000")],
            }
        },
        "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "gs-a": {"solve": {"fail": {"code": "BOOM"}, "stderr": stderr}},
        "gs-b": {"solve": {"answer": "Rayleigh scattering.", "sources": []}},
    }
    harness = Harness(tmp_path, script)
    result = harness.ask("why is the sky blue?")
    failed = [n for n in nodes(result, kind="plugin", pluginId="gs-a") if n["status"] == "error"]
    assert failed, nodes(result, kind="plugin", pluginId="gs-a")
    tail = failed[0]["output"]["stderrTail"]
    assert tail.endswith("gs-a: giving up") and len(tail) <= STDERR_TAIL_CHARS
    assert tail.startswith("…gs-a: step ")  # cut at a line start
    log = (harness.home / "logs" / "gs-a.log").read_text()
    assert "gs-a: step 0\n" in log and "gs-a: giving up" in log


def test_clip_tail_keeps_whole_last_lines():
    assert clip_tail("short") == "short"
    text = "\n".join(f"line {i}" for i in range(1000))
    tail = clip_tail(text, 100)
    assert len(tail) <= 100 and tail.endswith("line 999") and tail.startswith("…line ")
