"""`mrpvm plugins`, `mrpvm plugin run`, `mrpvm plugin check`, run as real subprocesses of the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import (
    BROKEN,
    BUILTINS,
    EXAMPLES,
    LEGACY_WRAPPER,
    NODE_WRAPPER,
    TEST_WRAPPERS,
    check_json,
    cli_env,
    failed,
    mrpvm,
    one_error_line,
    stderr_json,
)
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.invalid_examples import INVALID_REQUEST_FIELD, INVALID_REQUESTS
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER


@pytest.fixture
def env(tmp_path):
    """A private home with the example wrappers enabled, as the README shows."""
    clean = cli_env(tmp_path / "home")
    clean["MRPVM_PLUGIN_ALLOWLIST"] = EXAMPLES
    return clean


def test_the_example_wrappers_are_off_by_default(tmp_path):
    proc = mrpvm(cli_env(tmp_path / "home"), "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {row["id"] for row in data["plugins"]} == set(BUILTINS)
    reasons = " ".join(str(r) for r in data["rejected"])
    assert "gs-keyword-node" in reasons and "legacy-shout" in reasons and "allowlist" in reasons


# --------------------------------------------------------------------------- mrpvm, mrpvm plugins


def test_help_lists_the_commands(env):
    proc = mrpvm(env, "--help")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "plugins" in out and "plugin" in out


def test_plugins_json_lists_the_registry(env):
    proc = mrpvm(env, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [Path(r["path"]).parent.name for r in data["rejected"]] == ["kb-terms-go"]  # not on this allowlist
    rows = {row["id"]: row for row in data["plugins"]}
    assert set(rows) == {*BUILTINS, "gs-keyword-node", "legacy-shout"}
    for row in rows.values():
        assert {"id", "type", "costClass", "usesLLM", "description"} <= set(row)
    assert rows["gs-keyword-node"]["type"] == "gs-plugin" and rows["gs-keyword-node"]["source"] == "wrapper"
    assert rows["legacy-shout"]["source"] == "legacy"
    assert rows["kb-fast"]["usesLLM"] is False and rows["gs-llm-fast"]["usesLLM"] is True


def test_plugins_type_filter_accepts_short_names(env):
    proc = mrpvm(env, "plugins", "--type", "kb", "--json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["id"] for r in json.loads(proc.stdout)["plugins"]) == [
        "kb-balanced",
        "kb-fast",
        "kb-thinkingdb",
    ]


def test_plugins_reports_rejected_manifests(env):
    env["MRPVM_WRAPPER_FOLDERS"] = str(BROKEN)
    env["MRPVM_PLUGIN_ALLOWLIST"] = "garbage"
    proc = mrpvm(env, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert "garbage" in {r["id"] for r in data["plugins"]}
    rejected = {Path(r["path"]).parent.name: r["reason"] for r in data["rejected"]}
    assert set(rejected) == {"ignores-bad-json", "multiline-stderr", "worker-dies", "worker-wrong-id"}
    assert "not on the plugin allowlist" in rejected["worker-wrong-id"]
    table = mrpvm(env, "plugins")
    assert table.returncode == 0
    text = table.stdout.decode()
    assert "4 manifest(s) rejected" in text and "worker-wrong-id" in text and "allowlist" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["plugins", "--bogus"], "--bogus"),  # click words it "No such option: --bogus" or "...'--bogus'."
        (["plugins", "--type", "xx"], "unknown plugin type 'xx'"),
        (["plugin", "run", "no-such-plugin", "--input", "x.json"], "no plugin 'no-such-plugin'"),
        (["plugin", "run", "gs-symbolic", "--input", "/no/such/file.json"], "input file not found"),
        (["plugin", "run", "gs-symbolic", "--op", "retrieve", "--input", "-"], "does not declare that op"),
        (["plugin", "run"], "Missing argument"),
        (["plugin", "check", "no-such-plugin"], "no plugin 'no-such-plugin'"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(env, args, message):
    proc = mrpvm(env, *args, stdin=b"")
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc)
    assert line.startswith("mrpvm: error:") and message in line
    if args[-1] == "--bogus":
        assert "No such option" in line and "see 'mrpvm plugins --help'" in line


# --------------------------------------------------------------------------- mrpvm plugin run


def test_run_node_wrapper_prints_its_cnl(env):
    proc = mrpvm(
        env, "plugin", "run", "gs-keyword-node", "--op", "solve", "--input", str(NODE_WRAPPER / "input.json")
    )
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "solve")
    assert doc.result.status == "success" and doc.result.plugin == "gs-keyword-node"
    assert "tessel build --changed" in doc.answer
    assert doc.sources == ["tessel-guide::chunk-002::unit-000"]


def test_run_reads_stdin_and_says_no_context_when_nothing_overlaps(env):
    request = {
        "prompt": "Who painted the ceiling?",
        "context": [{"title": "u1", "text": "Claim: Cats sleep a lot."}],
    }
    proc = mrpvm(env, "plugin", "run", "gs-keyword-node", "--input", "-", stdin=json.dumps(request).encode())
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "solve")
    assert doc.result.status == "no-context"
    assert doc.answer == NO_CONTEXT_ANSWER


def test_run_legacy_wrapper(env):
    proc = mrpvm(env, "plugin", "run", "legacy-shout", "--input", str(LEGACY_WRAPPER / "input.json"))
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "solve")
    assert doc.result.result == "VERIFY THAT CONSTRAINT X IS SATISFIABLE." == doc.answer


@pytest.mark.parametrize("name", ["malformed-json", "prompt-missing", "payload-field-wrong-type"])
def test_run_refuses_an_invalid_request_before_the_plugin(env, name):
    proc = mrpvm(env, "plugin", "run", "gs-symbolic", "--input", "-", stdin=INVALID_REQUESTS[name])
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert stderr_json(proc)["code"] == ("INVALID_JSON" if name == "malformed-json" else "SCHEMA_VIOLATION")


def test_run_refuses_an_input_over_the_size_limit(env):
    request = {"prompt": "What is WAL?", "context": [{"title": "big", "text": "x" * 70000}]}
    proc = mrpvm(env, "plugin", "run", "gs-keyword-node", "--input", "-", stdin=json.dumps(request).encode())
    assert proc.returncode == 2
    record = stderr_json(proc)
    assert record["code"] == "INPUT_TOO_LARGE" and record["plugin"] == "gs-keyword-node"


@pytest.fixture
def failing_env(env):
    env["MRPVM_WRAPPER_FOLDERS"] = str(TEST_WRAPPERS)
    env["MRPVM_PLUGIN_ALLOWLIST"] = "failing-gs"
    return env


@pytest.mark.parametrize("one_shot", [False, True], ids=["worker", "one-shot"])
@pytest.mark.parametrize("prompt, code", [("hello", 0), ("fail", 1), ("invalid", 2), ("sleep", 3)])
def test_run_exit_code_mirrors_the_plugin(failing_env, prompt, code, one_shot):
    request = {"prompt": prompt, "context": [], "budget": {"deadlineMs": 500}}
    args = ["plugin", "run", "failing-gs", "--input", "-", "--timeout-ms", "1500"]
    proc = mrpvm(
        failing_env, *args, *(["--one-shot"] if one_shot else []), stdin=json.dumps(request).encode()
    )
    assert proc.returncode == code, proc.stderr
    if code == 0:
        assert parse_document(proc.stdout.decode(), "solve").answer == "You said: hello"
    elif proc.stdout.strip():  # a worker's error result: printed CNL with the error code
        doc = parse_document(proc.stdout.decode(), "solve")
        assert doc.result.status == "error" and doc.result.code
    else:  # a one-shot failure or a kernel error: one JSON line on stderr
        record = stderr_json(proc)
        assert record["code"] in {"BOOM", "INVALID_INPUT", "TIMEOUT", "PLUGIN_ERROR", "PLUGIN_INVALID_INPUT"}


# --------------------------------------------------------------------------- mrpvm plugin check


@pytest.mark.parametrize("target", [str(NODE_WRAPPER), str(LEGACY_WRAPPER)], ids=["node", "legacy"])
def test_check_passes_on_the_shipped_wrappers(env, target):
    code, report = check_json(env, target)
    assert failed(report) == {} and report["passed"] is True and code == 0
    names = {c["name"] for c in report["checks"]}
    assert "solve: example request" in names
    assert "solve: bare DS016 request (prompt + context only)" in names
    assert {f"invalid input: {name}" for name in INVALID_REQUESTS} <= names
    assert any(name.startswith("input over maxInputSizeBytes") for name in names)
    assert not any(name.startswith("worker:") for name in names)  # one-shot wrappers


def test_check_fails_on_garbage_output(env):
    code, report = check_json(env, str(BROKEN / "garbage"))
    assert code == 1 and report["passed"] is False
    problems = failed(report)
    assert "invalid CNL for solve" in problems["solve: example request"]
    assert "hello, I am not a CNL document" in problems["solve: example request"]
    assert "exit 0, expected 2" in problems["invalid input: malformed-json"]
    assert any("not on the plugin allowlist" in note for note in report["notes"])


REQUIRED_CASES = {f"invalid input: {name}" for name, field in INVALID_REQUEST_FIELD.items() if field is None}


def test_check_fails_when_malformed_json_exits_0(env):
    code, report = check_json(env, str(BROKEN / "ignores-bad-json"))
    assert code == 1
    problems = failed(report)
    assert set(problems) == REQUIRED_CASES  # valid requests pass; optional fields it may ignore
    detail = problems["invalid input: malformed-json"]
    assert detail.startswith("exit 0, expected 2 for invalid input")
    assert "fix: parse stdin as JSON first" in detail and "exit 2" in detail


def test_check_fails_on_multi_line_stderr(env):
    code, report = check_json(env, str(BROKEN / "multiline-stderr"))
    assert code == 1
    problems = failed(report)
    assert set(problems) == REQUIRED_CASES
    detail = problems["invalid input: prompt-missing"]
    assert "exit 2 but the last stderr line is not JSON" in detail and "RequestError" in detail
    warned = {c["name"] for c in report["checks"] if c["warning"]}  # optional fields: refused badly
    assert warned == {f"invalid input: {n}" for n, f in INVALID_REQUEST_FIELD.items() if f is not None}


def test_check_fails_on_a_worker_that_answers_with_the_wrong_request_id(env):
    code, report = check_json(env, str(BROKEN / "worker-wrong-id"))
    assert code == 1
    problems = failed(report)
    assert not any(
        name.startswith(("solve:", "invalid input:")) for name in problems
    )  # one-shot mode is fine
    worker_check = next(name for name in problems if name.startswith("worker:") and "framed" in name)
    assert "answer to request 'check-1' carries Request: 'wrong-1'" in problems[worker_check]


def test_check_fails_on_a_worker_that_dies(env):
    code, report = check_json(env, str(BROKEN / "worker-dies"))
    assert code == 1
    problems = failed(report)
    assert all(name.startswith("worker:") for name in problems) and len(problems) == 3
    first, *rest = problems.values()  # in check order
    assert "the worker exited (exit 1) before answering" in first
    assert "giving up on the first frame" in first
    assert all(detail.startswith("not reached") for detail in rest)


def test_check_table_output_names_the_failure(env):
    proc = mrpvm(env, "plugin", "check", str(BROKEN / "worker-wrong-id"))
    assert proc.returncode == 1
    text = proc.stdout.decode()
    assert (
        "FAIL" in text
        and f"2 of {7 + len(INVALID_REQUESTS)} checks failed" in text
        and "carries Request: 'wrong-1'" in text
    )


def test_check_reports_a_manifest_that_does_not_load(env, tmp_path):
    folder = tmp_path / "bad-tool"
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps({"id": "bad-tool", "type": "gs-plugin", "command": "sh"})
    )
    code, report = check_json(env, str(folder))
    assert code == 1 and report["passed"] is False
    assert "missing required field `plannerHints` (a gs-plugin manifest)" in failed(report)["manifest"]
