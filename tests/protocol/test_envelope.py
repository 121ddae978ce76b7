"""The request envelope: DS016 defaults, payload decoding per op, error codes, context item conversion."""

from __future__ import annotations

import json

import msgspec
import pytest
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import (
    PAYLOAD_TYPES,
    Budget,
    ContextItem,
    Paths,
    RequestError,
    RetrievePayload,
    context_item_to_unit,
    decode_request,
    encode_request,
    unit_text,
    unit_to_context_item,
)
from mrpvm.protocol.example_fixtures import KB_UNITS
from mrpvm.protocol.examples import EXAMPLE_REQUESTS, UNIT_PROCEDURE, example_request_json
from mrpvm.protocol.invalid_examples import INVALID_REQUEST_CODES, INVALID_REQUESTS
from mrpvm.protocol.vocab import MAIN_OP, OPS, OPS_BY_TYPE, PLUGIN_TYPES

# The input example of DS016, verbatim.
DS016_EXAMPLE = b"""{
  "prompt": "Verify that constraint X is satisfiable.",
  "context": [
    {
      "title": "sess-abc123::turn-003::unit-000",
      "sourceLink": "Current-Turn Context",
      "text": "Role: Constraint\\nClaim: Variables are integers."
    },
    {
      "title": "src-001::chunk-000::unit-000",
      "sourceLink": "rules.md",
      "text": "Role: Constraint\\nClaim: a + b must equal c."
    }
  ]
}"""


@pytest.mark.parametrize("plugin_type", PLUGIN_TYPES)
def test_bare_ds016_request_decodes_for_every_type_with_its_main_op(plugin_type):
    decoded = decode_request(DS016_EXAMPLE, plugin_type)
    assert decoded.op == MAIN_OP[plugin_type]
    assert decoded.payload == PAYLOAD_TYPES[decoded.op]()
    env = decoded.envelope
    assert env.prompt == "Verify that constraint X is satisfiable."
    assert [c.title for c in env.context] == [
        "sess-abc123::turn-003::unit-000",
        "src-001::chunk-000::unit-000",
    ]
    assert env.context[1].text == "Role: Constraint\nClaim: a + b must equal c."
    assert (env.protocolVersion, env.op, env.llm, env.id) == (1, None, None, None)
    assert env.budget == Budget(llmCalls=0, deadlineMs=15000)
    assert env.paths == Paths(artifacts=None)
    assert (env.requestId, env.frameId, env.sessionId) == ("", "", "")


def test_empty_context_list_is_valid():
    assert decode_request(b'{"prompt": "hi", "context": []}', "gs-plugin").envelope.context == []


def test_without_op_and_without_type_the_op_is_required():
    with pytest.raises(RequestError) as err:
        decode_request(DS016_EXAMPLE)
    assert err.value.code == "SCHEMA_VIOLATION"
    assert "op" in str(err.value)


@pytest.mark.parametrize("plugin_type", PLUGIN_TYPES)
def test_explicit_op_wins_over_the_type_default(plugin_type):
    for op in OPS_BY_TYPE[plugin_type]:
        body = json.dumps({"op": op, "prompt": "p", "context": []})
        decoded = decode_request(body, plugin_type)
        assert decoded.op == op
        assert isinstance(decoded.payload, PAYLOAD_TYPES[op])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("payload", ["{}", "null"])
def test_empty_or_null_payload_gives_the_payload_defaults(op, payload):
    decoded = decode_request(f'{{"op": "{op}", "prompt": "p", "context": [], "payload": {payload}}}')
    assert decoded.payload == PAYLOAD_TYPES[op]()


def test_payload_defaults_are_the_documented_ones():
    p = decode_request(b'{"op": "retrieve", "prompt": "p", "context": []}').payload
    assert (p.intents, p.units, p.kbId, p.purpose, p.maxUnits, p.phase) == (
        [],
        [],
        None,
        "task-evidence",
        8,
        "gs-plugin",
    )
    d = decode_request(b'{"op": "detectSeeds", "prompt": "p", "context": []}').payload
    assert (d.mode, d.maxIntents, d.parentIntent) == ("turn", 8, None)
    s = decode_request(b'{"op": "solve", "prompt": "p", "context": []}').payload
    assert (s.intent, s.evidence, s.allowDecompose) == (None, [], True)


def test_unknown_fields_are_ignored_at_every_level():
    body = {
        "prompt": "p",
        "context": [{"title": "t", "text": "x", "extra": 1}],
        "novelty": {"a": 1},
        "budget": {"deadlineMs": 500, "tokens": 9},
        "payload": {"maxUnits": 3, "future": True},
    }
    decoded = decode_request(json.dumps(body), "kb-plugin")
    assert decoded.payload.maxUnits == 3
    assert decoded.envelope.budget.deadlineMs == 500


