"""Generate the JSON Schemas in protocol/schema/ and the generated regions of protocol/SPEC.md.

    python -m mrpvm.protocol.schema_gen            write schemas and SPEC.md regions
    python -m mrpvm.protocol.schema_gen --check    exit 1 if anything on disk differs (drift)
    python -m mrpvm.protocol.schema_gen --spec     rewrite only the SPEC.md regions

Everything generated comes from the Structs (msgspec.json.schema), the CNL field specs in cnl_grammar.py and
the examples in examples.py and invalid_examples.py, so the documents cannot drift from the code.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any

import msgspec

from . import cnl_grammar
from .document import CnlDocument
from .envelope import PAYLOAD_TYPES, Descriptor, Request
from .errors import ErrorInfo
from .handoff import UnitsHandoff
from .manifest import Manifest
from .spec_regions import render_spec
from .vocab import MAIN_OP, OPS

PROTOCOL_DIR = Path(__file__).resolve().parent
SCHEMA_DIR = PROTOCOL_DIR / "schema"
SPEC_PATH = PROTOCOL_DIR / "SPEC.md"
SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://mrp-vm.invalid/protocol/v1/"

# --------------------------------------------------------------------------- JSON Schemas


def _with_header(schema: dict[str, Any], name: str, title: str, description: str) -> dict[str, Any]:
    return {
        "$schema": SCHEMA_DRAFT,
        "$id": ID_BASE + name,
        "title": title,
        "description": description,
        **schema,
    }


def _request_schema() -> dict[str, Any]:
    """The envelope; `payload` is checked per op with if/then (an absent op means the type's main op)."""
    payload_types = list(PAYLOAD_TYPES.values())
    (request_ref, *payload_refs), defs = msgspec.json.schema_components(
        [Request, *payload_types], ref_template="#/$defs/{name}"
    )
    props = defs["Request"]["properties"]
    props["payload"] = {
        "anyOf": [{"type": "object"}, {"type": "null"}],
        "default": {},
        "description": "Op-specific fields; null or absent means {}. See payload/<op>.schema.json.",
    }
    props["op"]["description"] = "Defaults to the plugin type's main op: " + ", ".join(
        f"{t} → {op}" for t, op in MAIN_OP.items()
    )
    props["id"]["description"] = "Worker mode only: echoed as `Request: <id>` in the result block."
    rules = [
        {
            "if": {"properties": {"op": {"const": op}}, "required": ["op"]},
            "then": {"properties": {"payload": {"anyOf": [ref, {"type": "null"}]}}},
        }
        for op, ref in zip(PAYLOAD_TYPES, payload_refs, strict=True)
    ]
    return _with_header(
        {**request_ref, "allOf": rules, "$defs": defs},
        "request.schema.json",
        "MRP-VM protocol v1 request",
        "One JSON object on stdin (one-shot) or per frame (worker). Only prompt and context are required.",
    )


def _payload_schema(op: str) -> dict[str, Any]:
    schema = msgspec.json.schema(PAYLOAD_TYPES[op])
    return _with_header(
        schema, f"payload/{op}.schema.json", f"{op} payload", f"The `payload` of a {op} request."
    )


def _cnl_attr_specs() -> dict[str, dict[str, Any]]:
    """Per Struct, per attribute: the CNL field spec, so the JSON form carries the CNL enums."""
    by_struct = {
        "PluginResult": cnl_grammar.RESULT,
        "IntentGroup": cnl_grammar.INTENT,
        "KnowledgeUnit": cnl_grammar.UNIT,
        "ResolvedIntent": cnl_grammar.RESOLVED,
        "Plan": cnl_grammar.PLAN,
        "Observation": cnl_grammar.OBSERVATION,
    }
    return {name: {spec.attr: spec for spec in kind.fields} for name, kind in by_struct.items()}


def _document_schema() -> dict[str, Any]:
    schema = msgspec.json.schema(CnlDocument)
    for struct, specs in _cnl_attr_specs().items():
        props = schema["$defs"][struct]["properties"]
        for attr, spec in specs.items():
            prop = props.get(attr)
            if prop is None:
                continue
            prop["x-cnl-field"] = spec.name
            if spec.kind == "enum":
                _narrow(prop, {"type": "string", "enum": list(spec.choices)})
            elif spec.kind == "csv-enum":
                prop["items"] = {"type": "string", "enum": list(spec.choices)}
            elif spec.kind == "int":
                _narrow(prop, {"type": "integer", "minimum": 0, "maximum": cnl_grammar.MAX_INT})
            elif spec.kind == "confidence":
                _narrow(
                    prop,
                    {"type": "string", "pattern": r"^(high|medium|low|0(\.[0-9]+)?|1(\.0+)?)$"},
                )
    unit = schema["$defs"]["KnowledgeUnit"]["properties"]
    _narrow(unit["confidence"], {"type": "number", "minimum": 0, "maximum": 1})
    schema["$defs"]["KnowledgeUnit"]["properties"]["id"]["pattern"] = r"^\S+$"
    for struct in ("IntentGroup", "ResolvedIntent", "Observation"):
        schema["$defs"][struct]["properties"]["index"]["minimum"] = 1
    return _with_header(
        schema,
        "cnl-document.schema.json",
        "CNL document (JSON form)",
        "The typed form of a CNL Markdown output, as parse_document returns it. The CNL text is the wire format.",
    )


def _narrow(prop: dict[str, Any], typed: dict[str, Any]) -> None:
    """Replace the non-null branch of a property (or the property itself) by a narrower schema."""
    if "anyOf" in prop:
        prop["anyOf"] = [typed if branch.get("type") != "null" else branch for branch in prop["anyOf"]]
    else:
        for key in ("type", "enum", "pattern"):
            prop.pop(key, None)
        prop.update(typed)


def _manifest_schema() -> dict[str, Any]:
    """One variant per plugin type, picked by `type` (a discriminated anyOf): each carries its rules."""
    return _with_header(
        msgspec.json.schema(Manifest),
        "manifest.schema.json",
        "Plugin manifest",
        "manifests/<id>.json or wrappers/<name>/manifest.json; `type` selects the variant. A legacy wrapper "
        "manifest with only `name` and no `type`/`id` is read as a helper gs-plugin before this schema applies.",
    )


def build_schemas() -> dict[str, dict[str, Any]]:
    """Relative path under protocol/schema/ -> schema."""
    out = {
        "request.schema.json": _request_schema(),
        "manifest.schema.json": _manifest_schema(),
        "descriptor.schema.json": _with_header(
            msgspec.json.schema(Descriptor),
            "descriptor.schema.json",
            "Plugin descriptor",
            "What a planner sees of a plugin: the manifest without its process fields.",
        ),
        "error.schema.json": _with_header(
            msgspec.json.schema(ErrorInfo),
            "error.schema.json",
            "Error line",
            "One line of JSON a plugin writes to stderr when it fails.",
        ),
        "cnl-document.schema.json": _document_schema(),
        "units-handoff.schema.json": _with_header(
            msgspec.json.schema(UnitsHandoff),
            "units-handoff.schema.json",
            "Units handoff file",
            "The MessagePack document a kb-plugin declaring `handoff: file` reads from payload.unitsFile of "
            "onSourceText (MessagePack maps/arrays/strings/numbers, described here in JSON terms).",
        ),
    }
    for op in OPS:
        out[f"payload/{op}.schema.json"] = _payload_schema(op)
    return {rel: _clean_descriptions(schema) for rel, schema in out.items()}


def _clean_descriptions(node: Any) -> Any:
    """Every docstring-made description with its margin removed (inspect.cleandoc): msgspec 0.23 cleans
    them and 0.22 does not, so the schemas must not depend on the version installed."""
    if isinstance(node, dict):
        return {
            key: inspect.cleandoc(value)
            if key == "description" and isinstance(value, str)
            else _clean_descriptions(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_clean_descriptions(item) for item in node]
    return node


def schema_bytes(schema: dict[str, Any]) -> bytes:
    return msgspec.json.format(msgspec.json.encode(schema), indent=2) + b"\n"


# --------------------------------------------------------------------------- main


def drift() -> list[str]:
    """Files that differ from what the code generates (empty: in sync)."""
    problems: list[str] = []
    expected = build_schemas()
    for rel, schema in expected.items():
        path = SCHEMA_DIR / rel
        if not path.is_file() or path.read_bytes() != schema_bytes(schema):
            problems.append(str(path.relative_to(PROTOCOL_DIR)))
    if SCHEMA_DIR.is_dir():
        for path in SCHEMA_DIR.rglob("*.json"):
            if path.relative_to(SCHEMA_DIR).as_posix() not in expected:
                problems.append(f"{path.relative_to(PROTOCOL_DIR)} (stale)")
    spec = SPEC_PATH.read_text(encoding="utf-8")
    if render_spec(spec) != spec:
        problems.append("SPEC.md")
    return problems


def write(schemas: bool = True, spec: bool = True) -> None:
    if schemas:
        expected = build_schemas()
        for rel, schema in expected.items():
            path = SCHEMA_DIR / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(schema_bytes(schema))
        for path in SCHEMA_DIR.rglob("*.json"):
            if path.relative_to(SCHEMA_DIR).as_posix() not in expected:
                path.unlink()
    if spec:
        SPEC_PATH.write_text(render_spec(SPEC_PATH.read_text(encoding="utf-8")), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mrpvm.protocol.schema_gen", description=__doc__.split("\n")[0]
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if the files on disk drift from the code")
    mode.add_argument("--spec", action="store_true", help="rewrite only the generated regions of SPEC.md")
    args = parser.parse_args(argv)
    if args.check:
        problems = drift()
        for problem in problems:
            print(f"out of date: {problem}", file=sys.stderr)
        if problems:
            print("run: python -m mrpvm.protocol.schema_gen", file=sys.stderr)
            return 1
        print("protocol/schema and SPEC.md are in sync")
        return 0
    write(schemas=not args.spec, spec=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
