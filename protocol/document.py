"""Typed forms of the CNL sections (SPEC.md §6.3). The same Structs travel inside request payloads.

Field names are camelCase on the wire (JSON) and PascalCase in CNL; `cnl.py` maps between them.
"""

from __future__ import annotations

import msgspec

from .variants import parse_term_variants
from .vocab import ACTS_FOR_ROLE


class PluginResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The result block every output begins with."""

    status: str
    plugin: str
    confidence: str | None = None
    result: str = ""
    evidence: str = ""
    llmCalls: int = 0
    request: str | None = None
    code: str | None = None
    notes: str = ""


def intent_ref(index: int) -> str:
    """How other sections name an intent (a unit's ResolvedFor, a frame's intentRef): `intent-N`."""
    return f"intent-{index}"


class IntentGroup(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One intent (DS004): a question or task of the turn."""

    index: int = 1
    act: str
    intent: str
    output: str
    context: str = ""
    criterion: str = ""
    evidence: str = ""
    answerType: str = ""  # one of vocab.ANSWER_TYPES, or "" when not set

    @property
    def ref(self) -> str:
        return intent_ref(self.index)


class KnowledgeUnit(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A Knowledge Unit (DS005 + DS030) at any level of the hierarchy."""

    id: str
    sourceId: str
    chunkId: str
    kuType: str
    role: str
    topic: str
    claim: str | None = None
    procedure: str | None = None
    title: str | None = None
    condition: str | None = None
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    confidence: float | None = None
    utilityActs: list[str] = []
    phaseScopes: list[str] = []
    utilityNote: str | None = None
    hash: str | None = None
    sourceName: str | None = None
    sourceType: str | None = None
    author: str | None = None
    ingestedAt: str | None = None
    knowledgeDate: str | None = None
    chunkIndex: int | None = None
    unitIndex: int | None = None
    unitType: str | None = None
    textBody: str | None = None
    parentUnitIds: list[str] = []
    childUnitIds: list[str] = []
    derivedFromUnitIds: list[str] = []
    charStart: int | None = None
    charEnd: int | None = None
    createdAt: str | None = None
    chunkType: str | None = None
    sectionTitle: str | None = None
    score: float | None = None
    resolvedFor: list[str] = []

    @property
    def body(self) -> str:
        """The unit's statement: its claim, or its procedure steps."""
        return self.claim if self.claim is not None else (self.procedure or "")

    @property
    def heading(self) -> str:
        """The heading the unit stands under: the last part of its SectionTitle ("I/O > Exit Codes")."""
        return (self.sectionTitle or "").rsplit(" > ", 1)[-1].strip()

    def position(self, fallback: int) -> int:
        """Where the unit sits in its source, to read units in source order whatever order they arrive in:
        its first character, else its chunk and unit index, else `fallback`."""
        if self.charStart is not None:
            return self.charStart
        if self.unitIndex is not None:
            return (self.chunkIndex or 0) * 100_000 + self.unitIndex
        return fallback

    @property
    def acts(self) -> list[str]:
        """UtilityActs, derived from the role when absent."""
        return self.utilityActs or list(ACTS_FOR_ROLE.get(self.role, ()))

    @property
    def scopes(self) -> list[str]:
        """PhaseScopes, defaulting to kb-plugin."""
        return self.phaseScopes or ["kb-plugin"]


def format_term_weights(weights: dict[str, float]) -> str:
    """`TermWeights` text: "term=weight" pairs joined by "; " (terms as the analyser spells them)."""
    return "; ".join(f"{t}={w:.3f}" for t, w in weights.items() if t and "=" not in t and ";" not in t)


def parse_term_weights(text: str) -> dict[str, float]:
    """The pairs of a `TermWeights` text; malformed pairs are skipped."""
    out: dict[str, float] = {}
    for pair in text.split(";"):
        term, sep, value = pair.strip().rpartition("=")
        if sep and term:
            try:
                out[term] = float(value)
            except ValueError:
                continue
    return out


class ResolvedIntent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a kb-plugin found for one intent."""

    index: int = 1
    sufficient: bool
    purpose: str = "task-evidence"
    kuLevelsUsed: list[str] = []
    totalKUsConsidered: int = 0
    selected: list[str] = []
    guidance: list[str] = []
    notes: str = ""
    # the query terms' weight in the whole collection the plugin searched ("tar=0.31; abbrevi=4.2"; 0: no
    # unit holds the term): a solver that sees only the selected units can still tell a common word from
    # a rare one, and a word the collection never uses from one the selected units lack
    termWeights: str = ""
    # query terms the collection never holds, read as its own spelling of them ("licenc=licens": asked of
    # documents that write "license"; protocol/variants.py): the weights above are of the held spelling
    termVariants: str = ""

    @property
    def term_weights(self) -> dict[str, float]:
        return parse_term_weights(self.termWeights)

    @property
    def term_variants(self) -> dict[str, str]:
        return parse_term_variants(self.termVariants)

    @property
    def ref(self) -> str:
        return intent_ref(self.index)


class Plan(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A planner's ordering of the plugins of each stage."""

    seedDetectorOrder: list[str] = []
    kbPluginOrder: list[str] = []
    goalSolverOrder: list[str] = []
    validatorOrder: list[str] = []
    decompose: bool = False
    framePurpose: str = ""
    notes: str = ""


class Observation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a planner learned from one attempt of an outcome (`recordOutcome`'s `## Observation N`): the
    planner scores the attempt (its policy); the kernel folds the scores into the planner's shared records
    for `plugin` and `task` as exponentially weighted moving averages with weight `alpha`, and hands the
    records back in every `buildPlan` (`learned`), on every node sharing the store."""

    index: int
    plugin: str
    task: str = ""  # "" (the plugin's overall record), an act, or `act/answer type`: the planner's choice
    success: float = 0.5  # in [0, 1]
    latencyMs: float = 0.0
    llmCalls: float = 0.0
    sufficiency: float | None = None  # in [0, 1]; None leaves the record's sufficiency as it is
    alpha: float = 0.3  # the EWMA weight of this sample, in (0, 1]
    outcome: str = ""  # the requestId of its outcome: required in a batch's reply, else that request's or ""


class CnlDocument(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A whole plugin output: the result block and the op's sections, in order of kind."""

    result: PluginResult
    intents: list[IntentGroup] = []
    units: list[KnowledgeUnit] = []
    resolved: list[ResolvedIntent] = []
    plan: Plan | None = None
    answer: str | None = None
    sources: list[str] | None = None
    observations: list[Observation] = []
