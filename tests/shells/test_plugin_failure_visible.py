"""A plugin that passes `mrpvm plugin check` cannot fail the kernel's validation on realistic requests, and
a plugin that fails in a turn is named in the answer, with its error code and message in the trace tree.

tests/support/author_plugins/kb-claims-only carries a real author's bug: it writes `Claim:` for `Role: Procedure`
units. The example requests alone never show it (an example retrieve meets an empty index)."""

from __future__ import annotations

import json

import pytest
from cli_support import TESTS, check_json, cli_env, mrpvm

AUTHOR = TESTS / "author_plugins"
CLAIMS_ONLY = AUTHOR / "kb-claims-only"


def test_check_fails_a_kb_plugin_whose_indexed_procedures_break_the_cnl(tmp_path):
    code, report = check_json(cli_env(tmp_path / "home"), str(CLAIMS_ONLY))
    assert code == 1 and not report["passed"]
    failed = [c for c in report["checks"] if not c["passed"]]
    assert failed and all(c["name"].startswith("retrieve after indexing") for c in failed)
    assert any("How do I enable WAL mode?" in c["name"] for c in failed)
    detail = failed[0]["detail"]
    assert (
        "[procedure-role]" in detail
        and "fix: write a `Role: Procedure` unit's steps in `Procedure:`" in detail
    )
    indexed = next(c for c in report["checks"] if c["name"].startswith("built-in document"))
    assert indexed["passed"] and "Procedure" in indexed["name"]


@pytest.mark.parametrize("plugin", ["kb-fast", "kb-thinkingdb"])
def test_well_behaved_kb_plugins_pass_the_realistic_retrieves(tmp_path, plugin):
    code, report = check_json(cli_env(tmp_path / "home"), plugin)
    scenario = [c for c in report["checks"] if c["name"].startswith("retrieve after indexing")]
    assert len(scenario) == 3 and all(c["passed"] for c in scenario), scenario
    assert any("unit(s) returned" in c["detail"] for c in scenario)
    assert code == 0, [c for c in report["checks"] if not c["passed"]]


def test_a_pinned_plugin_that_fails_is_named_in_the_answer_and_the_trace(tmp_path):
    env = cli_env(tmp_path / "home")
    env["MRPVM_WRAPPER_FOLDERS"] = str(AUTHOR)
    env["MRPVM_PLUGIN_ALLOWLIST"] = "kb-claims-only"
    doc = tmp_path / "guide.md"
    doc.write_text(
        "# Guide\n\n## Cleaning a cache\n\n1. Stop the server.\n2. Delete the cache folder.\n3. Start it again.\n"
    )
    assert mrpvm(env, "ingest", str(doc), "--kb", "g", timeout=180).returncode == 0
    question = ("ask", "--kb", "g", "--kb-plugin", "kb-claims-only", "How do I clean the cache?")
    human = mrpvm(env, *question, timeout=180)
    text = human.stdout.decode()
    [line] = [x for x in text.splitlines() if "kb-claims-only" in x]
    assert "failed retrieve: INVALID_CNL: line" in line and "[procedure-role]" in line
    assert "INVALID_CNL: invalid CNL" not in line and "mrpvm trace req_" in line

    data = json.loads(mrpvm(env, *question, "--json", timeout=180).stdout)
    failures = data["response_document"]["pluginFailures"]
    assert [f.split(" failed ")[0] for f in failures] == ["kb-claims-only"]
    assert "> kb-claims-only failed retrieve: INVALID_CNL" in data["response_markdown"]
    tree = mrpvm(env, "trace", data["request_id"], timeout=60).stdout.decode()
    [node] = [x for x in tree.splitlines() if "kb-claims-only.retrieve" in x and "→ error" in x]
    assert "INVALID_CNL: line" in node


def test_a_turn_without_failures_says_nothing_about_plugins(tmp_path):
    env = cli_env(tmp_path / "home")
    doc = tmp_path / "guide.md"
    doc.write_text("# Guide\n\n## Cleaning\n\nDelete the cache folder to clean a broken cache.\n")
    data = json.loads(
        mrpvm(
            env, "ask", "--source", str(doc), "How do I clean a broken cache?", "--json", timeout=180
        ).stdout
    )
    assert data["response_document"]["pluginFailures"] == []
    assert " failed " not in data["response_markdown"]
