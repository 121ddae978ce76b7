"""One complete, realistic request and one valid response per op, plus named invalid requests.

These are the examples SPEC.md shows (generated into it by `schema_gen --spec`), the requests the
conformance check (`mrpvm plugin check`) sends, and fixtures for tests. The running example is a
small knowledge base about SQLite's write-ahead log; every response parses with `parse_document`.
"""

from __future__ import annotations

import msgspec

from .document import (
    CnlDocument,
    IntentGroup,
    KnowledgeUnit,
    Observation,
    Plan,
    PluginResult,
    ResolvedIntent,
)
from .envelope import (
    Budget,
    BuildPlanPayload,
    Descriptor,
    DetectSeedsPayload,
    LearnedStat,
    LLMAccess,
    NormalizePayload,
    OnSessionEventPayload,
    OnSourceTextPayload,
    OutcomeAttempt,
    Paths,
    Pins,
    PlannerHints,
    PluginStats,
    RecordOutcomePayload,
    Request,
    RetrievePayload,
    SolvePayload,
    ValidatePayload,
    unit_to_context_item,
)
from .vocab import OPS, READ_FIELDS

# --------------------------------------------------------------------------- shared fixtures

SOURCE_ID = "src-sqlite-wal"
SOURCE_NAME = "sqlite-wal.md"
SOURCE_TEXT = (
    "# Write-ahead logging\n\n"
    "WAL mode appends changes to a separate -wal file instead of overwriting the database file.\n"
    "Readers do not block writers and a writer does not block readers.\n\n"
    "## Enabling WAL\n\n"
    "Run PRAGMA journal_mode=WAL; once per database. The setting is persistent.\n"
    "WAL does not work over a network filesystem, because all processes must share memory.\n"
)

UNIT_DEFINITION = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-000::unit-000",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-000",
    kuType="atomic",
    role="Definition",
    topic="WAL mode",
    claim="WAL mode appends changes to a separate -wal file instead of overwriting the database file.",
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=0,
    unitIndex=0,
    charStart=23,
    charEnd=114,
    parentUnitIds=[f"{SOURCE_ID}::section-000"],
)
UNIT_CONCURRENCY = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-000::unit-001",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-000",
    kuType="atomic",
    role="Explanation",
    topic="WAL concurrency",
    claim="Readers do not block writers and a writer does not block readers.",
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=0,
    unitIndex=1,
    charStart=115,
    charEnd=181,
    parentUnitIds=[f"{SOURCE_ID}::section-000"],
)
UNIT_PROCEDURE = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-001::unit-000",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-001",
    kuType="atomic",
    role="Procedure",
    topic="enabling WAL",
    title="Enable WAL",
    procedure=(
        "1. Open the database with the sqlite3 shell.\n"
        "2. Run PRAGMA journal_mode=WAL;\n"
        "3. Check that the pragma answers 'wal'; the setting persists."
    ),
    utilityActs=["implement", "recommend"],
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=1,
    unitIndex=0,
    parentUnitIds=[f"{SOURCE_ID}::section-001"],
)
UNIT_CONSTRAINT = KnowledgeUnit(
    id=f"{SOURCE_ID}::chunk-001::unit-001",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-001",
    kuType="atomic",
    role="Constraint",
    topic="WAL on network filesystems",
    claim="WAL does not work over a network filesystem, because all processes must share memory.",
    condition="the database file lives on NFS or SMB",
    subject="WAL mode",
    relation="depends_on",
    object="shared memory",
    confidence=0.9,
    phaseScopes=["kb-plugin", "gs-plugin", "val-plugin"],
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    chunkIndex=1,
    unitIndex=1,
    parentUnitIds=[f"{SOURCE_ID}::section-001"],
)
KB_UNITS = [UNIT_DEFINITION, UNIT_CONCURRENCY, UNIT_PROCEDURE, UNIT_CONSTRAINT]

