"""`mrpvm ask` uses a running daemon on the same home (`<home>/daemon.json`), else runs in-process:
the same answer either way; a stale file (a killed daemon) or `--no-daemon` runs in-process; a
daemon's refusal (an unknown session) is the CLI's one-line error."""

from __future__ import annotations

import json
import os
import re

from api_support import SYMBOLIC, Daemon
from cli_support import cli_env, mrpvm, one_error_line

QUESTION = "Where does the zorblax live?"
FACTS = "The zorblax is a teal bird.\n\nThe zorblax lives in Norway.\n\nThe zorblax eats blue fish.\n"


def same_source(text: bytes) -> bytes:
    return re.sub(rb"facts-[0-9a-f]{8}", b"facts-ID", text)  # each load names its source afresh


def _env(home):
    return {**cli_env(home), "MRPVM_ENABLED_PLUGINS": SYMBOLIC, "MRPVM_PLUGIN_ALLOWLIST": ""}


def test_ask_goes_through_the_daemon_on_the_same_home_and_answers_alike(tmp_path):
    home = tmp_path / "home"
    facts = tmp_path / "facts.md"
    facts.write_text(FACTS)
    env = _env(home)
    with Daemon(home) as daemon:
        advertised = json.loads((home / "daemon.json").read_text())
        assert advertised["pid"] == daemon.proc.pid and daemon.url.endswith(f":{advertised['port']}")
        # --verbose prints the status footer, which names the daemon that answered
        via = mrpvm(env, "ask", "--verbose", "--source", str(facts), QUESTION)
        alone = mrpvm(env, "ask", "--verbose", "--no-daemon", "--source", str(facts), QUESTION)
        as_json = mrpvm(env, "ask", "--json", "--source", str(facts), QUESTION)
        unknown = mrpvm(env, "ask", "--session", "ses_nope", QUESTION)
    assert via.returncode == 0, via.stderr
    assert alone.returncode == 0, alone.stderr
    assert b"Norway" in via.stdout and same_source(via.stdout) == same_source(alone.stdout)
    assert f"daemon {daemon.url}".encode() in via.stderr
    assert b"daemon" not in alone.stderr
    turn = json.loads(as_json.stdout)
    assert {"request_id", "session_id", "response_markdown", "processing_mode", "deliberation_level"} <= set(
        turn
    )
    assert "Norway" in turn["response_markdown"]
    assert unknown.returncode != 0 and "ses_nope" in one_error_line(unknown)
    assert not (home / "daemon.json").exists()  # withdrawn at shutdown


def test_a_stale_daemon_file_falls_back_to_in_process(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    facts = tmp_path / "facts.md"
    facts.write_text(FACTS)
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    (home / "daemon.json").write_text(json.dumps({"pid": dead, "host": "127.0.0.1", "port": 9}))
    proc = mrpvm(_env(home), "ask", "--source", str(facts), QUESTION)
    assert proc.returncode == 0, proc.stderr
    assert b"Norway" in proc.stdout and b"daemon" not in proc.stderr
    for bad in ("{not json", json.dumps({"pid": os.getpid(), "host": "10.1.2.3", "port": 80})):
        (home / "daemon.json").write_text(bad)  # damaged, or a non-loopback address: never used
        proc = mrpvm(_env(home), "ask", "--source", str(facts), QUESTION)
        assert proc.returncode == 0 and b"Norway" in proc.stdout and b"daemon" not in proc.stderr
