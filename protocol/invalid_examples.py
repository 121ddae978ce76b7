"""Named invalid requests (what `mrpvm plugin check` sends to see a plugin refuse them) and one failing
document per CNL rule (SPEC.md shows them; the tests parse each)."""

from __future__ import annotations

import msgspec

from .vocab import READ_FIELDS

_encoder = msgspec.json.Encoder()

# --------------------------------------------------------------------------- invalid requests

_CTX = [{"title": "t1", "sourceLink": "notes.md", "text": "Role: Description\nTopic: t\nClaim: c."}]


def _json(obj: object) -> bytes:
    return _encoder.encode(obj)


# Payload fields that every op's payload Struct types differently from these values, so this one
# payload is a schema violation whatever op a plugin's type defaults to.
_BAD_PAYLOAD = {
    "maxIntents": "many",
    "text": 7,
    "intents": "all of them",
    "units": "none",
    "intent": 5,
    "event": "party",
}

# Each must make a conforming plugin exit 2 with one line of JSON on stderr (no op: the type's main op).
INVALID_REQUESTS: dict[str, bytes] = {
    "malformed-json": b'{"prompt": "What is WAL?", "context": [',
    "not-an-object": b'["What is WAL?", []]',
    "prompt-not-string": _json({"prompt": 42, "context": _CTX}),
    "prompt-missing": _json({"context": _CTX}),
    "context-missing": _json({"prompt": "What is WAL?"}),
    "context-not-list": _json({"prompt": "What is WAL?", "context": "notes.md"}),
    "context-item-wrong-type": _json({"prompt": "What is WAL?", "context": ["notes.md"]}),
    "context-field-wrong-type": _json({"prompt": "What is WAL?", "context": [{"title": 3, "text": "x"}]}),
    "wrong-protocol-version": _json({"protocolVersion": 2, "prompt": "What is WAL?", "context": _CTX}),
    "unknown-op": _json({"op": "summarize", "prompt": "What is WAL?", "context": _CTX}),
    "payload-not-object": _json({"prompt": "What is WAL?", "context": _CTX, "payload": "retrieve 5"}),
    "payload-field-wrong-type": _json({"prompt": "What is WAL?", "context": _CTX, "payload": _BAD_PAYLOAD}),
    "budget-wrong-type": _json({"prompt": "What is WAL?", "context": _CTX, "budget": {"deadlineMs": "soon"}}),
    "llm-wrong-type": _json(
        {"prompt": "What is WAL?", "context": _CTX, "llm": {"baseUrl": 8080, "apiKey": 1}}
    ),
    "paths-wrong-type": _json({"prompt": "What is WAL?", "context": _CTX, "paths": {"artifacts": 7}}),
    "ids-wrong-type": _json({"prompt": "What is WAL?", "context": _CTX, "requestId": 7, "sessionId": []}),
}

# Which optional request field (a manifest's `reads`) each case is about; None: every plugin must refuse
# it (DS016's contract is `prompt` + `context`, a known op and protocol version 1). A plugin that does not
# read a field may ignore a wrong type there: the conformance check then only warns.
INVALID_REQUEST_FIELD: dict[str, str | None] = {
    name: next((f for f in READ_FIELDS if name.startswith(f + "-")), None) for name in INVALID_REQUESTS
}

# What to change when a plugin does not refuse the case (the conformance check prints it).
INVALID_REQUEST_FIX: dict[str, str] = {
    "malformed-json": "parse stdin as JSON first and refuse what does not parse (code INVALID_JSON)",
    "not-an-object": "refuse a request that is not a JSON object",
    "prompt-not-string": "check that `prompt` is a string",
    "prompt-missing": "check that `prompt` is present",
    "context-missing": "check that `context` is present (it may be [])",
    "context-not-list": "check that `context` is an array",
    "context-item-wrong-type": "check that every `context` item is an object",
    "context-field-wrong-type": "check that `title`, `sourceLink` and `text` of a context item are strings",
    "wrong-protocol-version": "refuse a `protocolVersion` other than 1",
    "unknown-op": "refuse an `op` that is not one of the nine ops (an op of another type: unsupported)",
    "payload-not-object": "check that `payload` is an object or null",
    "payload-field-wrong-type": "check the types of the payload fields of the op (schema/payload/<op>.schema.json)",
    "budget-wrong-type": "check that `budget.llmCalls` and `budget.deadlineMs` are integers",
    "llm-wrong-type": "check that `llm` is null or an object whose `baseUrl`, `apiKey`, `model` are strings",
    "paths-wrong-type": "check that `paths.artifacts` is a string or null",
    "ids-wrong-type": "check that `requestId`, `frameId`, `sessionId` are strings and `id` a string or integer",
}

