"""What a plugin author is told: how large ingest requests are, the exact fix where one is known, and a
`plugin new` "by hand" command that works as printed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import TESTS, check_json, cli_env, mrpvm
from mrpvm.kernel.registry import ManifestError, load_manifest, size_warning
from mrpvm.protocol.cnl import CnlError, parse_document
from mrpvm.protocol.vocab import ingest_request_bytes
from mrpvm.shells.plugin_tools.check_judge import cnl_fix

CLAIMS_ONLY = TESTS / "author_plugins" / "kb-claims-only"
MIB = 1024 * 1024


def _copy(tmp_path: Path, name: str, **changes) -> Path:
    folder = tmp_path / "wrappers" / name
    shutil.copytree(CLAIMS_ONLY, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.update(id=name, name=name, **changes)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_ingest_request_size_rule_covers_measured_requests():
    # measured with sd-symbolic (SPEC.md §7): 82 KB -> 384 KB, 10 KB -> 46 KB, 1.5 KB -> 14 KB
    for source, request in ((81862, 384180), (10492, 45847), (1544, 14242)):
        assert ingest_request_bytes(source) > request
    assert ingest_request_bytes(4 * MIB) <= 32 * MIB  # the built-in kb-plugins' maxInputSizeBytes


def test_a_kb_plugin_too_small_for_the_source_limit_is_warned_about_at_load(tmp_path):
    small = load_manifest(_copy(tmp_path, "kb-small", maxInputSizeBytes=MIB) / "manifest.json", builtin=False)
    warning = size_warning(small, 4 * MIB)
    assert warning is not None
    assert "maxInputSizeBytes (1048576)" in warning and str(small.manifest_path) in warning
    assert f"at least {ingest_request_bytes(4 * MIB)}" in warning
    assert size_warning(small, 100_000) is None  # a lower source limit fits

    env = cli_env(tmp_path / "home")
    env.update(MRPVM_WRAPPER_FOLDERS=str(tmp_path / "wrappers"), MRPVM_PLUGIN_ALLOWLIST="kb-small")
    listed = json.loads(mrpvm(env, "plugins", "--json").stdout)
    assert [w.split(":")[0] for w in listed["warnings"]] == ["kb-small"]
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nThe relay listens on port 7070.\n")
    ingested = mrpvm(env, "ingest", str(doc), "--kb", "k", timeout=180)
    assert ingested.returncode == 0, ingested.stderr
    said = [line for line in ingested.stderr.decode().splitlines() if "kb-small" in line]
    assert len(said) == 1 and "raise maxInputSizeBytes" in said[0]
    env["MRPVM_MAX_SOURCE_BYTES"] = "100000"
    assert json.loads(mrpvm(env, "plugins", "--json").stdout)["warnings"] == []


def test_a_source_over_the_limit_is_refused_naming_the_setting(tmp_path):
    env = cli_env(tmp_path / "home")
    env["MRPVM_MAX_SOURCE_BYTES"] = "1000"
    doc = tmp_path / "big.md"
    doc.write_text("# Big\n\n" + "A sentence of words here. " * 60)
    proc = mrpvm(env, "ingest", str(doc), "--kb", "k", timeout=120)
    assert proc.returncode == 1
    assert "over engine.limits.maxSourceBytes (1000)" in proc.stderr.decode()


def test_check_reports_the_ingest_size_a_kb_plugin_needs(tmp_path):
    folder = _copy(tmp_path, "kb-small", maxInputSizeBytes=MIB)
    _, report = check_json(cli_env(tmp_path / "home"), str(folder))
    [size] = [
        c for c in report["checks"] if c["name"].startswith("maxInputSizeBytes holds an ingest request")
    ]
    assert size["passed"] and size["warning"] and "about 6x the source" in size["name"]
    assert "raise maxInputSizeBytes to at least" in size["detail"]


def test_an_absolute_interpreter_path_gets_the_bare_name_as_its_fix(tmp_path):
    perl = shutil.which("perl") or shutil.which("python3")
    assert perl, "perl or python3 must be on PATH"
    folder = _copy(tmp_path, "kb-abs", command=perl)
    with pytest.raises(ManifestError) as err:
        load_manifest(folder / "manifest.json", builtin=False)
    assert f'write "command": "{Path(perl).name}"' in str(err.value)


def test_a_log_line_on_stdout_is_told_to_go_to_stderr():
    text = "loading index...\n## Plugin Result\nStatus: success\nPlugin: x\n"
    with pytest.raises(CnlError) as err:
        parse_document(text, "solve")
    assert "write logs to stderr" in cnl_fix(text, err.value)


def test_plugins_lists_a_rejected_manifest_path_once(tmp_path):
    folder = _copy(tmp_path, "kb-abs", command="/nonexistent/perl")
    env = cli_env(tmp_path / "home")
    env.update(MRPVM_WRAPPER_FOLDERS=str(tmp_path / "wrappers"), MRPVM_PLUGIN_ALLOWLIST="kb-abs")
    out = mrpvm(env, "plugins").stdout.decode()
    path = str(folder / "manifest.json")
    assert out.count(path) == 1 and "escapes the plugin folder" in out


def test_the_printed_by_hand_command_runs_outside_the_venv(tmp_path):
    env = cli_env(tmp_path / "home")
    made = mrpvm(env, "plugin", "new", "hand-solver", "--type", "gs", "--dir", str(tmp_path))
    assert made.returncode == 0, made.stderr
    [line] = [x for x in made.stdout.decode().splitlines() if "(by hand: " in x]
    command = line.split("(by hand: ", 1)[1].rstrip().removesuffix(")")
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no venv on PATH, no PYTHONPATH
    ran = subprocess.run(["sh", "-c", command], capture_output=True, env=clean, cwd="/", timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.decode().startswith("## Plugin Result") and b"ModuleNotFoundError" not in ran.stderr
