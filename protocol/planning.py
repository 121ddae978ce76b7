"""What a planner reads and answers to (SPEC.md §5, DS003/DS027): the plugin descriptors and the kernel's
statistics it plans from, and the payloads of its two ops, buildPlan and recordOutcome. protocol/envelope.py
re-exports every name, so a plugin reads the whole request envelope from one module."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from .document import IntentGroup, KnowledgeUnit
from .vocab import Act, Depth

PlanPhase = Literal["pre-seed", "post-seed"]
OutcomeStatus = Literal["success", "weak", "failed"]


class Pins(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Plugin choices by stage: explicit pins or session preferences."""

    planner: str | None = None
    sd: str | None = None
    kb: str | None = None
    gs: str | None = None
    val: str | None = None


class PlannerHints(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How a planner should weigh a plugin (required in sd, kb and gs manifests)."""

    expectedLatencyMs: Annotated[int, Meta(ge=0, description="Typical time of one call (ms).")]
    expectedLLMCalls: Annotated[int, Meta(ge=0, description="Typical LLM calls of one call.")]
    relativeCost: Annotated[float, Meta(ge=0, le=1, description="0 (cheapest) .. 1 (most expensive)")]
    supportedActs: Annotated[list[Act], Meta(description="The intent acts it serves well.")]
    topicTags: Annotated[list[str], Meta(description="Free topic labels planners may match.")]
    preferredDepth: Annotated[Depth, Meta(description="shallow, medium or deep: where it fits.")]
    fallbackRole: Annotated[str, Meta(description="e.g. primary, secondary, helper.")]
    evidenceStyle: Annotated[list[str], Meta(description="e.g. lexical, extractive, generative.")]
    confidenceWhenMatched: Annotated[
        float, Meta(ge=0, le=1, description="Its confidence when its evidence matches.")
    ]


class Descriptor(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a planner sees of a plugin (DS003): the manifest without its process fields."""

    id: str
    type: str
    name: str = ""
    version: str = "0.0.0"
    description: str = ""
    costClass: str = "moderate"
    usesLLM: bool = False
    maxLLMCalls: int = 0
    modelRoles: list[str] = []
    timeoutMs: int = 15000
    plannerHints: PlannerHints | None = None
    provides: list[str] = []
    accepts: list[str] = []
    ops: list[str] = []
    tags: list[str] = []


class PluginStats(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Kernel-kept per-plugin utility a planner may use (EWMA of success, latency, calls)."""

    pluginId: str
    successRate: float = 0.5
    latencyMs: float = 0.0
    llmCalls: float = 0.0
    sufficiency: float = 0.5
    samples: int = 0


class LearnedStat(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One record the planner has learned (its `## Observation` scores of earlier outcomes, folded by the
    kernel into EWMAs, shared by every node of the store): for `pluginId` on `task` ("" overall, an act, or
    `act/answer type`), in the scope of the turn's KB."""

    pluginId: str
    task: str = ""
    successRate: float = 0.5
    latencyMs: float = 0.0
    llmCalls: float = 0.0
    sufficiency: float = 0.5
    samples: int = 0


class KnowledgeProfile(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """The shape of the knowledge in scope (current turn, session, mounted KB), counted by the kernel from
    unit fields alone (never from claim text): how many atomic units, how many carry a symbolic triple."""

    atomicUnits: int = 0
    symbolicFacts: int = 0


class BuildPlanPayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    phase: PlanPhase = "post-seed"
    intents: list[IntentGroup] = []
    guidance: list[KnowledgeUnit] = []
    descriptors: list[Descriptor] = []
    pins: Pins = Pins()
    preferences: Pins = Pins()
    stats: list[PluginStats] = []
    depth: int = 0
    maxDepth: int = 3
    failures: list[str] = []
    llmCallsLeft: int = 0
    knowledge: KnowledgeProfile = KnowledgeProfile()
    # this planner's learned records of the descriptors' plugins (empty: nothing learned yet)
    learned: list[LearnedStat] = []


class OutcomeAttempt(msgspec.Struct, kw_only=True, omit_defaults=True):
    pluginId: str
    type: str
    op: str
    status: str
    durationMs: float = 0.0
    llmCalls: int = 0
    sufficient: bool | None = None
    intentRef: str | None = None
    frameId: str | None = None
    # A goal solver's answer: the share of its terms found in the units it cites (the kernel measures it).
    support: float | None = None


class RecordOutcomePayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    """DS027 outcome: what happened to the plan, so the planner can learn."""

    requestId: str = ""
    plannerId: str = ""
    status: OutcomeStatus = "success"
    attempts: list[OutcomeAttempt] = []
    durationMs: float = 0.0
    llmCalls: int = 0
    intents: list[IntentGroup] = []
    # A batch (sent only to a planner whose manifest sets outcomeBatch > 1): several outcomes, each as
    # above with its own requestId, the fields above then left empty; every `## Observation` of the
    # reply names its outcome (`Outcome: <requestId>`).
    outcomes: list[RecordOutcomePayload] = []
