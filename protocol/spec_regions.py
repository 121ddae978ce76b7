"""The generated regions of protocol/SPEC.md: field tables from cnl_grammar.py's specs, the manifest's
fields from its Struct, every validation rule with a failing example, a request and response per op and the
invalid requests. `render_spec` fills them; protocol/schema_gen.py writes and checks the file."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from . import cnl, cnl_grammar
from .examples import EXAMPLE_RESPONSES, example_request_json
from .invalid_examples import INVALID_REQUEST_FIELD, INVALID_REQUESTS, RULE_EXAMPLES
from .manifest import Manifest
from .vocab import MAIN_OP, OPS, OPS_BY_TYPE

_KIND_TEXT = {
    "text": "text",
    "enum": "one of",
    "csv": "comma-separated list",
    "csv-enum": "comma-separated list of",
    "int": "integer ≥ 0",
    "float": "number",
    "bool": "yes / no (true / false accepted)",
    "confidence": "high, medium, low or a number in [0,1]",
}
_HEADINGS = {
    "Plugin Result": "## Plugin Result",
    "Intent Group": "## Intent Group <N>",
    "Context Unit": "## Context Unit <id>",
    "Resolved Intent": "## Resolved Intent <N>",
    "Plan": "## Plan",
    "Answer": "## Answer",
    "Sources": "## Sources",
    "Observation": "## Observation <N>",
}


def spec_fields() -> str:
    """One table per CNL section kind, straight from cnl_grammar.py's field specs."""
    out: list[str] = []
    ops_for = {
        kind.name: [op for op, kinds in cnl_grammar.SECTIONS_BY_OP.items() if kind in kinds]
        for kind in cnl_grammar.SECTION_KINDS
    }
    for kind in cnl_grammar.SECTION_KINDS:
        used = ", ".join(ops_for[kind.name]) or "every op"
        out.append(f"#### `{_HEADINGS[kind.name]}`\n")
        out.append(f"Allowed in: {used}.\n")
        if not kind.fields:
            out.append("Free Markdown, no fields (see the Answer rule above).\n")
            continue
        out.append("| Field | Required | Type | Values |")
        out.append("|---|---|---|---|")
        for spec in kind.fields:
            values = ", ".join(f"`{c}`" for c in spec.choices)
            out.append(
                f"| `{spec.name}` | {'yes' if spec.required else ''} | {_KIND_TEXT[spec.kind]} | {values} |"
            )
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def spec_rules() -> str:
    """Every validation rule with a failing example and the issue it produces."""
    out: list[str] = []
    for rule, (op, text, line) in RULE_EXAMPLES.items():
        issue = next(i for i in cnl.validate_document(text, op) if i.rule == rule and i.line == line)
        where = f" (op `{op}`)" if op else ""
        out.append(f"#### `{rule}`{where}\n")
        out.append("```markdown\n" + text.rstrip("\n") + "\n```\n")
        out.append(f"→ `{issue}`\n")
    return "\n".join(out).rstrip() + "\n"


def spec_examples() -> str:
    """For every op: which types serve it, a complete request and a valid response."""
    out: list[str] = []
    for op in OPS:
        types = [t for t, ops in OPS_BY_TYPE.items() if op in ops]
        main = [t for t in types if MAIN_OP[t] == op]
        note = f" (main op of {', '.join(main)})" if main else ""
        out.append(f"### `{op}`\n")
        out.append(f"Served by: {', '.join(types)}{note}. Request:\n")
        pretty = msgspec.json.format(example_request_json(op), indent=2).decode()
        out.append("```json\n" + pretty + "\n```\n")
        out.append("Response (stdout):\n")
        out.append("```markdown\n" + cnl.render_document(EXAMPLE_RESPONSES[op]).rstrip("\n") + "\n```\n")
    return "\n".join(out).rstrip() + "\n"


def spec_invalid() -> str:
    out = ["| case | stdin | must be refused by |", "|---|---|---|"]
    for name, body in INVALID_REQUESTS.items():
        shown = body.decode().replace("|", "\\|")
        field = INVALID_REQUEST_FIELD[name]
        who = "every plugin" if field is None else f"a plugin whose manifest `reads` `{field}`"
        out.append(f"| `{name}` | `{shown}` | {who} |")
    return "\n".join(out) + "\n"


