"""A foreign author's JSON Schema validator and the kernel agree on every manifest rule (protocol/SPEC.md §7).

protocol/schema/manifest.schema.json is generated from protocol/manifest.py; the registry decodes with the
same Structs. Each case below is a shipped manifest or one broken on purpose; a standard Draft 2020-12
validator (jsonschema) must accept exactly the ones the registry loads.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.registry import ManifestError, load_manifest
from mrpvm.protocol import schema_gen

ROOT = MANIFESTS_DIR.parent
SCHEMA = json.loads((schema_gen.SCHEMA_DIR / "manifest.schema.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA)
# Every shipped manifest but the legacy wrapper's (no type/id: the registry normalises it before the schema).
SHIPPED = sorted(
    [
        *MANIFESTS_DIR.glob("*.json"),
        *(p for p in (ROOT / "wrappers").glob("*/manifest.json") if '"type"' in p.read_text()),
    ]
)
KB = json.loads((MANIFESTS_DIR / "kb-fast.json").read_text())
PLANNER = json.loads((MANIFESTS_DIR / "planner-default.json").read_text())


def changed(base: dict, path: str, value: object) -> dict:
    """`base` with the dotted `path` set to `value` (None deletes it)."""
    data = copy.deepcopy(base)
    *parents, last = path.split(".")
    target = data
    for key in parents:
        target = target[key]
    if value is None:
        target.pop(last, None)
    else:
        target[last] = value
    return data


BROKEN = {
    "unknown type": changed(KB, "type", "xx-plugin"),
    "no type": changed(KB, "type", None),
    "no id": changed(KB, "id", None),
    "id escaping its folder": changed(KB, "id", "../kb"),
    "id with a space": changed(KB, "id", "kb fast"),
    "no command": changed(KB, "command", None),
    "blank command": changed(KB, "command", "   "),
    "protocol version 2": changed(KB, "protocolVersion", 2),
    "protocol version as text": changed(KB, "protocolVersion", "1"),
    "kb without planner hints": changed(KB, "plannerHints", None),
    "hint missing": changed(KB, "plannerHints.fallbackRole", None),
    "relative cost above 1": changed(KB, "plannerHints.relativeCost", 1.2),
    "confidence below 0": changed(KB, "plannerHints.confidenceWhenMatched", -0.5),
    "negative latency": changed(KB, "plannerHints.expectedLatencyMs", -1),
    "unknown depth": changed(KB, "plannerHints.preferredDepth", "abyssal"),
    "unknown act": changed(KB, "plannerHints.supportedActs", ["dance"]),
    "op of another type": changed(KB, "ops", ["retrieve", "solve"]),
    "unknown op": changed(KB, "ops", ["summarize"]),
    "no ops": changed(KB, "ops", []),
    "zero timeout": changed(KB, "timeoutMs", 0),
    "zero input limit": changed(KB, "maxInputSizeBytes", 0),
    "negative output limit": changed(KB, "maxOutputBytes", -5),
    "zero concurrency": changed(KB, "concurrency", 0),
    "negative LLM calls": changed(KB, "maxLLMCalls", -1),
    "unknown cost class": changed(KB, "costClass", "free"),
    "args not strings": changed(KB, "args", ["-m", 3]),
    "worker not a boolean": changed(KB, "worker", "yes"),
    "reads an unknown field": changed(KB, "reads", ["payload", "secrets"]),
    "reads not a list": changed(KB, "reads", "payload"),
    "build without command": changed(KB, "build", {"args": ["build"]}),
    "build args not strings": changed(KB, "build", {"command": "go", "args": ["build", 1]}),
    "build with an unknown field": changed(KB, "build", {"command": "go", "shell": True}),
}
VALID = {
    "planner without hints": changed(PLANNER, "plannerHints", None),
    "unknown fields are ignored": changed(KB, "priority", 10),
    "ops left out": changed(KB, "ops", None),
    "reads every optional field": changed(KB, "reads", ["payload", "budget", "llm", "paths", "ids"]),
    "a build step": changed(KB, "build", {"command": "go", "args": ["build", "-o", "bin/kb", "."]}),
    "a subset of the type's ops": changed(KB, "ops", ["retrieve"]),
    "hints at their bounds": changed(
        changed(KB, "plannerHints.relativeCost", 1), "plannerHints.confidenceWhenMatched", 0
    ),
}


def kernel_loads(data: object, folder: Path) -> bool:
    path = folder / "manifest.json"
    path.write_text(json.dumps(data))
    try:
        load_manifest(path, builtin=False)
    except ManifestError:
        return False
    return True


@pytest.mark.parametrize(
    "path", SHIPPED, ids=lambda p: p.parent.name if p.name == "manifest.json" else p.stem
)
def test_every_shipped_manifest_is_valid_for_both(path, tmp_path):
    data = json.loads(path.read_text())
    data["command"], data["args"] = "python", []  # where the program lies is the registry's, not the schema's
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    assert errors == [] and kernel_loads(data, tmp_path)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_manifest_is_rejected_by_both(case, tmp_path):
    data = BROKEN[case]
    assert not VALIDATOR.is_valid(data), f"the schema accepts: {case}"
    assert not kernel_loads(data, tmp_path), f"the kernel loads: {case}"


@pytest.mark.parametrize("case", sorted(VALID))
def test_an_unusual_but_valid_manifest_is_accepted_by_both(case, tmp_path):
    data = VALID[case]
    assert VALIDATOR.is_valid(data), [e.message for e in VALIDATOR.iter_errors(data)]
    assert kernel_loads(data, tmp_path)


def test_the_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(SCHEMA)


def test_the_manifest_structs_annotations_are_objects_not_strings():
    """msgspec reads a manifest Struct's annotations as they are: as strings (postponed evaluation) each one
    is compiled and evaluated at a process's first manifest, 2/3 of the registry's load in a one-turn ask."""
    import msgspec
    from mrpvm.protocol import manifest

    structs = [
        value
        for value in vars(manifest).values()
        if isinstance(value, type)
        and issubclass(value, msgspec.Struct)
        and value.__module__ == manifest.__name__
    ]
    assert structs
    for struct in structs:
        strings = {
            name for name, hint in vars(struct).get("__annotations__", {}).items() if isinstance(hint, str)
        }
        assert strings == set(), struct