SESSION_UNIT = KnowledgeUnit(
    id="session::turn-003::unit-000",
    sourceId="session",
    chunkId="session::turn-003",
    kuType="atomic",
    role="Constraint",
    topic="deployment",
    claim="The application's database sits on an NFS share mounted by three web servers.",
    phaseScopes=["kb-plugin", "gs-plugin"],
    sourceName="Current-Turn Context",
    sourceType="session",
    createdAt="2024-05-14T09:12:03Z",
)

PROMPT = (
    "Our database sits on an NFS share mounted by three web servers. "
    "Should we switch SQLite to WAL mode, and how do we enable it?"
)

INTENT_RECOMMEND = IntentGroup(
    index=1,
    act="recommend",
    intent="Decide whether to switch SQLite to WAL mode for a database on an NFS share",
    context="three web servers share the database over NFS",
    criterion="the recommendation names the constraint that decides it",
    output="a yes/no recommendation with the reason",
)
INTENT_IMPLEMENT = IntentGroup(
    index=2,
    act="implement",
    intent="Enable WAL mode on a SQLite database",
    output="the steps to enable WAL mode",
)

DESCRIPTORS = [
    Descriptor(
        id="kb-fast",
        type="kb-plugin",
        name="Fast lexical retriever",
        version="0.1.0",
        description="Lexical-first retrieval with a small result budget. Cheapest path for focused questions.",
        costClass="cheap",
        plannerHints=PlannerHints(
            expectedLatencyMs=5,
            expectedLLMCalls=0,
            relativeCost=0.1,
            supportedActs=["define", "identify", "evaluate", "describe", "verify"],
            topicTags=["focused", "factual"],
            preferredDepth="shallow",
            fallbackRole="primary",
            evidenceStyle=["lexical"],
            confidenceWhenMatched=0.6,
        ),
        ops=["retrieve", "onSourceText", "onSessionEvent"],
    ),
    Descriptor(
        id="gs-symbolic",
        type="gs-plugin",
        name="Symbolic goal solver",
        version="0.1.0",
        description="Extractive answers from the selected units, no LLM. Says no-context when evidence is thin.",
        costClass="cheap",
        plannerHints=PlannerHints(
            expectedLatencyMs=3,
            expectedLLMCalls=0,
            relativeCost=0.1,
            supportedActs=["define", "identify", "describe", "implement"],
            topicTags=["extractive"],
            preferredDepth="shallow",
            fallbackRole="primary",
            evidenceStyle=["extractive"],
            confidenceWhenMatched=0.7,
        ),
        ops=["solve"],
    ),
]

ANSWER_MARKDOWN = (
    "No: keep the rollback journal. WAL mode needs every process to share memory with the database, "
    "and an NFS share mounted by three servers cannot give that.\n"
    "\n"
    "### If the database moves to local disk\n"
    "\n"
    "1. Open the database with the sqlite3 shell.\n"
    "2. Run `PRAGMA journal_mode=WAL;`\n"
    "3. Check that the pragma answers `wal`; the setting persists.\n"
    "\n"
    "Readers then no longer block the writer, and the writer no longer blocks readers."
)


def _context(*units: KnowledgeUnit):
    return [unit_to_context_item(u) for u in units]


# --------------------------------------------------------------------------- requests