def _schema_type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    """A JSON Schema property as a short phrase: `integer > 0`, `array of strings`, `one of a, b`."""
    if "$ref" in prop:
        return f"object ({prop['$ref'].rsplit('/', 1)[-1]})"
    if "anyOf" in prop:
        kinds = [_schema_type(b, defs) for b in prop["anyOf"] if b.get("type") != "null"]
        return " or ".join(kinds) + " or null"
    if "enum" in prop:
        return "one of " + ", ".join(f"`{v}`" for v in prop["enum"])
    kind = prop.get("type", "any")
    if kind == "array":
        items = _schema_type(prop.get("items", {}), defs)
        text = f"array of {items}" + ("s" if items in ("string", "integer") else "")
        text = text.replace("array of one of", "array of, each one of")
        return text + (f" (at least {prop['minItems']})" if prop.get("minItems") else "")
    if "exclusiveMinimum" in prop:
        return f"{kind} > {prop['exclusiveMinimum']}"
    if "minimum" in prop and "maximum" in prop:
        return f"{kind} in [{prop['minimum']}, {prop['maximum']}]"
    if "minimum" in prop:
        return f"{kind} ≥ {prop['minimum']}"
    if "pattern" in prop and prop["pattern"] != r"\S":
        return f"{kind} matching `{prop['pattern']}`"
    return kind if kind != "string" or "pattern" not in prop else "non-blank string"


def _field_rows(
    props: dict[str, Any], required: list[str], defs: dict[str, Any], defaults: dict[str, str] | None = None
) -> list[str]:
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, prop in props.items():
        default = (defaults or {}).get(name) or (
            "**required**" if name in required else f"`{msgspec.json.encode(prop.get('default')).decode()}`"
        )
        meaning = prop.get("description", "").replace("|", "\\|")
        kind = _schema_type(prop, defs).replace("|", "\\|")
        rows.append(f"| `{name}` | {kind} | {default} | {meaning} |")
    return rows


def spec_manifest() -> str:
    """The manifest fields, straight from the msgspec Structs of protocol/manifest.py (types, defaults,
    constraints, descriptions), then what differs by type."""
    schema = msgspec.json.schema(Manifest)
    defs = schema["$defs"]
    gs = defs["GsManifest"]
    props: dict[str, dict[str, Any]] = {
        "type": {"description": "The plugin type; picks the variant (see the table below)."}
    }
    props.update({k: v for k, v in gs["properties"].items() if k not in ("type", "ops", "plannerHints")})
    props["plannerHints"] = {"$ref": "#/$defs/PlannerHints", "description": "How planners weigh it."}
    props["ops"] = {**gs["properties"]["ops"], "items": {"type": "string"}}
    props["type"]["enum"] = list(OPS_BY_TYPE)
    defaults = {"plannerHints": "**required** for sd, kb, gs", "ops": "every op of its type"}
    out = _field_rows(props, ["type", "id", "command"], defs, defaults)
    out += ["", "By type (`ops` lists only ops of its type; absent, it is all of them):", ""]
    out += ["| type | plannerHints | ops it may declare |", "|---|---|---|"]
    for variant in ("SdManifest", "PlanManifest", "KbManifest", "GsManifest", "ValManifest"):
        vdef = defs[variant]
        kind = vdef["properties"]["type"]["enum"][0]
        hints = "**required**" if "plannerHints" in vdef.get("required", []) else "optional"
        ops = ", ".join(f"`{op}`" for op in vdef["properties"]["ops"]["items"]["enum"])
        out.append(f"| `{kind}` | {hints} | {ops} |")
    for variant, label in (
        ("SdManifest", "sd-plugin"),
        ("PlanManifest", "mrp-plan-plugin"),
        ("KbManifest", "kb-plugin"),
    ):
        own = {k: v for k, v in defs[variant]["properties"].items() if k not in gs["properties"]}
        out += ["", f"{label} only:", ""]
        out += _field_rows(own, [], defs)
    for name, title in (("PlannerHints", "`plannerHints`"), ("Build", "`build`")):
        out += ["", f"{title} fields:", ""]
        out += _field_rows(defs[name]["properties"], defs[name].get("required", []), defs)
    return "\n".join(out) + "\n"


SPEC_REGIONS = {
    "fields": spec_fields,
    "manifest": spec_manifest,
    "rules": spec_rules,
    "examples": spec_examples,
    "invalid": spec_invalid,
}


def _region_pattern(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- BEGIN GENERATED: {name} -->\n)(.*?)(<!-- END GENERATED: {name} -->)", re.DOTALL
    )


def render_spec(text: str) -> str:
    """SPEC.md with every generated region replaced by its fresh content."""
    for name, make in SPEC_REGIONS.items():
        pattern = _region_pattern(name)
        if not pattern.search(text):
            raise ValueError(f"SPEC.md has no region '{name}'")
        body = make()

        def fill(match: re.Match[str], body: str = body) -> str:
            return match.group(1) + "\n" + body + "\n" + match.group(3)

        text = pattern.sub(fill, text)
    return text


def spec_region(text: str, name: str) -> str:
    """The current content of one generated region of SPEC.md."""
    match = _region_pattern(name).search(text)
    if match is None:
        raise ValueError(f"SPEC.md has no region '{name}'")
    return match.group(2).strip("\n") + "\n"
