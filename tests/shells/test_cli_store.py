"""`mrpvm ingest`, `mrpvm kb ...`, `mrpvm session ...` as real processes on a temporary MRPVM_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mrpvm.kernel.records import TurnRecord
from mrpvm.kernel.store import Store

DOC = """# Cooling loop

The primary pump moves coolant through the reactor core. The heat exchanger transfers heat to the
secondary loop.

## Maintenance

Operators inspect the primary pump every week. A worn seal causes coolant leaks.
"""


def mrpvm(home: Path, *args: str, check: int | None = 0) -> subprocess.CompletedProcess:
    env = dict(os.environ, MRPVM_HOME=str(home), MRPVM_ENABLED_PLUGINS="sd-symbolic,kb-fast")
    out = subprocess.run(
        [sys.executable, "-m", "mrpvm.shells.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check is not None:
        assert out.returncode == check, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    return out


def one_error_line(out: subprocess.CompletedProcess, code: str) -> None:
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mrpvm: error: ") and code in lines[0], out.stderr


def test_kb_lifecycle(tmp_path):
    created = json.loads(mrpvm(tmp_path, "kb", "create", "docs", "--json").stdout)
    assert created["name"] == "docs" and created["id"].startswith("kb_")
    one_error_line(mrpvm(tmp_path, "kb", "create", "docs", check=2), "KB_EXISTS")
    listed = json.loads(mrpvm(tmp_path, "kb", "list", "--json").stdout)
    assert [(k["name"], k["sources"], k["units"]) for k in listed["kbs"]] == [("docs", 0, 0)]
    shown = json.loads(mrpvm(tmp_path, "kb", "show", "docs", "--json").stdout)
    assert {k: shown[k] for k in ("id", "name", "sources", "units")} == {
        "id": created["id"],
        "name": "docs",
        "sources": 0,
        "units": 0,
    }
    one_error_line(mrpvm(tmp_path, "kb", "show", "nope", check=2), "KB_NOT_FOUND")
    (tmp_path / "artifacts" / created["id"] / "kb-fast").mkdir(parents=True)
    assert "removed KB 'docs'" in mrpvm(tmp_path, "kb", "rm", created["id"]).stdout
    assert not (tmp_path / "artifacts" / created["id"]).exists()
    assert json.loads(mrpvm(tmp_path, "kb", "list", "--json").stdout) == {"kbs": []}
    one_error_line(mrpvm(tmp_path, "kb", "rm", "docs", check=2), "KB_NOT_FOUND")


def test_ingest_creates_the_kb_stores_units_and_skips_unchanged_files(tmp_path):
    doc = tmp_path / "cooling.md"
    doc.write_text(DOC)
    first = mrpvm(tmp_path, "ingest", str(doc), "--kb", "plant")
    assert "created KB 'plant'" in first.stdout and "ingested cooling.md into KB 'plant'" in first.stdout
    shown = json.loads(mrpvm(tmp_path, "kb", "show", "plant", "--json").stdout)
    assert shown["sources"] == 1 and shown["units"] >= 4
    assert (
        shown["sourceList"][0]["name"] == "cooling.md"
        and shown["sourceList"][0]["unitCount"] == shown["units"]
    )
    again = json.loads(mrpvm(tmp_path, "ingest", str(doc), "--kb", "plant", "--json").stdout)
    assert again["sources"][0]["unchanged"] is True and again["failed"] == 0
    doc.write_text(DOC + "\nThe backup pump starts when pressure drops.\n")
    changed = json.loads(mrpvm(tmp_path, "ingest", str(doc), "--kb", "plant", "--json").stdout)
    result = changed["sources"][0]
    assert result["unchanged"] is False and result["sourceId"] == shown["sourceList"][0]["id"]
    assert result["notified"] == ["kb-fast"] and result["warnings"] == []
    assert json.loads(mrpvm(tmp_path, "kb", "show", "plant", "--json").stdout)["units"] == result["units"]
    assert (tmp_path / "artifacts" / shown["id"] / "kb-fast").is_dir()


def test_ingest_errors_are_one_line_and_nonzero(tmp_path):
    one_error_line(
        mrpvm(tmp_path, "ingest", str(tmp_path / "missing.md"), "--kb", "x", check=2), "file not found"
    )
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\xff\xfe\x00bad")
    one_error_line(mrpvm(tmp_path, "ingest", str(binary), "--kb", "x", check=2), "not UTF-8")
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    one_error_line(
        mrpvm(tmp_path, "ingest", str(doc), "--kb", "x", "--sd", "no-such-sd", check=2), "UNKNOWN_PLUGIN"
    )
    assert json.loads(mrpvm(tmp_path, "kb", "list", "--json").stdout) == {"kbs": []}  # no KB left behind
    empty = tmp_path / "empty.md"
    empty.write_text("   \n")
    failed = mrpvm(tmp_path, "ingest", str(empty), "--kb", "x", check=1)
    assert "INGEST_FAILED" in failed.stderr and "empty" in failed.stderr
    missing_kb = mrpvm(tmp_path, "ingest", str(doc), check=2)
    assert "--kb" in missing_kb.stderr


@pytest.fixture
def session_home(tmp_path):
    store = Store.open(tmp_path)
    kb = store.create_kb("docs")
    session = store.create_session(kb.id)
    turn = TurnRecord(
        requestId="req-1",
        sessionId=session.id,
        userMessage="What is the pump?",
        status="success",
        pluginIds={"kb": "kb-fast"},
        llmCalls=0,
        durationMs=4.0,
    )
    store.commit_turn(turn, [], None)
    store.close()
    return tmp_path, session.id


def test_session_list_and_show(session_home):
    home, session_id = session_home
    listed = json.loads(mrpvm(home, "session", "list", "--json").stdout)
    assert [(s["id"], s["kbName"], s["turns"]) for s in listed["sessions"]] == [(session_id, "docs", 1)]
    shown = json.loads(mrpvm(home, "session", "show", session_id, "--json").stdout)
    assert (
        shown["turnList"][0]["requestId"] == "req-1"
        and shown["turnList"][0]["userMessage"] == "What is the pump?"
    )
    assert session_id in mrpvm(home, "session", "show", session_id).stdout
    one_error_line(mrpvm(home, "session", "show", "ses_nope", check=2), "SESSION_NOT_FOUND")
