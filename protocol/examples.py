"""One complete, realistic request and one valid response per op (the named invalid requests and the failing
document per CNL rule are in invalid_examples.py; the running example's units in example_fixtures.py).

These are the examples SPEC.md shows (generated into it by `schema_gen --spec`), the requests the
conformance check (`mrpvm plugin check`) sends, and fixtures for tests. The running example is a
small knowledge base about SQLite's write-ahead log; every response parses with `parse_document`.
"""

from __future__ import annotations

import msgspec

from .document import (
    CnlDocument,
    KnowledgeUnit,
    Observation,
    Plan,
    PluginResult,
    ResolvedIntent,
)
from .envelope import (
    Budget,
    BuildPlanPayload,
    DetectSeedsPayload,
    LearnedStat,
    LLMAccess,
    NormalizePayload,
    OnSessionEventPayload,
    OnSourceTextPayload,
    OutcomeAttempt,
    Paths,
    Pins,
    PluginStats,
    RecordOutcomePayload,
    Request,
    RetrievePayload,
    SolvePayload,
    ValidatePayload,
)
from .example_fixtures import (
    ANSWER_MARKDOWN,
    DESCRIPTORS,
    INTENT_IMPLEMENT,
    INTENT_RECOMMEND,
    KB_UNITS,
    PROMPT,
    SESSION_UNIT,
    SOURCE_ID,
    SOURCE_NAME,
    SOURCE_TEXT,
    UNIT_CONCURRENCY,
    UNIT_CONSTRAINT,
    UNIT_DEFINITION,
    UNIT_PROCEDURE,
    context_of,
)
from .vocab import OPS

# --------------------------------------------------------------------------- requests

EXAMPLE_REQUESTS: dict[str, Request] = {
    "detectSeeds": Request(
        op="detectSeeds",
        prompt=PROMPT,
        context=context_of(UNIT_DEFINITION),
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
        context=context_of(SESSION_UNIT),
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
        context=context_of(SESSION_UNIT),
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
        context=context_of(SESSION_UNIT),
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
        context=context_of(SESSION_UNIT, UNIT_CONSTRAINT, UNIT_PROCEDURE, UNIT_CONCURRENCY),
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
        context=context_of(SESSION_UNIT, UNIT_CONSTRAINT),
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
