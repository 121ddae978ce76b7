"""`mrpvm kb check NAME`: the report of what the kb-plugins' indexes owe, its repair, its exit codes.

The KB is left owing by a real kernel SIGKILLed right after an ingest's commit (before any kb-plugin
heard of the source), as tests/knowledge/test_ingest_acks.py does."""

from __future__ import annotations

import json

from cli_support import cli_env, mrpvm, one_error_line
from test_ingest_acks import ENABLED, FACT, KB_PLUGINS, QUESTION, kill_at


def env_for(home) -> dict[str, str]:
    return cli_env(home) | {"MRPVM_ENABLED_PLUGINS": ENABLED}


def check(env, *args: str) -> tuple[int, dict]:
    proc = mrpvm(env, "kb", "check", "docs", "--json", *args, timeout=120)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_report_without_repair_then_repair_then_clean(tmp_path):
    home = tmp_path / "home"
    kill_at(home, "committed")
    env = env_for(home)

    code, owed = check(env, "--no-repair")
    assert code == 1 and owed["ok"] is False and owed["repaired"] is None
    (source,) = owed["sources"]
    assert source["name"] == "relay.md" and source["missing"] == KB_PLUGINS and source["acknowledged"] == []
    assert source["storedUnits"] == source["unitCount"] > 0 and sorted(owed["plugins"]) == KB_PLUGINS
    code, again = check(env, "--no-repair")  # reporting changed nothing
    assert code == 1 and again["sources"][0]["missing"] == KB_PLUGINS

    human = mrpvm(env, "kb", "check", "docs", timeout=120)
    out = human.stdout.decode()
    assert human.returncode == 0, human.stderr
    assert "relay.md" in out and "offered again: docs/relay.md -> kb-balanced, kb-fast" in out
    assert "OK: every kb-plugin's index holds every source (after the repair)" in out

    code, clean = check(env, "--no-repair")
    assert code == 0 and clean["ok"] and clean["sources"][0]["acknowledged"] == KB_PLUGINS
    asked = mrpvm(env, "ask", QUESTION, "--kb", "docs", timeout=120)
    assert FACT in asked.stdout.decode()

    code, full = check(env, "--full")
    assert code == 0 and full["ok"]
    assert full["repaired"]["offered"] == ["docs/relay.md -> kb-balanced, kb-fast"]  # every source again


def test_human_report_of_an_owing_kb_and_usage_errors(tmp_path):
    home = tmp_path / "home"
    kill_at(home, "committed")
    env = env_for(home)
    report = mrpvm(env, "kb", "check", "docs", "--no-repair", timeout=120)
    out = report.stdout.decode()
    assert report.returncode == 1
    assert "kb-plugins: kb-fast, kb-balanced" in out and "NOT OK: something is owed" in out
    missing = mrpvm(env, "kb", "check", "nope")
    assert missing.returncode == 2 and "nope" in one_error_line(missing)
    both = mrpvm(env, "kb", "check", "docs", "--no-repair", "--full")
    assert both.returncode == 2 and "--full" in one_error_line(both)