EXAMPLE_REQUESTS: dict[str, Request] = {
    "detectSeeds": Request(
        op="detectSeeds",
        prompt=PROMPT,
        context=_context(UNIT_DEFINITION),
        payload=DetectSeedsPayload(
            turnId="turn-003",
            history=["How do I make concurrent reads faster in SQLite?"],
            maxIntents=4,
        ),
        budget=Budget(llmCalls=0, deadlineMs=2000),
        requestId="req-7f3a",
        frameId="frame-0",
        sessionId="sess-abc123",
    ),
    "normalizePersistentContext": Request(
        op="normalizePersistentContext",
        prompt=f"Normalize source {SOURCE_NAME} into knowledge units.",
        context=[],
        payload=NormalizePayload(
            sourceId=SOURCE_ID,
            sourceName=SOURCE_NAME,
            sourceType="markdown",
            text=SOURCE_TEXT,
            author="docs team",
            knowledgeDate="2024-03-01",
        ),
        budget=Budget(llmCalls=0, deadlineMs=30000),
        requestId="ingest-0042",
    ),
    "buildPlan": Request(
        op="buildPlan",
        prompt=PROMPT,
        context=_context(SESSION_UNIT),
        payload=BuildPlanPayload(
            phase="post-seed",
            intents=[INTENT_RECOMMEND, INTENT_IMPLEMENT],
            descriptors=DESCRIPTORS,
            pins=Pins(gs="gs-symbolic"),
            stats=[PluginStats(pluginId="kb-fast", successRate=0.82, latencyMs=4.1, samples=37)],
            learned=[
                LearnedStat(pluginId="kb-fast", successRate=0.74, latencyMs=4.6, sufficiency=0.7, samples=41),
                LearnedStat(
                    pluginId="kb-fast",
                    task="recommend",
                    successRate=0.58,
                    latencyMs=5.2,
                    sufficiency=0.45,
                    samples=6,
                ),
                LearnedStat(pluginId="gs-symbolic", successRate=0.66, latencyMs=2.9, samples=39),
            ],
            maxDepth=3,
            llmCallsLeft=2,
        ),
        budget=Budget(llmCalls=0, deadlineMs=1000),
        requestId="req-7f3a",
        frameId="frame-0",
        sessionId="sess-abc123",
    ),
    "recordOutcome": Request(
        op="recordOutcome",
        prompt=PROMPT,
        context=[],
        payload=RecordOutcomePayload(
            requestId="req-7f3a",
            plannerId="planner-default",
            status="success",
            attempts=[
                OutcomeAttempt(
                    pluginId="kb-fast",
                    type="kb-plugin",
                    op="retrieve",
                    status="success",
                    durationMs=4.3,
                    sufficient=True,
                    intentRef="intent-1",
                    frameId="frame-0",
                ),
                OutcomeAttempt(
                    pluginId="gs-symbolic",
                    type="gs-plugin",
                    op="solve",
                    status="success",
                    durationMs=2.8,
                    intentRef="intent-1",
                    frameId="frame-0",
                    support=0.92,
                ),
            ],
            durationMs=31.5,
            intents=[INTENT_RECOMMEND],
        ),
        budget=Budget(llmCalls=0, deadlineMs=1000),
        requestId="req-7f3a",
        sessionId="sess-abc123",
    ),
    "retrieve": Request(
        op="retrieve",
        prompt=PROMPT,
        context=_context(SESSION_UNIT),
        payload=RetrievePayload(
            intents=[INTENT_RECOMMEND, INTENT_IMPLEMENT],
            units=[SESSION_UNIT],
            kbId="kb-sqlite",
            purpose="task-evidence",
            maxUnits=6,
        ),
        budget=Budget(llmCalls=0, deadlineMs=3000),
        paths=Paths(artifacts="data/kb/kb-sqlite/artifacts/kb-fast"),
        requestId="req-7f3a",
        frameId="frame-0",
        sessionId="sess-abc123",
    ),
    "onSourceText": Request(
        op="onSourceText",
        prompt=f"Index source {SOURCE_NAME}.",
        context=[],
        payload=OnSourceTextPayload(
            kbId="kb-sqlite",
            sourceId=SOURCE_ID,
            sourceName=SOURCE_NAME,
            text=SOURCE_TEXT,
            units=KB_UNITS,
        ),
        budget=Budget(llmCalls=0, deadlineMs=60000),
        paths=Paths(artifacts="data/kb/kb-sqlite/artifacts/kb-fast"),
        requestId="ingest-0042",
    ),
    "onSessionEvent": Request(
        op="onSessionEvent",
        prompt="Session units added for turn-003.",
        context=_context(SESSION_UNIT),
        payload=OnSessionEventPayload(
            event="session-kus-added",
            scope="current-turn",
            turnId="turn-003",
            units=[SESSION_UNIT],
        ),
        budget=Budget(llmCalls=0, deadlineMs=1000),
        paths=Paths(artifacts="data/kb/kb-sqlite/artifacts/kb-fast"),
        requestId="req-7f3a",
        sessionId="sess-abc123",
    ),
    "solve": Request(
        op="solve",
        prompt=INTENT_RECOMMEND.intent,
        context=_context(SESSION_UNIT, UNIT_CONSTRAINT, UNIT_PROCEDURE, UNIT_CONCURRENCY),
        payload=SolvePayload(
            intent=INTENT_RECOMMEND,
            evidence=[SESSION_UNIT, UNIT_CONSTRAINT, UNIT_PROCEDURE, UNIT_CONCURRENCY],
            resolved=ResolvedIntent(
                index=1,
                sufficient=True,
                kuLevelsUsed=["atomic"],
                totalKUsConsidered=5,
                selected=[SESSION_UNIT.id, UNIT_CONSTRAINT.id, UNIT_PROCEDURE.id, UNIT_CONCURRENCY.id],
            ),
        ),
        budget=Budget(llmCalls=1, deadlineMs=15000),
        llm=LLMAccess(baseUrl="http://127.0.0.1:47113/v1", apiKey="call-5c2e9d", model="solver-fast"),
        requestId="req-7f3a",
        frameId="frame-0",
        sessionId="sess-abc123",
    ),
    "validate": Request(
        op="validate",
        prompt=INTENT_RECOMMEND.intent,
        context=_context(SESSION_UNIT, UNIT_CONSTRAINT),
        payload=ValidatePayload(
            intent=INTENT_RECOMMEND,
            answer=ANSWER_MARKDOWN,
            sources=[UNIT_CONSTRAINT.id, UNIT_PROCEDURE.id],
            evidence=[SESSION_UNIT, UNIT_CONSTRAINT, UNIT_PROCEDURE],
        ),
        budget=Budget(llmCalls=1, deadlineMs=15000),
        llm=LLMAccess(baseUrl="http://127.0.0.1:47113/v1", apiKey="call-91ab0f", model="validator"),
        requestId="req-7f3a",
        frameId="frame-0",
        sessionId="sess-abc123",
    ),
}


