"""`mrpvm plugin check` is fair to authors: it requires what DS016 and SPEC.md require of every plugin,
holds optional request fields only to what the manifest's `reads` declares, and says what to change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import BROKEN, TESTS, check_json, cli_env, failed
from mrpvm.protocol.invalid_examples import INVALID_REQUEST_FIELD

AUTHOR_PLUGINS = TESTS / "author_plugins"
OPTIONAL = {name: field for name, field in INVALID_REQUEST_FIELD.items() if field is not None}


@pytest.fixture
def env(tmp_path):
    return cli_env(tmp_path / "home")


def _details(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


def test_a_plugin_that_ignores_payload_and_budget_passes(env):
    """The issue's Node plugin: DS016 to the letter, payload/budget/llm/paths/ids never read."""
    code, report = check_json(env, str(AUTHOR_PLUGINS / "ds016-node"))
    assert failed(report) == {} and code == 0 and report["passed"] is True
    checks = _details(report)
    for name in ("payload-not-object", "payload-field-wrong-type", "budget-wrong-type"):
        check = checks[f"invalid input: {name}"]
        assert check["passed"] and not check["warning"]
        assert check["detail"].startswith("ignored (`") and "not in the manifest's reads" in check["detail"]
    assert report["warnings"] == 0
    assert "reads prompt and context only" in checks["manifest"]["detail"]


def test_declaring_reads_holds_the_plugin_to_refusing_those_fields(env, tmp_path):
    folder = tmp_path / "ds016-node"
    shutil.copytree(AUTHOR_PLUGINS / "ds016-node", folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["reads"] = ["payload", "budget"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, report = check_json(env, str(folder))
    assert code == 1
    problems = failed(report)
    assert set(problems) == {
        "invalid input: payload-not-object",
        "invalid input: payload-field-wrong-type",
        "invalid input: budget-wrong-type",
    }
    detail = problems["invalid input: budget-wrong-type"]
    assert detail.startswith("exit 0, expected 2")
    assert "the manifest's `reads` lists `budget`" in detail
    assert "fix: check that `budget.llmCalls` and `budget.deadlineMs` are integers" in detail


def test_a_solve_success_without_an_answer_fails(env):
    code, report = check_json(env, str(AUTHOR_PLUGINS / "success-no-answer"))
    assert code == 1
    problems = failed(report)
    assert set(problems) == {"solve: example request", "solve: bare DS016 request (prompt + context only)"}
    assert "[answer-required]" in problems["solve: example request"]
    assert "Status: no-context" in problems["solve: example request"]  # what to answer instead


def test_an_optional_field_that_crashes_the_plugin_is_a_warning(env, tmp_path):
    """Not reading `paths` is fine; crashing on it (exit 1) is not refused nor ignored: a warning."""
    folder = tmp_path / "crashes-on-paths"
    folder.mkdir()
    (folder / "plugin.py").write_text(
        (BROKEN / "ignores-bad-json" / "plugin.py")
        .read_text()
        .replace(
            "sys.stdin.buffer.read()",
            "import json\n"
            "data = sys.stdin.buffer.read()\n"
            "try:\n    req = json.loads(data)\nexcept ValueError:\n"
            '    print(\'{"code":"INVALID_JSON","message":"not JSON"}\', file=sys.stderr); sys.exit(2)\n'
            "if not isinstance(req, dict) or not isinstance(req.get('prompt'), str) "
            "or not isinstance(req.get('context'), list) or req.get('protocolVersion', 1) != 1 "
            "or req.get('op', 'solve') not in (None, 'solve') "
            "or any(not isinstance(i, dict) or not all(isinstance(v, str) for v in i.values()) "
            "for i in req['context']):\n"
            '    print(\'{"code":"SCHEMA_VIOLATION","message":"bad"}\', file=sys.stderr); sys.exit(2)\n'
            "if (req.get('paths') or {}).get('artifacts') == 7:\n"
            "    raise SystemExit(1)\n",
        )
        .replace("ignores-bad-json", "crashes-on-paths")
    )
    manifest = json.loads((BROKEN / "ignores-bad-json" / "manifest.json").read_text())
    manifest.update(id="crashes-on-paths", name="crashes-on-paths")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, report = check_json(env, str(folder))
    assert failed(report) == {} and code == 0
    check = _details(report)["invalid input: paths-wrong-type"]
    assert check["passed"] and check["warning"]
    assert "exit 1" in check["detail"] and "add it to `reads`" in check["detail"]
    assert report["warnings"] == 1


def test_every_failure_says_what_to_change(env):
    for target in ("ignores-bad-json", "multiline-stderr", "worker-wrong-id", "garbage"):
        _, report = check_json(env, str(BROKEN / target))
        for name, detail in failed(report).items():
            if not detail.startswith("not reached"):
                assert "fix:" in detail, (target, name, detail)


def test_the_invalid_cases_about_optional_fields_are_named_by_their_field():
    assert set(OPTIONAL.values()) == {"payload", "budget", "llm", "paths", "ids"}
    assert Path  # the table in SPEC.md §5 is generated from the same mapping (test_protocol_docs)
