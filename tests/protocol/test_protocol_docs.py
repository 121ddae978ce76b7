"""protocol/schema and protocol/SPEC.md stay in sync with the code, and SPEC.md's examples are true."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from mrpvm.protocol import schema_gen, spec_regions
from mrpvm.protocol.cnl import parse_document, validate_document
from mrpvm.protocol.document import CnlDocument
from mrpvm.protocol.envelope import PAYLOAD_TYPES, Descriptor, Request, decode_request
from mrpvm.protocol.errors import ErrorInfo
from mrpvm.protocol.examples import EXAMPLE_REQUESTS, EXAMPLE_RESPONSES
from mrpvm.protocol.invalid_examples import INVALID_REQUESTS, RULE_EXAMPLES
from mrpvm.protocol.manifest import MANIFEST_TYPES
from mrpvm.protocol.vocab import OPS, PLUGIN_TYPES

SPEC = schema_gen.SPEC_PATH.read_text(encoding="utf-8")
PLUGINS = Path(__file__).resolve().parents[1] / "support" / "plugins"


def test_schemas_and_spec_are_in_sync_with_the_code():
    assert schema_gen.drift() == [], "run: .venv/bin/python -m mrpvm.protocol.schema_gen"


def test_check_command_exits_0_when_in_sync():
    proc = subprocess.run(
        [sys.executable, "-m", "mrpvm.protocol.schema_gen", "--check"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_check_detects_drift_and_stale_files(tmp_path, monkeypatch):
    schema_dir = tmp_path / "schema"
    shutil.copytree(schema_gen.SCHEMA_DIR, schema_dir)
    spec = tmp_path / "SPEC.md"
    spec.write_text(SPEC, encoding="utf-8")
    monkeypatch.setattr(schema_gen, "PROTOCOL_DIR", tmp_path)
    monkeypatch.setattr(schema_gen, "SCHEMA_DIR", schema_dir)
    monkeypatch.setattr(schema_gen, "SPEC_PATH", spec)
    assert schema_gen.drift() == []
    edited = schema_dir / "payload" / "solve.schema.json"
    edited.write_text(edited.read_text().replace('"allowDecompose"', '"allowDecomposition"'))
    (schema_dir / "old.schema.json").write_text("{}")
    spec.write_text(SPEC.replace("Status: accepted", "Status: approved"), encoding="utf-8")
    assert sorted(schema_gen.drift()) == [
        "SPEC.md",
        "schema/old.schema.json (stale)",
        "schema/payload/solve.schema.json",
    ]
    assert schema_gen.main(["--check"]) == 1
    assert schema_gen.main([]) == 0  # regenerate
    assert schema_gen.drift() == []
    assert not (schema_dir / "old.schema.json").exists()


def _schema(rel: str) -> dict:
    return json.loads((schema_gen.SCHEMA_DIR / rel).read_text())


def _props(schema: dict, name: str) -> set[str]:
    return set(schema["$defs"][name]["properties"])


def test_every_schema_file_is_draft_2020_12_with_an_id():
    files = sorted(
        p.relative_to(schema_gen.SCHEMA_DIR).as_posix() for p in schema_gen.SCHEMA_DIR.rglob("*.json")
    )
    assert len(files) == 6 + len(OPS)  # request, manifest, descriptor, error, cnl-document, units-handoff
    for rel in files:
        schema = _schema(rel)
        assert schema["$schema"] == schema_gen.SCHEMA_DRAFT
        assert schema["$id"].endswith(rel)


def test_units_handoff_schema_matches_the_file_struct():
    from mrpvm.protocol.handoff import UnitAnalysis, UnitsHandoff

    schema = _schema("units-handoff.schema.json")
    assert _props(schema, "UnitsHandoff") == set(UnitsHandoff.__struct_fields__)
    assert _props(schema, "UnitAnalysis") == set(UnitAnalysis.__struct_fields__)


def test_request_schema_matches_the_envelope():
    schema = _schema("request.schema.json")
    assert _props(schema, "Request") == set(Request.__struct_fields__)
    assert schema["$defs"]["Request"]["required"] == ["prompt", "context"]
    rules = {rule["if"]["properties"]["op"]["const"]: rule["then"] for rule in schema["allOf"]}
    assert set(rules) == set(OPS)
    for op, then in rules.items():
        ref = then["properties"]["payload"]["anyOf"][0]["$ref"]
        assert ref == f"#/$defs/{PAYLOAD_TYPES[op].__name__}"


@pytest.mark.parametrize("op", OPS)
def test_payload_schema_lists_every_payload_field(op):
    schema = _schema(f"payload/{op}.schema.json")
    assert _props(schema, PAYLOAD_TYPES[op].__name__) == set(PAYLOAD_TYPES[op].__struct_fields__)


def test_other_schemas_match_their_structs():
    manifest = _schema("manifest.schema.json")
    assert len(manifest["anyOf"]) == len(MANIFEST_TYPES) == len(PLUGIN_TYPES)
    for variant in MANIFEST_TYPES:
        assert _props(manifest, variant.__name__) == {"type", *variant.__struct_fields__}
    assert _props(_schema("descriptor.schema.json"), "Descriptor") == set(Descriptor.__struct_fields__)
    assert _props(_schema("error.schema.json"), "ErrorInfo") == set(ErrorInfo.__struct_fields__)
    doc = _schema("cnl-document.schema.json")
    assert _props(doc, "CnlDocument") == set(CnlDocument.__struct_fields__)
    status = doc["$defs"]["PluginResult"]["properties"]["status"]
    assert status["enum"][0] == "success" and "needs-decomposition" in status["enum"]
    role = doc["$defs"]["KnowledgeUnit"]["properties"]["role"]
    assert {b.get("type") for b in role.get("anyOf", [role])} == {"string"}


def test_example_documents_encode_to_the_json_form():
    # The JSON form described by cnl-document.schema.json is what msgspec encodes; it decodes back.
    for op in OPS:
        raw = msgspec.json.encode(EXAMPLE_RESPONSES[op])
        assert msgspec.json.decode(raw, type=CnlDocument) == EXAMPLE_RESPONSES[op]


# --------------------------------------------------------------------------- SPEC.md


def _blocks(region: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)\n```", region, re.DOTALL)


def test_spec_has_a_request_and_response_for_every_op_that_parse_and_equal_the_examples():
    region = spec_regions.spec_region(SPEC, "examples")
    assert region == spec_regions.spec_examples()
    headings = re.findall(r"^### `(\w+)`$", region, re.MULTILINE)
    assert headings == list(OPS)
    requests, responses = _blocks(region, "json"), _blocks(region, "markdown")
    assert len(requests) == len(responses) == len(OPS)
    for op, req, resp in zip(OPS, requests, responses, strict=True):
        decoded = decode_request(req)
        assert decoded.op == op
        assert decoded.payload == EXAMPLE_REQUESTS[op].payload
        assert decoded.envelope.prompt == EXAMPLE_REQUESTS[op].prompt
        assert parse_document(resp, op) == EXAMPLE_RESPONSES[op]


def test_spec_rule_examples_fail_with_their_rule():
    region = spec_regions.spec_region(SPEC, "rules")
    assert region == spec_regions.spec_rules()
    rules = re.findall(r"^#### `([a-z-]+)`", region, re.MULTILINE)
    assert rules == list(RULE_EXAMPLES)
    blocks = re.findall(r"```markdown\n(.*?)```", region, re.DOTALL)
    for rule, block in zip(rules, blocks, strict=True):
        op = RULE_EXAMPLES[rule][0]
        assert rule in {issue.rule for issue in validate_document(block, op)}


def test_spec_invalid_request_table_lists_every_case():
    region = spec_regions.spec_region(SPEC, "invalid")
    assert re.findall(r"^\| `([a-z-]+)` \|", region, re.MULTILINE) == list(INVALID_REQUESTS)


def _spec_exchanges() -> list[tuple[bytes, bytes]]:
    """The hand-written worker byte examples of SPEC.md §3, unescaped."""
    section = SPEC.split("## 3. Worker mode", 1)[1].split("## 4.", 1)[0]
    out = []
    for block in re.findall(r"```text\n(.*?)```", section, re.DOTALL):
        sent = re.search(r"kernel → worker:\n(.*)\n", block).group(1)
        answer = re.search(r"worker → kernel:\n(.*)\n", block).group(1)
        out.append(tuple(s.encode().decode("unicode_escape").encode() for s in (sent, answer)))
    return out


def test_spec_worker_byte_examples_are_what_a_worker_really_does():
    exchanges = _spec_exchanges()
    assert len(exchanges) == 2
    proc = subprocess.run(
        [sys.executable, str(PLUGINS / "echo_gs.py")],
        input=b"".join(sent for sent, _ in exchanges),
        capture_output=True,
        env={"MRPVM_WORKER": "1"},
        cwd=PLUGINS,
        timeout=20,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"".join(answer for _, answer in exchanges)
