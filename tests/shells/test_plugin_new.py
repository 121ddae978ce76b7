"""`mrpvm plugin new`: scaffolds in Python, Node.js and Go pass `mrpvm plugin check` unchanged (sandbox
on), their README's `cat input.json | ...` works, and the printed allowlist command makes the kernel load them."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from cli_support import check_json, cli_env, failed, mrpvm
from mrpvm.kernel.supervisor.sandbox import sandbox_status
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.vocab import MAIN_OP


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict:
    """Every language × a gs- and a kb-plugin, made once: (lang, type) -> (folder, printed lines)."""
    parent = tmp_path_factory.mktemp("scaffolds")
    env = cli_env(tmp_path_factory.mktemp("home"))
    out = {}
    for lang in ("python", "node", "go"):
        for short in ("gs", "kb", "val"):
            name = f"my-{short}-{lang}"
            proc = mrpvm(
                env, "plugin", "new", name, "--type", short, "--lang", lang, "--dir", str(parent), timeout=300
            )
            assert proc.returncode == 0, proc.stderr
            out[lang, short] = (parent / name, proc.stdout.decode().splitlines())
    return {"env": env, "parent": parent, "made": out}


@pytest.mark.parametrize("short", ["gs", "kb", "val"])
@pytest.mark.parametrize("lang", ["python", "node", "go"])
def test_a_scaffold_passes_the_check_unchanged(made, lang, short):
    assert sandbox_status().active
    folder, printed = made["made"][lang, short]
    expected = {"manifest.json", "README.md", "input.json"} | (
        {"go.mod", ".gitignore", "main.go"} if lang == "go" else set()
    )
    assert expected <= {p.name for p in folder.iterdir()}
    assert any(line == f"try it:       mrpvm plugin check {folder}" for line in printed)
    assert any(line.startswith("allowlist it: export MRPVM_WRAPPER_FOLDERS=") for line in printed)
    code, report = check_json(made["env"], str(folder))
    assert failed(report) == {} and code == 0 and report["warnings"] == 0
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["ops"] == [MAIN_OP[manifest["type"]]] and manifest["reads"] == []
    if lang == "python":  # the SDK serves worker mode too
        assert sum(c["name"].startswith("worker:") for c in report["checks"]) == 3


@pytest.mark.parametrize("lang", ["python", "node", "go"])
def test_the_readme_test_command_works_by_hand(made, lang):
    folder, printed = made["made"][lang, "gs"]
    by_hand = next(line for line in printed if "(by hand:" in line).split("&& ", 1)[1].rstrip(")")
    assert (
        by_hand.startswith("cat input.json | ")
        and by_hand.split("| ", 1)[1] in (folder / "README.md").read_text()
    )
    argv = shlex.split(by_hand.split("| ", 1)[1])
    if argv[0] == "python":
        argv[0] = sys.executable  # the README says: with the MRP-VM environment active
    proc = subprocess.run(
        argv, input=(folder / "input.json").read_bytes(), cwd=folder, capture_output=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    doc = parse_document(proc.stdout.decode(), "solve")
    assert doc.result.status == "success" and doc.sources == ["guide::chunk-002::unit-000"]
    bad = subprocess.run(
        argv, input=b'{"prompt": 42, "context": []}', cwd=folder, capture_output=True, timeout=30
    )
    assert (
        bad.returncode == 2 and json.loads(bad.stderr.decode().splitlines()[-1])["code"] == "SCHEMA_VIOLATION"
    )


def test_the_printed_allowlist_command_makes_the_kernel_load_it(made):
    folder, printed = made["made"]["node", "kb"]
    command = next(line for line in printed if line.startswith("allowlist it: ")).split("export ", 1)[1]
    env = {**made["env"], **dict(part.split("=", 1) for part in shlex.split(command))}
    data = json.loads(mrpvm(env, "plugins", "--json").stdout)
    row = next(r for r in data["plugins"] if r["id"] == "my-kb-node")
    assert row["type"] == "kb-plugin" and row["source"] == "wrapper" and row["folder"] == str(folder)


@pytest.mark.parametrize(
    "args, message",
    [
        (["bad name", "--type", "gs"], "cannot be a plugin id"),
        (["ok-name", "--type", "xx"], "unknown plugin type 'xx'"),
        (["ok-name", "--type", "gs", "--lang", "cobol"], "unknown language 'cobol'"),
        (["my-gs-node", "--type", "gs", "--lang", "node"], "exists and is not empty"),
    ],
)
def test_bad_input_is_one_error_line(made, args, message):
    proc = mrpvm(made["env"], "plugin", "new", *args, "--dir", str(made["parent"]))
    assert proc.returncode == 2
    assert message in proc.stderr.decode() and len(proc.stderr.decode().strip().splitlines()) == 1
