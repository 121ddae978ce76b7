"""The request envelope (SPEC.md §5): one JSON object on stdin (one-shot) or per frame (worker).

Only `prompt` and `context` are required. `op` defaults to the plugin type's main op and the payload
defaults to an empty object, so the bare DS016 example `{"prompt": ..., "context": [...]}` works with
any plugin. The payload is decoded in a second step, by the Struct of the op.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .document import IntentGroup, KnowledgeUnit, ResolvedIntent
from .planning import (
    BuildPlanPayload,
    Descriptor,
    KnowledgeProfile,
    LearnedStat,
    OutcomeAttempt,
    OutcomeStatus,
    Pins,
    PlannerHints,
    PlanPhase,
    PluginStats,
    RecordOutcomePayload,
)
from .vocab import MAIN_OP, ROLES, Op, Purpose

# The planner's payloads and descriptors live in planning.py; a plugin imports them from here too.
__all__ = [
    "BuildPlanPayload",
    "Descriptor",
    "KnowledgeProfile",
    "LearnedStat",
    "OutcomeAttempt",
    "OutcomeStatus",
    "Pins",
    "PlanPhase",
    "PlannerHints",
    "PluginStats",
    "RecordOutcomePayload",
]

SeedMode = Literal["turn", "decompose"]
SessionEvent = Literal[
    "session-kus-added",
    "session-kus-committed",
    "session-kus-discarded",
    "session-created",
    "session-deleted",
    "kb-loaded",
    "kb-saved",
    "kb-forked",
]
SessionScope = Literal["current-turn", "session"]


class ContextItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A KU flattened for reading: title = KU id, sourceLink = source name, text = Role/Topic/Claim."""

    title: str = ""
    sourceLink: str = ""
    text: str = ""


