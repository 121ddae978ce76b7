"""The Go example (wrappers/kb-terms-go, standard library only): built by the author's tools, it passes
`mrpvm plugin check` in one-shot and worker mode with the sandbox on, and the kernel uses its index."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from cli_support import check_json, cli_env, failed, mrpvm
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.kernel.supervisor.sandbox import sandbox_status
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.invalid_examples import INVALID_REQUESTS
from mrpvm.shells.plugin_tools.build import BuildError, build_plugin

GO_EXAMPLE = PROJECT_ROOT / "wrappers" / "kb-terms-go"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The example built once (as `mrpvm plugin build` does), and an environment that allow-lists it."""
    assert shutil.which("go"), "the Go toolchain is needed (.ci/run installs golang-go)"
    env = cli_env(tmp_path_factory.mktemp("home"))
    proc = mrpvm(env, "plugin", "build", str(GO_EXAMPLE), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert (GO_EXAMPLE / "bin" / "kb-terms-go").is_file()
    env["MRPVM_PLUGIN_ALLOWLIST"] = "kb-terms-go"
    return env


def test_the_go_example_passes_the_check_in_both_modes_sandboxed(built):
    assert sandbox_status().active
    code, report = check_json(built, str(GO_EXAMPLE))
    assert failed(report) == {} and code == 0 and report["warnings"] == 0
    names = {c["name"] for c in report["checks"]}
    for op in ("retrieve", "onSourceText", "onSessionEvent"):
        assert f"{op}: example request" in names
    assert {f"invalid input: {name}" for name in INVALID_REQUESTS} <= names
    assert sum(name.startswith("worker:") for name in names) == 3
    manifest = next(c for c in report["checks"] if c["name"] == "manifest")
    assert (
        "worker + one-shot" in manifest["detail"]
        and "reads budget, ids, paths, payload" in manifest["detail"]
    )


def _run(env: dict, request: dict, *flags: str) -> subprocess.CompletedProcess:
    return mrpvm(
        env, "plugin", "run", "kb-terms-go", "--input", "-", *flags, stdin=json.dumps(request).encode()
    )


UNIT = {
    "id": "src-a::chunk-000::unit-000",
    "sourceId": "src-a",
    "chunkId": "src-a::chunk-000",
    "kuType": "atomic",
    "role": "Procedure",
    "topic": "rebuilding changed targets",
    "procedure": "1. Run tessel build --changed.\n2. Check the summary.",
}


@pytest.mark.parametrize("flags", [(), ("--one-shot",)], ids=["worker", "one-shot"])
def test_its_index_lives_in_the_artifacts_folder_per_source(built, tmp_path, flags):
    artifacts = str(tmp_path / "artifacts" / "kb-terms-go")
    ingest = {
        "op": "onSourceText",
        "prompt": "index src-a",
        "context": [],
        "payload": {"sourceId": "src-a", "units": [UNIT]},
        "paths": {"artifacts": artifacts},
    }
    proc = _run(built, ingest, *flags)
    assert proc.returncode == 0, proc.stderr
    assert "indexed 1 units of src-a" in proc.stdout.decode()
    files = list((tmp_path / "artifacts" / "kb-terms-go").glob("source-src-a-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())[0]["id"] == UNIT["id"]
    ask = {"prompt": "how do I rebuild changed targets", "context": [], "paths": {"artifacts": artifacts}}
    doc = parse_document(_run(built, ask, *flags).stdout.decode(), "retrieve")
    assert doc.result.status == "success" and [u.id for u in doc.units] == [UNIT["id"]]
    assert doc.units[0].procedure == UNIT["procedure"] and doc.units[0].resolvedFor == ["intent-1"]
    _run(built, {**ingest, "payload": {"sourceId": "src-a", "action": "remove"}}, *flags)
    doc = parse_document(_run(built, ask, *flags).stdout.decode(), "retrieve")
    assert doc.units == [] and doc.result.status == "insufficient"


def test_the_kernel_retrieves_from_its_index_after_ingest(built):
    proc = mrpvm(
        built, "ingest", str(PROJECT_ROOT / "examples" / "tessel-build.md"), "--kb", "demo", timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    proc = mrpvm(
        built, "ask", "How do I rebuild only changed targets?", "--kb", "demo", "--kb-plugin", "kb-terms-go",
        "--json", timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    turn = json.loads(proc.stdout)
    calls = [n for n in turn["execution_trace"]["nodes"] if n.get("pluginId") == "kb-terms-go"]
    assert calls and calls[0]["status"] == "success" and calls[0]["output"]["units"] > 0
    assert turn["kb_plugin"] == "kb-terms-go"
    log = mrpvm(built, "plugin", "logs", "kb-terms-go").stdout.decode()
    assert "kb-terms-go: indexed" in log  # its stderr line from the ingest, in its log


def test_a_plugin_whose_binary_is_missing_is_rejected_with_the_build_command(built, tmp_path):
    folder = tmp_path / "kb-terms-go"
    shutil.copytree(GO_EXAMPLE, folder, ignore=shutil.ignore_patterns("bin"))
    env = {**built, "MRPVM_WRAPPER_FOLDERS": str(tmp_path)}
    data = json.loads(mrpvm(env, "plugins", "--json").stdout)
    reason = next(r["reason"] for r in data["rejected"] if "kb-terms-go" in r["path"])
    assert "is not built yet: run `mrpvm plugin build" in reason and "go build -trimpath" in reason


def test_builds_run_when_stale_and_say_why_they_fail(built, tmp_path):
    folder = tmp_path / "kb-terms-go"
    shutil.copytree(GO_EXAMPLE, folder, ignore=shutil.ignore_patterns("bin"))
    home = tmp_path / "home"
    first = build_plugin(folder / "manifest.json", home=home)
    assert first is not None and first.built and (folder / "bin" / "kb-terms-go").is_file()
    again = build_plugin(folder / "manifest.json", home=home)
    assert again is not None and not again.built  # up to date
    (folder / "kb.go").write_text((folder / "kb.go").read_text() + "\n// touched\n")
    assert build_plugin(folder / "manifest.json", home=home).built  # a newer source: rebuilt
    (folder / "kb.go").write_text("package main\n\nthis is not Go\n")
    with pytest.raises(BuildError) as err:
        build_plugin(folder / "manifest.json", home=home)
    assert "failed (exit 2)" in str(err.value) and "kb.go:3:1: syntax error" in str(err.value)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["build"] = {"command": "sh", "args": ["-c", "go build"]}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BuildError, match="without a shell"):
        build_plugin(folder / "manifest.json", home=home, force=True)


@pytest.mark.parametrize(
    "target, code, message",
    [
        ("wrappers/gs-keyword-node", 1, "declares no `build`: nothing to build"),
        ("no-such-plugin", 2, "no plugin 'no-such-plugin' is registered"),
    ],
)
def test_plugin_build_says_why_it_cannot(built, target, code, message):
    proc = mrpvm(built, "plugin", "build", target)
    assert proc.returncode == code and message in proc.stderr.decode()
