"""`mrpvm plugin check` passes on every built-in manifest (real subprocesses; apart from test_cli_plugins for time)."""

from __future__ import annotations

import json

import pytest
from cli_support import BUILTINS, check_json, cli_env, failed
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.registry import load_manifest
from mrpvm.protocol.invalid_examples import INVALID_REQUESTS


@pytest.mark.parametrize("plugin_id", BUILTINS)
def test_check_passes_on_every_builtin(tmp_path, plugin_id):
    manifest_path = MANIFESTS_DIR / f"{plugin_id}.json"
    code, report = check_json(cli_env(tmp_path / "home"), plugin_id)
    assert failed(report) == {} and code == 0
    assert report["plugin"] == plugin_id and report["target"] == str(manifest_path)
    names = [c["name"] for c in report["checks"]]
    manifest = load_manifest(manifest_path, builtin=True).manifest
    for op in manifest.ops:
        assert any(name.startswith(f"{op}: example request") for name in names), op
    if (
        getattr(manifest, "replyForm", "cnl") == "msgpack"
    ):  # sd only; asked as an ingest asks it, the compact reply is judged too
        assert any("asking for the compact reply" in name for name in names)
    if (
        getattr(manifest, "outcomeBatch", 1) > 1 and manifest.maxLLMCalls == 0
    ):  # the daemon batches its outcomes
        assert any(name.startswith("recordOutcome: a batch of") for name in names)
    assert {f"invalid input: {name}" for name in INVALID_REQUESTS} <= set(names)
    assert any(name.startswith("input over maxInputSizeBytes") for name in names)
    # built-ins declare worker mode; a `pure` one (gs-symbolic) is also checked for the same reply twice
    pure = json.loads(manifest_path.read_text()).get("pure", False)
    assert sum(name.startswith("worker:") for name in names) == (4 if pure else 3)
    assert any(name.startswith("worker: pure") for name in names) == pure
    if plugin_id.startswith("kb-"):  # handoff: file — onSourceText as an ingest sends it
        assert "onSourceText: example request, units in a handoff file (handoff: file)" in names
        assert "onSourceText: a units file that does not exist is refused (exit 2, INVALID_HANDOFF)" in names