class Budget(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """What this call may spend: LLM calls and wall time (ms from receipt)."""

    llmCalls: int = 0
    deadlineMs: int = 15000


class LLMAccess(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The kernel's loopback OpenAI-compatible endpoint and this call's token."""

    baseUrl: str
    apiKey: str
    model: str = ""
    contextTokens: int = 0  # the model's context window in tokens (prompt + completion); 0: not known


class Paths(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Where the plugin may keep private artifacts for the mounted KB."""

    artifacts: str | None = None


# --------------------------------------------------------------------------- payloads, one per op


class DetectSeedsPayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    turnId: str = ""
    mode: SeedMode = "turn"
    parentIntent: IntentGroup | None = None
    history: list[str] = []
    maxIntents: int = 8


class NormalizePayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A source to turn into a KU tree. When `text` is empty the plugin normalizes `prompt`."""

    sourceId: str = ""
    sourceName: str = ""
    sourceType: str = "text"
    text: str = ""
    author: str | None = None
    knowledgeDate: str | None = None
    chunkIndex: int = 0
    charOffset: int = 0
    scope: Literal["kb", "session"] = "kb"
    # Sent only to an sd-plugin whose manifest says `replyForm: msgpack`: it may answer with the compact
    # reply (protocol/cnl_compact.py) instead of CNL.
    replyForm: Literal["cnl", "msgpack"] = "cnl"


class RetrievePayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Intents to resolve; `units` carries current-turn and session KUs inline.

    With no intents the prompt is one intent; with no units the context items are read as units.
    """

    intents: list[IntentGroup] = []
    units: list[KnowledgeUnit] = []
    kbId: str | None = None
    purpose: Purpose = "task-evidence"
    maxUnits: int = 8
    phase: str = "gs-plugin"


class OnSourceTextPayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    kbId: str = ""
    sourceId: str = ""
    sourceName: str = ""
    text: str = ""
    units: list[KnowledgeUnit] = []
    action: Literal["upsert", "remove"] = "upsert"
    # A plugin whose manifest says `handoff: file`: the read-only file holding `text` and `units` (and
    # their analysis) for this call only (protocol/handoff.py); then `text` and `units` are empty.
    unitsFile: str = ""


class OnSessionEventPayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Session units added/committed/discarded by a turn, or a DS026 lifecycle event: session-created,
    session-deleted, kb-loaded (a KB mounted), kb-saved (session units saved as `sourceIds` of `kbId`),
    kb-forked (`kbId` copied from `originKbId`). Lifecycle events carry no units."""

    event: SessionEvent = "session-kus-added"
    scope: SessionScope = "current-turn"
    turnId: str = ""
    units: list[KnowledgeUnit] = []
    kbId: str = ""
    kbName: str = ""
    originKbId: str = ""
    sourceIds: list[str] = []


class SolvePayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One intent and its evidence. With no evidence the context items are read as units."""

    intent: IntentGroup | None = None
    evidence: list[KnowledgeUnit] = []
    guidance: list[KnowledgeUnit] = []
    resolved: ResolvedIntent | None = None
    allowDecompose: bool = True


class ValidatePayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    intent: IntentGroup | None = None
    answer: str = ""
    sources: list[str] = []
    evidence: list[KnowledgeUnit] = []
    guidance: list[KnowledgeUnit] = []


PAYLOAD_TYPES: dict[str, type[msgspec.Struct]] = {
    "detectSeeds": DetectSeedsPayload,
    "normalizePersistentContext": NormalizePayload,
    "buildPlan": BuildPlanPayload,
    "recordOutcome": RecordOutcomePayload,
    "retrieve": RetrievePayload,
    "onSourceText": OnSourceTextPayload,
    "onSessionEvent": OnSessionEventPayload,
    "solve": SolvePayload,
    "validate": ValidatePayload,
}
# Any op's payload Struct, for type checking (None is sent as `{}`). Request.payload stays `Any` on the
# wire type: msgspec decodes a payload only once the op is known (see `decode_request`).
Payload = (
    DetectSeedsPayload
    | NormalizePayload
    | BuildPlanPayload
    | RecordOutcomePayload
    | RetrievePayload
    | OnSourceTextPayload
    | OnSessionEventPayload
    | SolvePayload
    | ValidatePayload
    | None
)


# --------------------------------------------------------------------------- the envelope


class RequestEnvelope(msgspec.Struct, kw_only=True):
    """The request envelope's fields (protocol/SPEC.md §5), the one home of both views below."""

    prompt: str
    context: list[ContextItem]
    protocolVersion: Literal[1] = 1
    op: Op | None = None
    payload: Any = None
    budget: Budget = Budget()
    llm: LLMAccess | None = None
    paths: Paths = Paths()
    requestId: str = ""
    frameId: str = ""
    sessionId: str = ""
    id: str | int | None = None


class Request(RequestEnvelope, kw_only=True, omit_defaults=True):
    """The request as the kernel builds it (payload: any op's payload Struct)."""


class WireRequest(RequestEnvelope, kw_only=True):
    """The request as a plugin decodes it: the payload stays raw until the op is known."""

    payload: msgspec.Raw = msgspec.Raw(b"{}")


class DecodedRequest(msgspec.Struct, kw_only=True):
    """A validated request with its op resolved and payload typed."""

    op: str
    envelope: WireRequest
    payload: Any


# Built on first use: a process decodes one or two ops' payloads (a plugin), or none (the kernel encodes
# requests); building every op's decoder evaluated ~200 annotations in each process's start (~4 ms).
_decoders: dict[str, msgspec.json.Decoder[Any]] = {}
_WIRE = ""  # the key of the envelope's decoder


def _decoder(op: str) -> msgspec.json.Decoder[Any]:
    """The decoder of `op`'s payload (of the envelope for _WIRE); KeyError for an op without a payload type."""
    decoder = _decoders.get(op)
    if decoder is None:
        decoder = _decoders[op] = msgspec.json.Decoder(WireRequest if op == _WIRE else PAYLOAD_TYPES[op])
    return decoder


_encoder = msgspec.json.Encoder()


class RequestError(ValueError):
    """A request that is not valid JSON or breaks the schema (exit 2)."""

    def __init__(self, code: str, message: str):
        self.code = code
        super().__init__(message)


def decode_request(data: bytes | str, plugin_type: str | None = None) -> DecodedRequest:
    """Decode and validate a request; the op defaults to the plugin type's main op."""
    try:
        wire = _decoder(_WIRE).decode(data)
    except msgspec.ValidationError as err:
        raise RequestError("SCHEMA_VIOLATION", f"request: {err}") from None
    except msgspec.DecodeError as err:
        raise RequestError("INVALID_JSON", f"request is not valid JSON: {err}") from None
    op = wire.op or (MAIN_OP.get(plugin_type or "") if plugin_type else None)
    if op is None:
        raise RequestError("SCHEMA_VIOLATION", "request: `op` is required when the plugin type is unknown")
    raw = bytes(wire.payload)
    if raw.strip() == b"null":
        raw = b"{}"
    try:
        payload = _decoder(op).decode(raw)
    except msgspec.ValidationError as err:
        raise RequestError("SCHEMA_VIOLATION", f"payload of {op}: {err}") from None
    return DecodedRequest(op=op, envelope=wire, payload=payload)


def encode_request(request: Request) -> bytes:
    return _encoder.encode(request)


def unit_text(unit: KnowledgeUnit) -> str:
    """The readable `Role/Topic/Claim` text of a context item."""
    body = f"Claim: {unit.claim}" if unit.claim is not None else f"Procedure: {unit.procedure or ''}"
    return f"Role: {unit.role}\nTopic: {unit.topic}\n{body}"


def unit_to_context_item(unit: KnowledgeUnit) -> ContextItem:
    return ContextItem(title=unit.id, sourceLink=unit.sourceName or unit.sourceId, text=unit_text(unit))


def context_item_to_unit(item: ContextItem, index: int = 0) -> KnowledgeUnit:
    """Read a flattened context item back as a unit (for bare DS016 requests)."""
    fields: dict[str, str] = {}
    loose: list[str] = []
    last = ""
    for line in item.text.split("\n"):
        name, sep, value = line.partition(":")
        if sep and name.strip() in ("Role", "Topic", "Claim", "Procedure", "Condition", "Title"):
            last = name.strip().lower()
            fields[last] = value.strip()
        elif last in ("claim", "procedure"):  # a multi-line body (procedure steps) continues
            fields[last] = f"{fields[last]}\n{line.strip()}".strip("\n")
        elif line.strip():
            loose.append(line.strip())
    role = fields.get("role", "Description")
    if role not in ROLES:
        role = "Description"
    body = fields.get("claim") or fields.get("procedure") or " ".join(loose) or item.title
    source = item.sourceLink or "context"
    ident = item.title or f"context::chunk-000::unit-{index:03d}"
    is_proc = role == "Procedure"
    return KnowledgeUnit(
        id=ident,
        sourceId=source,
        chunkId=f"{source}::chunk-000",
        kuType="atomic",
        role=role,
        topic=fields.get("topic") or item.title or body[:60],
        claim=None if is_proc else body,
        procedure=body if is_proc else None,
        title=fields.get("title"),
        condition=fields.get("condition"),
        sourceName=item.sourceLink or None,
    )