# --------------------------------------------------------------------------- responses


def _result(plugin: str, status: str = "success", confidence: str | None = "high", **kw) -> PluginResult:
    return PluginResult(status=status, plugin=plugin, confidence=confidence, **kw)


_SECTION_UNIT = KnowledgeUnit(
    id=f"{SOURCE_ID}::section-001",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-001",
    kuType="composite",
    role="Procedure",
    topic="enabling WAL",
    title="Enabling WAL",
    procedure="Run PRAGMA journal_mode=WAL; once per database.\nWAL needs shared memory, so not on NFS.",
    sectionTitle="Enabling WAL",
    parentUnitIds=[f"{SOURCE_ID}::source-summary"],
    childUnitIds=[UNIT_PROCEDURE.id, UNIT_CONSTRAINT.id],
    derivedFromUnitIds=[UNIT_PROCEDURE.id, UNIT_CONSTRAINT.id],
    sourceName=SOURCE_NAME,
)
_SUMMARY_UNIT = KnowledgeUnit(
    id=f"{SOURCE_ID}::source-summary",
    sourceId=SOURCE_ID,
    chunkId=f"{SOURCE_ID}::chunk-000",
    kuType="aggregate",
    role="Description",
    topic="SQLite write-ahead logging",
    claim="What WAL mode is, how it changes locking, how to enable it, and why it fails on network filesystems.",
    utilityNote="start here for overview questions about WAL",
    childUnitIds=[f"{SOURCE_ID}::section-000", f"{SOURCE_ID}::section-001"],
    sourceName=SOURCE_NAME,
    sourceType="markdown",
    author="docs team",
    knowledgeDate="2024-03-01",
    hash="sha256:5d41402abc4b2a76",
)