def test_payload_is_typed_by_op():
    body = {
        "op": "retrieve",
        "prompt": "p",
        "context": [],
        "payload": {
            "intents": [{"index": 2, "act": "define", "intent": "what is WAL", "output": "a definition"}]
        },
    }
    payload = decode_request(json.dumps(body)).payload
    assert isinstance(payload, RetrievePayload)
    assert payload.intents[0].act == "define"
    assert payload.intents[0].ref == "intent-2"


@pytest.mark.parametrize("op", OPS)
def test_example_requests_round_trip(op):
    example = EXAMPLE_REQUESTS[op]
    for body in (encode_request(example), example_request_json(op)):
        decoded = decode_request(body)
        assert decoded.op == op
        assert decoded.payload == example.payload
        assert decoded.envelope.prompt == example.prompt
        assert decoded.envelope.context == example.context
        assert decoded.envelope.budget == example.budget
        assert decoded.envelope.llm == example.llm


def test_example_request_json_spells_out_version_and_op_first():
    obj = json.loads(example_request_json("solve"))
    assert list(obj)[:2] == ["protocolVersion", "op"]
    assert (obj["protocolVersion"], obj["op"]) == (1, "solve")


@pytest.mark.parametrize("plugin_type", PLUGIN_TYPES)
@pytest.mark.parametrize("name", list(INVALID_REQUESTS))
def test_each_invalid_request_raises_request_error_with_its_code(name, plugin_type):
    with pytest.raises(RequestError) as err:
        decode_request(INVALID_REQUESTS[name], plugin_type)
    assert err.value.code == INVALID_REQUEST_CODES[name]
    assert str(err.value)


def test_schema_violation_message_names_the_path():
    with pytest.raises(RequestError) as err:
        decode_request(INVALID_REQUESTS["context-item-wrong-type"], "gs-plugin")
    assert "$.context[0]" in str(err.value)
    with pytest.raises(RequestError) as err:
        decode_request(INVALID_REQUESTS["payload-field-wrong-type"], "kb-plugin")
    assert "payload of retrieve" in str(err.value)


# --------------------------------------------------------------------------- context items <-> units


@pytest.mark.parametrize("unit", KB_UNITS, ids=lambda u: u.role)
def test_unit_to_context_item_and_back_keeps_the_readable_fields(unit: KnowledgeUnit):
    item = unit_to_context_item(unit)
    assert item.title == unit.id
    assert item.sourceLink == unit.sourceName
    assert item.text.startswith(f"Role: {unit.role}\nTopic: {unit.topic}\n")
    back = context_item_to_unit(item)
    assert (back.id, back.role, back.topic, back.claim, back.procedure) == (
        unit.id,
        unit.role,
        unit.topic,
        unit.claim,
        unit.procedure,
    )
    assert back.sourceName == unit.sourceName


def test_multi_line_procedure_survives_flattening():
    back = context_item_to_unit(unit_to_context_item(UNIT_PROCEDURE))
    assert back.procedure == UNIT_PROCEDURE.procedure
    assert back.procedure.count("\n") == 2


def test_context_item_source_falls_back_to_source_id():
    unit = msgspec.structs.replace(KB_UNITS[0], sourceName=None)
    assert unit_to_context_item(unit).sourceLink == unit.sourceId


def test_ds016_item_without_topic_reads_as_a_unit():
    item = ContextItem(
        title="src-001::chunk-000::unit-000",
        sourceLink="rules.md",
        text="Role: Constraint\nClaim: a + b must equal c.",
    )
    unit = context_item_to_unit(item)
    assert (unit.role, unit.claim, unit.sourceId, unit.chunkId) == (
        "Constraint",
        "a + b must equal c.",
        "rules.md",
        "rules.md::chunk-000",
    )
    assert unit.topic == "src-001::chunk-000::unit-000"  # no Topic: the title stands in
    assert unit.kuType == "atomic"


def test_free_text_item_becomes_a_description_claim():
    unit = context_item_to_unit(ContextItem(text="WAL is fast.\nReaders never block."), index=4)
    assert (unit.role, unit.claim) == ("Description", "WAL is fast. Readers never block.")
    assert unit.id == "context::chunk-000::unit-004"
    assert unit.sourceId == "context"


def test_unknown_role_falls_back_to_description():
    unit = context_item_to_unit(ContextItem(title="x", text="Role: Poem\nTopic: t\nClaim: roses"))
    assert (unit.role, unit.claim) == ("Description", "roses")


def test_procedure_role_reads_procedure_body():
    unit = context_item_to_unit(
        ContextItem(title="x", text="Role: Procedure\nTopic: t\nProcedure: 1. a\n2. b")
    )
    assert (unit.claim, unit.procedure) == (None, "1. a\n2. b")


def test_unit_text_format():
    assert unit_text(KB_UNITS[0]) == f"Role: Definition\nTopic: WAL mode\nClaim: {KB_UNITS[0].claim}"