# The RequestError code `decode_request` gives each case.
INVALID_REQUEST_CODES: dict[str, str] = {
    name: "INVALID_JSON" if name == "malformed-json" else "SCHEMA_VIOLATION" for name in INVALID_REQUESTS
}


# --------------------------------------------------------------------------- one failing document per CNL rule

_HEAD = "## Plugin Result\nStatus: success\nPlugin: kb-fast\nConfidence: high\n"
_UNIT = (
    "## Context Unit src-1::chunk-000::unit-000\n"
    "SourceId: src-1\nChunkId: src-1::chunk-000\nKUType: atomic\nRole: Definition\nTopic: WAL mode\n"
)

# rule -> (op or None, document, the line the issue is reported on). Each document breaks exactly one rule.
RULE_EXAMPLES: dict[str, tuple[str | None, str, int]] = {
    "unknown-section": (None, _HEAD + "\n## Summary\nText: short\n", 6),
    "bad-heading": ("detectSeeds", _HEAD + "\n## Intent Group one\nAct: define\nIntent: x\nOutput: y\n", 6),
    "content-outside-section": (None, "Here is the result.\n" + _HEAD, 1),
    "field-syntax": (None, _HEAD + "Everything went fine\n", 5),
    "unknown-field": (None, _HEAD + "Mood: cheerful\n", 5),
    "duplicate-field": (None, _HEAD + "Status: error\n", 5),
    "required-field": (None, "## Plugin Result\nStatus: error\nResult: crashed\n", 1),
    "enum": (None, "## Plugin Result\nStatus: done\nPlugin: kb-fast\n", 2),
    "integer": (None, _HEAD + "LLMCalls: two\n", 5),
    "number": ("retrieve", _HEAD + "\n" + _UNIT + "Claim: WAL appends to a -wal file.\nScore: high\n", 13),
    "boolean": ("retrieve", _HEAD + "\n## Resolved Intent 1\nSufficient: probably\n", 7),
    "continuation": (None, "## Plugin Result\n  Status: success\nStatus: error\nPlugin: kb-fast\n", 2),
    "result-first": ("solve", "## Answer\nWAL appends to a -wal file.\n\n" + _HEAD, 1),
    "result-missing": (None, "", 1),
    "duplicate-section": (
        "buildPlan",
        _HEAD + "\n## Plan\nKBPluginOrder: kb-fast\n\n## Plan\nDecompose: no\n",
        9,
    ),
    "confidence-required": (None, "## Plugin Result\nStatus: success\nPlugin: kb-fast\nResult: 3 KUs\n", 1),
    "claim-or-procedure": ("retrieve", _HEAD + "\n" + _UNIT, 6),
    "procedure-role": (
        "retrieve",
        _HEAD + "\n" + _UNIT.replace("Role: Definition", "Role: Procedure") + "Claim: Run the pragma.\n",
        6,
    ),
    "triple-all-or-none": (
        "retrieve",
        _HEAD + "\n" + _UNIT + "Claim: WAL uses shared memory.\nSubject: WAL\n",
        6,
    ),
    "confidence-needs-triple": (
        "retrieve",
        _HEAD + "\n" + _UNIT + "Claim: WAL is fast.\nConfidence: 0.8\n",
        13,
    ),
    "confidence-range": (
        "retrieve",
        _HEAD
        + "\n"
        + _UNIT
        + "Claim: WAL uses shared memory.\nSubject: WAL\nRelation: uses\nObject: shared memory\nConfidence: 1.5\n",
        16,
    ),
    "answer-required": ("solve", _HEAD + "\n## Sources\nUsed: src-1::chunk-000::unit-000\n", 1),
    "heading-in-answer": ("solve", _HEAD + "\n## Answer\nUse WAL.\n\n## Why\nReaders never block.\n", 9),
    "observation-range": (
        "recordOutcome",
        _HEAD + "\n## Observation 1\nPlugin: kb-fast\nSuccess: 1.4\n",
        8,
    ),
    "observation-task": (
        "recordOutcome",
        _HEAD + "\n## Observation 1\nPlugin: kb-fast\nTask: everything\nSuccess: 1\n",
        8,
    ),
    "section-not-allowed": (
        "validate",
        "## Plugin Result\nStatus: accepted\nPlugin: val-llm\n\n## Answer\nOK\n",
        5,
    ),
}
