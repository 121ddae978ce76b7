"""Fault matrix, parse side: whatever a plugin writes and whatever goes wrong in the kernel while handling
a call, the caller gets a structured PluginCallError (never another exception) and a turn moves on to
its next candidate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_support import Harness, calls_in_order, intent, nodes, unit
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import INTERNAL_ERROR, INVALID_CNL
from mrpvm.kernel.supervisor import reply_read as core
from mrpvm.protocol.cnl import MAX_ISSUES
from supervisor_support import PLUGINS, build_registry, error_of, manifest, new_supervisor, request, run


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(tmp_path_factory.mktemp("plugins"))


@pytest.mark.parametrize("plugin", ["bad-worker", "bad-oneshot"])
@pytest.mark.parametrize("junk", [MAX_ISSUES - 1, MAX_ISSUES + 10, 400])
def test_output_past_the_issue_cap_is_invalid_cnl(registry: Registry, plugin: str, junk: int) -> None:
    async def go():
        async with new_supervisor(registry) as sup:
            err = await error_of(sup.call(plugin, request(f"overcap:{junk}")))
            after = await sup.call(plugin, request("echo:still-serving"))  # the plugin is not blamed twice
            return err, after

    err, after = run(go)
    assert err.code == INVALID_CNL
    issues = err.error.details["issues"]
    assert 0 < len(issues) <= MAX_ISSUES and "unknown-field" in {i["rule"] for i in issues}
    assert after.document.answer == "echo still-serving"


def test_an_unexpected_kernel_fault_is_an_internal_error(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str, op: str | None = None) -> None:
        raise KeyError("kernel bug")

    async def go():
        async with new_supervisor(registry) as sup:
            with monkeypatch.context() as patch:
                patch.setattr(core, "parse_document", broken)
                err = await error_of(sup.call("echo-worker", request("q")))
            ok = await sup.call("echo-worker", request("q"))
            return err, ok, sup.health()["echo-worker"]

    err, ok, health = run(go)
    assert (
        err.code == INTERNAL_ERROR and "KeyError" in err.error.message and err.error.plugin == "echo-worker"
    )
    assert ok.document.result.status == "success"
    assert health["errors"] == {INTERNAL_ERROR: 1} and health["consecutiveFailures"] == 0


def _overcap_wrapper(folder: Path) -> Path:
    """A foreign gs-plugin (allow-listed) that always answers with more problems than the issue cap."""
    plugin = folder / "gs-overcap"
    plugin.mkdir(parents=True)
    (plugin / "misbehave.py").write_text((PLUGINS / "misbehave.py").read_text())
    # misbehave.py acts on the prompt; a tiny front door makes every request an 'overcap' one.
    (plugin / "overcap.py").write_text(
        "import json, os, sys\n"
        "sys.argv = ['misbehave.py']\n"
        "import misbehave\n"
        "request = json.loads(sys.stdin.buffer.read())\n"
        "request['prompt'] = 'overcap:120'\n"
        "misbehave.write(misbehave.behave(request, worker=False))\n"
    )
    (plugin / "manifest.json").write_text(
        json.dumps(manifest("gs-overcap", "overcap.py", worker=False, concurrency=1))
    )
    return folder


def test_a_malformed_goal_solver_past_the_cap_is_followed_by_the_next_one(tmp_path: Path) -> None:
    script = {
        "sd-a": {
            "detectSeeds": {
                "intents": [intent("what is alpha")],
                "units": [unit("session::t::unit-000", "Alpha is a widget")],
            }
        },
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
        "val-a": {"validate": {"status": "accepted"}},
    }
    harness = Harness(tmp_path, script, orders={"gs": ["gs-overcap", "gs-a"]})
    harness.environ["MRPVM_WRAPPER_FOLDERS"] = str(_overcap_wrapper(tmp_path / "wrappers"))
    harness.environ["MRPVM_PLUGIN_ALLOWLIST"] = "gs-overcap"
    result = harness.ask("what is alpha?")
    assert calls_in_order(result, "solve") == [("gs-overcap", "error"), ("gs-a", "success")]
    failed = nodes(result, kind="plugin", op="solve", pluginId="gs-overcap")[0]
    assert failed["output"]["code"] == INVALID_CNL
    assert result.status == "success"
    assert result.response_document["groups"][0]["answerMarkdown"] == "Alpha is a widget."