EXAMPLE_RESPONSES: dict[str, CnlDocument] = {
    "detectSeeds": CnlDocument(
        result=_result(
            "sd-symbolic",
            result="2 intents, 1 current-turn unit",
            evidence="question split at ', and'; deployment statement kept as a Constraint",
        ),
        intents=[INTENT_RECOMMEND, INTENT_IMPLEMENT],
        units=[SESSION_UNIT],
    ),
    "normalizePersistentContext": CnlDocument(
        result=_result("sd-symbolic", result="1 source summary, 1 section, 2 atomic units"),
        units=[_SUMMARY_UNIT, _SECTION_UNIT, UNIT_PROCEDURE, UNIT_CONSTRAINT],
    ),
    "buildPlan": CnlDocument(
        result=_result("planner-default", confidence="medium", result="cheap-first plan for 2 intents"),
        plan=Plan(
            seedDetectorOrder=["sd-symbolic", "sd-llm-fast"],
            kbPluginOrder=["kb-fast", "kb-balanced"],
            goalSolverOrder=["gs-symbolic", "gs-llm-fast"],
            validatorOrder=["val-llm"],
            decompose=False,
            framePurpose="answer both intents from the mounted KB",
            notes="gs-symbolic pinned by the session",
        ),
    ),
    "recordOutcome": CnlDocument(
        result=_result("planner-default", result="cheap-first: 4 observations of 2 plugins"),
        observations=[
            Observation(index=1, plugin="kb-fast", success=1.0, latencyMs=4.3, sufficiency=1.0),
            Observation(
                index=2, plugin="kb-fast", task="recommend", success=1.0, latencyMs=4.3, sufficiency=1.0
            ),
            Observation(index=3, plugin="gs-symbolic", success=0.71, latencyMs=2.8),
            Observation(index=4, plugin="gs-symbolic", task="recommend", success=0.71, latencyMs=2.8),
        ],
    ),
    "retrieve": CnlDocument(
        result=_result(
            "kb-fast",
            result="3 KUs selected for 2 intents",
            evidence="bm25 top score 11.2; roles Constraint, Procedure",
        ),
        resolved=[
            ResolvedIntent(
                index=1,
                sufficient=True,
                purpose="task-evidence",
                kuLevelsUsed=["atomic"],
                totalKUsConsidered=5,
                selected=[SESSION_UNIT.id, UNIT_CONSTRAINT.id],
            ),
            ResolvedIntent(
                index=2,
                sufficient=True,
                kuLevelsUsed=["atomic"],
                totalKUsConsidered=5,
                selected=[UNIT_PROCEDURE.id],
            ),
        ],
        units=[
            msgspec.structs.replace(SESSION_UNIT, score=6.4, resolvedFor=["intent-1"]),
            msgspec.structs.replace(UNIT_CONSTRAINT, score=11.2, resolvedFor=["intent-1"]),
            msgspec.structs.replace(UNIT_PROCEDURE, score=9.75, resolvedFor=["intent-2"]),
        ],
    ),
    "onSourceText": CnlDocument(
        result=_result("kb-fast", result=f"indexed 4 units of {SOURCE_ID}"),
    ),
    "onSessionEvent": CnlDocument(
        result=_result("kb-fast", status="skipped", confidence=None, result="kb-fast keeps no session index"),
    ),
    "solve": CnlDocument(
        result=_result(
            "gs-llm-fast",
            result="recommendation against WAL on NFS, with steps for local disk",
            evidence="2 constraint units agree",
            llmCalls=1,
        ),
        answer=ANSWER_MARKDOWN,
        sources=[SESSION_UNIT.id, UNIT_CONSTRAINT.id, UNIT_PROCEDURE.id],
    ),
    "validate": CnlDocument(
        result=_result(
            "val-llm",
            status="accepted",
            result="The answer follows the NFS constraint and cites it; the steps match the procedure unit.",
            llmCalls=1,
        ),
    ),
}

assert set(EXAMPLE_REQUESTS) == set(OPS) == set(EXAMPLE_RESPONSES)

_encoder = msgspec.json.Encoder()


def example_request_json(op: str) -> bytes:
    """The op's example request as compact JSON, with `protocolVersion` and `op` spelled out first."""
    body = msgspec.to_builtins(EXAMPLE_REQUESTS[op])
    ordered = {
        "protocolVersion": 1,
        "op": op,
        **{k: v for k, v in body.items() if k not in ("protocolVersion", "op")},
    }
    return _encoder.encode(ordered)


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
