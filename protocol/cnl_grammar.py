"""The CNL grammar's vocabulary (SPEC.md §6): its issues and error, every section kind and its fields,
how a field's raw text becomes a typed value and back, and which sections each op may answer.

protocol/cnl.py parses with it and protocol/cnl_render.py renders with it; protocol/schema_gen.py
derives the JSON Schemas from it.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from .vocab import (
    ACTS,
    ANSWER_TYPES,
    CONFIDENCE_WORDS,
    KU_TYPES,
    PHASE_SCOPES,
    PURPOSES,
    RELATIONS,
    ROLES,
    STATUSES,
)


class CnlIssue(msgspec.Struct, frozen=True):
    """One validation problem: where, which rule, what is wrong."""

    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: [{self.rule}] {self.message}"


class CnlError(ValueError):
    """A document that breaks the grammar; `issues` lists every problem found (capped)."""

    def __init__(self, issues: list[CnlIssue], total: int | None = None):
        self.issues = issues
        self.total = max(total or 0, len(issues))  # problems found; past MAX_ISSUES only the first are listed
        head = "; ".join(str(i) for i in issues[:3])
        more = f" (+{self.total - 3} more)" if self.total > 3 else ""
        super().__init__(f"invalid CNL: {head}{more}")


MAX_ISSUES = 50
MAX_INT = (1 << 63) - 1  # integers must survive JSON encoding (msgspec: 64-bit)


# --------------------------------------------------------------------------- field kinds


class FieldSpec:
    __slots__ = ("name", "attr", "kind", "choices", "required")

    def __init__(
        self, name: str, attr: str, kind: str = "text", choices: tuple[str, ...] = (), required=False
    ):
        self.name, self.attr, self.kind, self.choices, self.required = name, attr, kind, choices, required


def _f(name: str, kind: str = "text", choices: tuple[str, ...] = (), required: bool = False) -> FieldSpec:
    attr = name[0].lower() + name[1:]
    return FieldSpec(name, attr, kind, choices, required)


_TRUE = {"yes", "true"}
_FALSE = {"no", "false"}


def convert_value(spec: FieldSpec, raw: str) -> tuple[Any, str | None, str | None]:
    """Turn a raw value into its typed form; returns (value, rule, message) with rule set on failure."""
    kind = spec.kind
    if kind == "text":
        return raw, None, None
    if kind == "enum":
        if raw in spec.choices:
            return raw, None, None
        return None, "enum", f"{spec.name} '{raw}' is not one of: {', '.join(spec.choices)}"
    if kind in ("csv", "csv-enum"):
        items = [p.strip() for p in raw.split(",")]
        items = [p for p in items if p]
        if kind == "csv-enum":
            bad = [p for p in items if p not in spec.choices]
            if bad:
                return (
                    None,
                    "enum",
                    f"{spec.name} value(s) {', '.join(bad)} not in: {', '.join(spec.choices)}",
                )
        return items, None, None
    if kind == "int":
        try:
            value = int(raw)
        except ValueError:
            return None, "integer", f"{spec.name} '{raw}' is not an integer"
        if value < 0:
            return None, "integer", f"{spec.name} must not be negative"
        if value > MAX_INT:
            return None, "integer", f"{spec.name} must not exceed {MAX_INT}"
        return value, None, None
    if kind == "float":
        try:
            number = float(raw)
        except ValueError:
            return None, "number", f"{spec.name} '{raw}' is not a number"
        if not math.isfinite(number):
            return None, "number", f"{spec.name} must be finite"
        return number, None, None
    if kind == "bool":
        low = raw.lower()
        if low in _TRUE:
            return True, None, None
        if low in _FALSE:
            return False, None, None
        return None, "boolean", f"{spec.name} '{raw}' must be yes/no or true/false"
    if kind == "confidence":
        if raw in CONFIDENCE_WORDS:
            return raw, None, None
        try:
            number = float(raw)
        except ValueError:
            number = -1.0
        if 0.0 <= number <= 1.0:
            return raw, None, None
        return None, "enum", f"Confidence '{raw}' must be high, medium, low or a number in [0,1]"
    raise AssertionError(kind)


def format_value(spec: FieldSpec, value: Any) -> str:
    kind = spec.kind
    if kind in ("csv", "csv-enum"):
        return ", ".join(value)
    if kind == "bool":
        return "yes" if value else "no"
    if kind == "float":
        return repr(float(value))
    return str(value)


# --------------------------------------------------------------------------- section kinds

RESULT_FIELDS = (
    _f("Status", "enum", STATUSES, required=True),
    _f("Plugin", required=True),
    _f("Confidence", "confidence"),
    _f("Result"),
    _f("Evidence"),
    _f("LLMCalls", "int"),
    _f("Request"),
    _f("Code"),
    _f("Notes"),
)
RESULT_FIELDS[5].attr = "llmCalls"

INTENT_FIELDS = (
    _f("Act", "enum", ACTS, required=True),
    _f("Intent", required=True),
    _f("Context"),
    _f("Criterion"),
    _f("Evidence"),
    _f("Output", required=True),
    _f("AnswerType", "enum", ANSWER_TYPES),
)

UNIT_FIELDS = (
    _f("SourceId", required=True),
    _f("ChunkId", required=True),
    _f("KUType", "enum", KU_TYPES, required=True),
    _f("Role", "enum", ROLES, required=True),
    _f("Topic", required=True),
    _f("Claim"),
    _f("Procedure"),
    _f("Title"),
    _f("Condition"),
    _f("Subject"),
    _f("Relation", "enum", RELATIONS),
    _f("Object"),
    _f("Confidence", "float"),
    _f("UtilityActs", "csv-enum", ACTS),
    _f("PhaseScopes", "csv-enum", PHASE_SCOPES),
    _f("UtilityNote"),
    _f("Hash"),
    _f("SourceName"),
    _f("SourceType"),
    _f("Author"),
    _f("IngestedAt"),
    _f("KnowledgeDate"),
    _f("ChunkIndex", "int"),
    _f("UnitIndex", "int"),
    _f("UnitType"),
    _f("TextBody"),
    _f("ParentUnitIds", "csv"),
    _f("ChildUnitIds", "csv"),
    _f("DerivedFromUnitIds", "csv"),
    _f("CharStart", "int"),
    _f("CharEnd", "int"),
    _f("CreatedAt"),
    _f("ChunkType"),
    _f("SectionTitle"),
    _f("Score", "float"),
    _f("ResolvedFor", "csv"),
)
UNIT_FIELDS[2].attr = "kuType"

RESOLVED_FIELDS = (
    _f("Sufficient", "bool", required=True),
    _f("Purpose", "enum", PURPOSES),
    _f("KULevelsUsed", "csv-enum", KU_TYPES),
    _f("TotalKUsConsidered", "int"),
    _f("Selected", "csv"),
    _f("Guidance", "csv"),
    _f("Notes"),
    _f("TermWeights"),
    _f("TermVariants"),
)
RESOLVED_FIELDS[2].attr = "kuLevelsUsed"
RESOLVED_FIELDS[3].attr = "totalKUsConsidered"

PLAN_FIELDS = (
    _f("SeedDetectorOrder", "csv"),
    _f("KBPluginOrder", "csv"),
    _f("GoalSolverOrder", "csv"),
    _f("ValidatorOrder", "csv"),
    _f("Decompose", "bool"),
    _f("FramePurpose"),
    _f("Notes"),
)
PLAN_FIELDS[1].attr = "kbPluginOrder"

SOURCES_FIELDS = (_f("Used", "csv"),)

OBSERVATION_FIELDS = (
    _f("Plugin", required=True),
    _f("Task"),
    _f("Success", "float", required=True),
    _f("LatencyMs", "float"),
    _f("LLMCalls", "float"),
    _f("Sufficiency", "float"),
    _f("Alpha", "float"),
    _f("Outcome"),
)
OBSERVATION_FIELDS[4].attr = "llmCalls"


class SectionKind:
    __slots__ = ("name", "fields", "by_name", "key", "required")

    def __init__(self, name: str, fields: tuple[FieldSpec, ...], key: str = ""):
        self.name, self.fields, self.key = name, fields, key
        self.by_name = {f.name: f for f in fields}
        self.required = tuple(f.attr for f in fields if f.required)


RESULT = SectionKind("Plugin Result", RESULT_FIELDS)
INTENT = SectionKind("Intent Group", INTENT_FIELDS, key="number")
UNIT = SectionKind("Context Unit", UNIT_FIELDS, key="id")
RESOLVED = SectionKind("Resolved Intent", RESOLVED_FIELDS, key="number")
PLAN = SectionKind("Plan", PLAN_FIELDS)
ANSWER = SectionKind("Answer", ())
SOURCES = SectionKind("Sources", SOURCES_FIELDS)
OBSERVATION = SectionKind("Observation", OBSERVATION_FIELDS, key="number")
SECTION_KINDS = (RESULT, INTENT, UNIT, RESOLVED, PLAN, ANSWER, SOURCES, OBSERVATION)

# Which sections may follow the result block, per op (None: any op, e.g. a foreign tool's own use).
SECTIONS_BY_OP: dict[str, tuple[SectionKind, ...]] = {
    "detectSeeds": (INTENT, UNIT),
    "normalizePersistentContext": (UNIT,),
    "buildPlan": (PLAN,),
    "retrieve": (RESOLVED, UNIT),
    "solve": (ANSWER, SOURCES),
    "validate": (),
    "onSourceText": (),
    "onSessionEvent": (),
    "recordOutcome": (OBSERVATION,),
}


def classify_heading(heading: str) -> tuple[SectionKind | None, str, str | None]:
    """Map a heading text to (kind, key, problem)."""
    if heading in ("Plugin Result", "Plan", "Answer", "Sources"):
        return (
            {"Plugin Result": RESULT, "Plan": PLAN, "Answer": ANSWER, "Sources": SOURCES}[heading],
            "",
            None,
        )
    for kind in (INTENT, RESOLVED, OBSERVATION):
        if heading.startswith(kind.name):
            rest = heading[len(kind.name) :].strip()
            if rest.isascii() and rest.isdigit() and len(rest) <= 9 and int(rest) >= 1:
                return kind, str(int(rest)), None
            return kind, "", f"'{kind.name}' must be followed by a number >= 1"
    if heading.startswith("Context Unit"):
        rest = heading[len("Context Unit") :].strip()
        if rest.split() == [rest]:  # one id, no whitespace in it (split's whitespace is str.isspace's)
            return UNIT, rest, None
        return UNIT, "", "'Context Unit' must be followed by one id without spaces"
    return None, "", None


def answer_missing(op: str | None, status: str, answer: str | None) -> bool:
    """A solve success must carry an answer: the kernel has nothing to give the user otherwise."""
    return op == "solve" and status == "success" and not (answer or "").strip()
