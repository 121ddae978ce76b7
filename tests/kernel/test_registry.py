"""The registry (protocol/SPEC.md §7): every rejection rule, the allowlist, legacy manifests, shipped manifests."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mrpvm.kernel.config import MANIFESTS_DIR, load_config, wrapper_dirs
from mrpvm.kernel.errors import UnknownPluginError
from mrpvm.kernel.registry import Registry, allowlist_refusal, parse_allowlist
from mrpvm.protocol.vocab import OPS_BY_TYPE

HINTS = {
    "expectedLatencyMs": 10,
    "expectedLLMCalls": 0,
    "relativeCost": 0.1,
    "supportedActs": ["define"],
    "topicTags": ["test"],
    "preferredDepth": "shallow",
    "fallbackRole": "primary",
    "evidenceStyle": ["extractive"],
    "confidenceWhenMatched": 0.5,
}


def manifest(plugin_id: str = "tool", plugin_type: str = "gs-plugin", **fields) -> dict:
    data = {
        "id": plugin_id,
        "name": plugin_id,
        "type": plugin_type,
        "version": "1.0.0",
        "protocolVersion": 1,
        "description": "A test plugin.",
        "plannerHints": HINTS,
        "command": "python",
        "args": ["tool.py"],
    }
    data.update(fields)
    return {k: v for k, v in data.items() if v is not None}


def write_wrapper(root: Path, folder: str, data: dict | str) -> Path:
    path = root / "wrappers" / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "tool.py").write_text("print('hi')\n")
    text = data if isinstance(data, str) else json.dumps(data)
    (path / "manifest.json").write_text(text)
    return path


def load(root: Path, allowlist: list[str] | None = None) -> Registry:
    builtins = root / "manifests"
    builtins.mkdir(exist_ok=True)
    allowed = allowlist if allowlist is not None else ["tool", "a", "b", "shout"]
    return Registry.load(builtins, [root / "wrappers"], allowed)


def only_rejection(registry: Registry) -> str:
    assert registry.list() == [], "the broken manifest must not be loaded"
    assert len(registry.rejected) == 1, registry.rejected
    return registry.rejected[0][1]


# --------------------------------------------------------------------------- rejections


def test_valid_wrapper_on_the_allowlist_loads(tmp_path):
    folder = write_wrapper(tmp_path, "tool", manifest())
    registry = load(tmp_path)
    assert registry.rejected == []
    entry = registry.get("tool", "gs-plugin")
    assert entry.folder == folder
    assert not entry.builtin and not entry.legacy
    assert entry.argv == [sys.executable, "tool.py"]
    assert entry.manifest.ops == ["solve"]  # no ops: every op of the type


def test_unknown_type(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(plugin_type="xx-plugin"))
    reason = only_rejection(load(tmp_path))
    assert "Invalid value 'xx-plugin' - at `$.type`" in reason and "one of sd-plugin" in reason


def test_missing_command(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(command=None))
    assert "missing required field `command`" in only_rejection(load(tmp_path))


def test_empty_command(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(command="  "))
    assert "at `$.command`" in only_rejection(load(tmp_path))


@pytest.mark.parametrize("plugin_id", ["../x", "", "a b", "-x", "x" * 65])
def test_id_must_name_a_folder(tmp_path, plugin_id):
    write_wrapper(tmp_path, "tool", manifest(plugin_id=plugin_id))
    assert "at `$.id`" in only_rejection(load(tmp_path))


def test_relative_command_escaping_the_folder(tmp_path):
    (tmp_path / "wrappers" / "x").parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "wrappers" / "x").write_text("#!/bin/sh\n")  # exists, so only the escape can be the reason
    write_wrapper(tmp_path, "tool", manifest(command="../x"))
    reason = only_rejection(load(tmp_path))
    assert "command '../x' escapes the plugin folder" in reason


def test_absolute_command_outside_the_folder(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(command="/usr/bin/true"))
    assert "command '/usr/bin/true' escapes the plugin folder" in only_rejection(load(tmp_path))


def test_symlinked_command_pointing_outside(tmp_path):
    folder = write_wrapper(tmp_path, "tool", manifest(command="./run"))
    os.symlink("/bin/sh", folder / "run")
    assert "escapes the plugin folder" in only_rejection(load(tmp_path))


def test_command_inside_the_folder_is_resolved(tmp_path):
    folder = write_wrapper(tmp_path, "tool", manifest(command="./bin/run", args=[]))
    (folder / "bin").mkdir()
    (folder / "bin" / "run").write_text("#!/usr/bin/env python3\n")
    entry = load(tmp_path).get("tool")
    assert entry.argv == [str((folder / "bin" / "run").resolve())]


def test_command_not_on_path(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(command="no-such-interpreter-xyz"))
    assert "is not on PATH" in only_rejection(load(tmp_path))


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("sh", ["-c", "python tool.py"]),
        ("bash", ["tool.sh"]),
        ("env", ["python", "tool.py"]),
        ("busybox", []),
    ],
)
def test_a_shell_as_the_command_is_refused(tmp_path, command, args):
    write_wrapper(tmp_path, "tool", manifest(command=command, args=args))
    assert f"command '{command}' runs through the shell" in only_rejection(load(tmp_path))


@pytest.mark.parametrize(
    "shebang", ["#!/bin/sh", "#! /bin/bash -e", "#!/usr/bin/env bash", "#!/usr/bin/env -S zsh"]
)
def test_a_shell_script_as_the_command_is_refused(tmp_path, shebang):
    folder = write_wrapper(tmp_path, "tool", manifest(command="./run", args=[]))
    (folder / "run").write_text(f"{shebang}\nexec python tool.py\n")
    assert "runs through the shell" in only_rejection(load(tmp_path))


def test_a_link_to_a_shell_inside_the_folder_is_refused(tmp_path):
    folder = write_wrapper(tmp_path, "tool", manifest(command="./run", args=[]))
    (folder / "run").write_bytes(Path("/bin/sh").resolve().read_bytes()[:64])
    os.symlink(folder / "run", folder / "dash")
    write_wrapper(tmp_path, "tool", manifest(command="./dash", args=[]))
    assert "runs through the shell 'dash'" in only_rejection(load(tmp_path))


@pytest.mark.parametrize("arg", ["../evil.py", "sub/../../evil.py", "/etc/passwd"])
def test_arg_escaping_the_folder(tmp_path, arg):
    write_wrapper(tmp_path, "tool", manifest(args=[arg]))
    assert f"argument '{arg}' escapes the plugin folder" in only_rejection(load(tmp_path))


def test_args_that_are_not_strings(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(args=["tool.py", 1]))
    reason = only_rejection(load(tmp_path))
    assert "Expected `str`, got `int`" in reason and "args" in reason


@pytest.mark.parametrize("version", [2, 0, "1"])
def test_protocol_version_other_than_1(tmp_path, version):
    write_wrapper(tmp_path, "tool", manifest(protocolVersion=version))
    assert "protocolVersion" in only_rejection(load(tmp_path))


@pytest.mark.parametrize("plugin_type", ["sd-plugin", "kb-plugin", "gs-plugin"])
def test_planner_hints_required(tmp_path, plugin_type):
    write_wrapper(tmp_path, "tool", manifest(plugin_type=plugin_type, plannerHints=None))
    reason = only_rejection(load(tmp_path))
    assert f"missing required field `plannerHints` (a {plugin_type} manifest)" in reason


@pytest.mark.parametrize("plugin_type", ["val-plugin", "mrp-plan-plugin"])
def test_planner_hints_optional_for_val_and_planner(tmp_path, plugin_type):
    write_wrapper(tmp_path, "tool", manifest(plugin_type=plugin_type, plannerHints=None))
    registry = load(tmp_path)
    assert registry.rejected == []
    assert registry.get("tool").manifest.ops == list(OPS_BY_TYPE[plugin_type])


def test_op_not_of_the_type(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(ops=["solve", "retrieve"]))
    assert "Invalid enum value 'retrieve' - at `$.ops[1]` (a gs-plugin manifest)" in only_rejection(
        load(tmp_path)
    )


def test_ops_may_not_be_empty(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(ops=[]))
    assert "at `$.ops`" in only_rejection(load(tmp_path))


def test_unknown_op(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(ops=["summarize"]))
    assert "ops" in only_rejection(load(tmp_path))


def test_invalid_json(tmp_path):
    write_wrapper(tmp_path, "tool", '{"id": "tool", "type": ')
    assert "not valid JSON" in only_rejection(load(tmp_path))


def test_manifest_not_an_object(tmp_path):
    write_wrapper(tmp_path, "tool", "[1, 2]")
    assert "a manifest is a JSON object" in only_rejection(load(tmp_path))


@pytest.mark.parametrize("field", ["timeoutMs", "maxInputSizeBytes", "maxOutputBytes", "concurrency"])
def test_non_positive_limits(tmp_path, field):
    write_wrapper(tmp_path, "tool", manifest(**{field: 0}))
    assert f"Expected `int` >= 1 - at `$.{field}`" in only_rejection(load(tmp_path))


def test_negative_llm_calls(tmp_path):
    write_wrapper(tmp_path, "tool", manifest(maxLLMCalls=-1))
    assert "Expected `int` >= 0 - at `$.maxLLMCalls`" in only_rejection(load(tmp_path))


@pytest.mark.parametrize(
    ("hint", "value"),
    [
        ("relativeCost", 1.5),
        ("confidenceWhenMatched", -0.1),
        ("expectedLatencyMs", -1),
        ("preferredDepth", "bottomless"),
        ("supportedActs", ["dance"]),
    ],
)
def test_planner_hints_ranges_and_enums(tmp_path, hint, value):
    write_wrapper(tmp_path, "tool", manifest(plannerHints={**HINTS, hint: value}))
    assert f"at `$.plannerHints.{hint}" in only_rejection(load(tmp_path))


def test_duplicate_id_between_wrappers(tmp_path):
    first = write_wrapper(tmp_path / "one", "tool", manifest())
    write_wrapper(tmp_path / "two", "tool", manifest())
    (tmp_path / "manifests").mkdir()
    wrappers = [tmp_path / "one" / "wrappers", tmp_path / "two" / "wrappers"]
    registry = Registry.load(tmp_path / "manifests", wrappers, ["tool"])
    assert [e.id for e in registry.list()] == ["tool"]
    assert registry.get("tool").folder == first  # wrapper folders load in order; the first one wins
    assert len(registry.rejected) == 1
    path, reason = registry.rejected[0]
    assert path.parents[2].name == "two" and "duplicate plugin id 'tool'" in reason


def test_wrapper_cannot_shadow_a_builtin(tmp_path):
    (tmp_path / "manifests").mkdir()
    builtin = manifest(args=["-c", "pass"])
    (tmp_path / "manifests" / "tool.json").write_text(json.dumps(builtin))
    write_wrapper(tmp_path, "tool", manifest())
    registry = load(tmp_path)
    assert registry.get("tool").builtin
    assert len(registry.rejected) == 1 and "duplicate plugin id 'tool'" in registry.rejected[0][1]


def test_one_bad_manifest_does_not_block_the_others(tmp_path):
    write_wrapper(tmp_path, "a", manifest(plugin_id="a"))
    write_wrapper(tmp_path, "b", manifest(plugin_id="b", protocolVersion=2))
    registry = load(tmp_path)
    assert [e.id for e in registry.list()] == ["a"]
    assert len(registry.rejected) == 1 and registry.rejected[0][0].parent.name == "b"


def test_missing_wrapper_folder_is_reported(tmp_path):
    (tmp_path / "manifests").mkdir()
    registry = Registry.load(tmp_path / "manifests", [tmp_path / "nowhere"], [])
    assert registry.rejected == [(tmp_path / "nowhere", "wrapper folder does not exist")]


# --------------------------------------------------------------------------- allowlist


def test_wrapper_not_on_the_allowlist_is_rejected_with_a_reason(tmp_path):
    write_wrapper(tmp_path, "tool", manifest())
    registry = load(tmp_path, allowlist=["something-else"])
    assert "wrapper 'tool' is not on the plugin allowlist" in only_rejection(registry)
    with pytest.raises(UnknownPluginError):
        registry.get("tool")


def test_the_allowlist_binds_an_id_to_its_folder(tmp_path):
    write_wrapper(tmp_path, "zz-impostor", manifest())  # claims the allow-listed id 'tool' from elsewhere
    reason = only_rejection(load(tmp_path, allowlist=["tool"]))
    assert "wrapper 'tool' is allow-listed for the folder 'tool', not" in reason and "zz-impostor" in reason


def test_the_real_folder_loads_and_the_impostor_is_refused(tmp_path):
    real = write_wrapper(tmp_path, "tool", manifest())
    write_wrapper(tmp_path, "a-copy", manifest())  # sorts first: it must not take the id
    registry = load(tmp_path, allowlist=["tool"])
    assert registry.get("tool").folder == real
    assert [p.parent.name for p, _ in registry.rejected] == ["a-copy"]


@pytest.mark.parametrize("absolute", [False, True])
def test_an_allowlist_entry_may_name_another_folder(tmp_path, absolute):
    folder = write_wrapper(tmp_path, "tool-v2", manifest())
    bound = str(folder) if absolute else "tool-v2"
    registry = load(tmp_path, allowlist=[f"tool={bound}"])
    assert registry.rejected == [] and registry.get("tool").folder == folder
    other = write_wrapper(tmp_path / "elsewhere", "tool-v2", manifest())
    if absolute:  # an absolute binding names exactly one folder
        assert allowlist_refusal("tool", other, parse_allowlist([f"tool={bound}"])) is not None
    assert parse_allowlist([" a = b ", "c", "", "d="]) == {"a": "b", "c": "c", "d": "d"}


def test_allowlist_does_not_apply_to_builtins(tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "tool.json").write_text(json.dumps(manifest(args=["-c", "pass"])))
    (tmp_path / "wrappers").mkdir()
    registry = load(tmp_path, allowlist=[])
    assert registry.get("tool").builtin and registry.rejected == []


def test_get_checks_the_type(tmp_path):
    write_wrapper(tmp_path, "tool", manifest())
    registry = load(tmp_path)
    with pytest.raises(UnknownPluginError, match="no plugin 'tool' of type kb-plugin") as info:
        registry.get("tool", "kb-plugin")
    assert (info.value.code, info.value.status) == ("UNKNOWN_PLUGIN", 404)
    assert info.value.details == {"plugin": "tool", "type": "kb-plugin"}
    assert [e.id for e in registry.list("gs-plugin")] == ["tool"]
    assert registry.list("kb-plugin") == []


# --------------------------------------------------------------------------- legacy manifests


def test_legacy_manifest_becomes_a_helper_gs_plugin(tmp_path):
    legacy = {
        "name": "shout",
        "version": "1.0.0",
        "protocolVersion": 1,
        "capabilities": ["text"],
        "keywords": ["upper"],
        "command": "python",
        "args": ["tool.py"],
        "timeout": 4000,
        "priority": 10,
        "exclusive": False,
        "maxInputSizeBytes": 4096,
        "description": "Shouts.",
    }
    write_wrapper(tmp_path, "shout", legacy)
    registry = load(tmp_path)
    assert registry.rejected == []
    entry = registry.get("shout", "gs-plugin")
    assert entry.legacy
    assert entry.manifest.timeoutMs == 4000
    assert entry.manifest.maxInputSizeBytes == 4096
    assert entry.manifest.description == "Shouts."
    assert entry.manifest.plannerHints is not None
    assert entry.manifest.ops == ["solve"]


def test_legacy_manifest_still_needs_the_allowlist(tmp_path):
    write_wrapper(tmp_path, "shout", {"name": "shout", "command": "python", "args": ["tool.py"]})
    assert "not on the plugin allowlist" in only_rejection(load(tmp_path, allowlist=[]))


def test_legacy_manifest_still_validates_paths(tmp_path):
    write_wrapper(tmp_path, "shout", {"name": "shout", "command": "python", "args": ["../../x.py"]})
    assert "escapes the plugin folder" in only_rejection(load(tmp_path))


# --------------------------------------------------------------------------- what ships


def test_the_default_allowlist_is_empty_so_examples_stay_off():
    config, _ = load_config({"MRPVM_HOME": "/nonexistent-mrpvm-home"})
    assert config.engine.pluginAllowlist == []
    registry = Registry.load(MANIFESTS_DIR, wrapper_dirs(config), config.engine.pluginAllowlist)
    assert all(e.builtin for e in registry.list())
    rejected = sorted(Path(p).parent.name for p, _ in registry.rejected)
    assert rejected == ["gs-keyword-node", "kb-terms-go", "legacy-shout"]
    assert all("allowlist" in reason for _, reason in registry.rejected)  # before the Go binary is looked at


def test_shipped_manifests_and_wrappers_all_load():
    config, _ = load_config(
        {"MRPVM_HOME": "/nonexistent-mrpvm-home", "MRPVM_PLUGIN_ALLOWLIST": "gs-keyword-node,legacy-shout"}
    )
    registry = Registry.load(MANIFESTS_DIR, wrapper_dirs(config), config.engine.pluginAllowlist)
    assert [(Path(p).parent.name, "allowlist" in r) for p, r in registry.rejected] == [("kb-terms-go", True)]
    builtin_files = sorted(p.stem for p in MANIFESTS_DIR.glob("*.json"))
    assert sorted(e.id for e in registry.list() if e.builtin) == builtin_files
    assert len(builtin_files) == 12
    for entry in registry.list():
        if entry.builtin:
            assert entry.argv[0] == sys.executable and entry.manifest.worker
    node = registry.get("gs-keyword-node", "gs-plugin")
    assert Path(node.argv[0]).name == "node" and node.argv[1:] == ["wrapper.js"]
    assert not node.manifest.worker
    assert registry.get("legacy-shout", "gs-plugin").legacy
