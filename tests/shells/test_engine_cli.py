"""`mrpvm ask/trace/config show` as real processes over the built-in plugins (whatever their maturity)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MRPVM = [sys.executable, "-m", "mrpvm.shells.cli.main"]
GROUP_KEYS = {
    "intentRef",
    "act",
    "intent",
    "status",
    "answerMarkdown",
    "kbSources",
    "sessionSources",
    "currentTurnContext",
    "warnings",
}


def run(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env["MRPVM_HOME"] = str(home)
    return subprocess.run(
        [*MRPVM, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, input=stdin
    )


@pytest.fixture(scope="module")
def asked(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    proc = run(home, "ask", "What does WAL mode change?", "--json", "--max-llm-calls", "0")
    assert proc.returncode == 3, proc.stderr  # nothing loaded: refused, the documented exit status
    return home, json.loads(proc.stdout)


def test_ask_json_prints_exactly_the_documented_keys(asked):
    _, data = asked
    assert list(data) == [
        "request_id",
        "session_id",
        "planner_plugin",
        "seed_detector_plugin",
        "kb_plugin",
        "goal_solver_plugin",
        "response_markdown",
        "response_document",
        "execution_trace",
        "llm_calls",
        "duration_ms",
        "processing_mode",
        "retrieval_profile",
        "deliberation_level",
    ]
    assert data["request_id"].startswith("req_") and data["session_id"]
    groups = data["response_document"]["groups"]
    assert groups and all(set(g) >= GROUP_KEYS for g in groups)
    assert set(data["execution_trace"]) >= {"nodes", "edges"}
    assert data["llm_calls"] == 0  # a zero budget skips every LLM plugin
    skipped = [n for n in data["execution_trace"]["nodes"] if n.get("status") == "skipped-budget"]
    assert all(n["pluginId"].startswith(("sd-llm", "gs-llm", "val-llm")) for n in skipped)
    assert "### Answer" in data["response_markdown"]


def test_trace_formats_read_the_stored_turn(asked):
    home, data = asked
    request_id = data["request_id"]
    as_json = run(home, "trace", request_id, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == data["execution_trace"]
    mermaid = run(home, "trace", request_id, "--format", "mermaid")
    assert mermaid.returncode == 0 and mermaid.stdout.startswith("flowchart TD")
    tree = run(home, "trace", request_id)
    assert tree.returncode == 0 and f"turn {request_id}" in tree.stdout and "root frame" in tree.stdout


def test_errors_are_one_structured_line_with_a_non_zero_exit(asked, tmp_path):
    home, _ = asked
    cases = [
        (("trace", "req_missing"), "TURN_NOT_FOUND"),
        (("ask", "hello", "--session", "ses_missing"), "SESSION_NOT_FOUND"),
        (("ask", "hello", "--gs", "kb-fast"), "UNKNOWN_PLUGIN"),
        (("ask", "hello", "--source", str(tmp_path / "nope.md")), "source file not found"),
        (("trace", "x", "--format", "svg"), "unknown format"),
    ]
    for args, needle in cases:
        proc = run(home, *args)
        assert proc.returncode != 0, args
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mrpvm: error:") and needle in lines[0], (
            args,
            proc.stderr,
        )
        assert "Traceback" not in proc.stderr


def test_config_show_names_the_origin_of_each_value(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"engine": {"budget": {"maxParallelSeeds": 2}}}))
    env_run = run(tmp_path, "config", "show", "--json")
    assert env_run.returncode == 0, env_run.stderr
    data = json.loads(env_run.stdout)
    assert data["config"]["engine"]["budget"]["maxParallelSeeds"] == 2
    assert data["sources"]["engine.budget.maxParallelSeeds"] == str(tmp_path / "config.json")
    assert data["sources"]["engine.budget.maxLLMCalls"].startswith("default")
    assert data["sources"]["home"] == "env MRPVM_HOME"
    (tmp_path / "config.json").write_text(json.dumps({"engine": {"budget": {"maxParallelSeeds": 0}}}))
    bad = run(tmp_path, "config", "show")
    assert (
        bad.returncode != 0 and "maxParallelSeeds" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    )


def test_chat_keeps_one_session_across_turns(tmp_path):
    proc = run(tmp_path, "chat", stdin="What is WAL?\nWhat is a checkpoint?\nexit\n")
    assert proc.returncode == 0, proc.stderr
    footers = [line for line in proc.stderr.splitlines() if " · session " in line]
    sessions = {line.split(" · session ")[1].split(" ")[0] for line in footers}
    assert len(footers) == 2 and len(sessions) == 1
    listed = run(tmp_path, "session", "show", sessions.pop(), "--json")
    assert listed.returncode == 0, listed.stderr


def test_sources_name_the_file_and_the_heading_they_come_from(tmp_path):
    doc = tmp_path / "guide.md"
    doc.write_text("# Guide\n\n## Cleaning\n\nDelete the cache folder to clean a broken cache.\n")
    proc = run(tmp_path / "home", "ask", "How do I clean a broken cache?", "--source", str(doc))
    assert proc.returncode == 0, proc.stderr
    sources = proc.stdout.split("Sources:", 1)[1]
    assert "- guide.md › Cleaning" in sources
    data = json.loads(
        run(tmp_path / "home", "ask", "How do I clean a broken cache?", "--source", str(doc), "--json").stdout
    )
    [ref] = data["response_document"]["groups"][0]["sessionSources"]
    assert ref["section"] == "Cleaning" and ref["sourceName"] == "guide.md"
