"""CNL Markdown: the one parser, validator and renderer both the kernel and plugins use (SPEC.md §6).

Grammar: a document is a sequence of sections. A section starts with a level-2 heading at column 0
(`## Name`) and holds `Field: value` lines; a line indented by two or more spaces continues the
previous field; the first `:` separates name and value. `## Answer` holds free Markdown until the end
or the next known section. The kernel enforces structure only (sections, fields, enums), never meaning.

Every problem is reported as a `CnlIssue` naming the line and the rule broken.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from .cnl_rules import check_observation, check_unit
from .document import (
    CnlDocument,
    IntentGroup,
    KnowledgeUnit,
    Observation,
    Plan,
    PluginResult,
    ResolvedIntent,
)
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


class _FieldSpec:
    __slots__ = ("name", "attr", "kind", "choices", "required")

    def __init__(
        self, name: str, attr: str, kind: str = "text", choices: tuple[str, ...] = (), required=False
    ):
        self.name, self.attr, self.kind, self.choices, self.required = name, attr, kind, choices, required


def _f(name: str, kind: str = "text", choices: tuple[str, ...] = (), required: bool = False) -> _FieldSpec:
    attr = name[0].lower() + name[1:]
    return _FieldSpec(name, attr, kind, choices, required)


_TRUE = {"yes", "true"}
_FALSE = {"no", "false"}


def _convert(spec: _FieldSpec, raw: str) -> tuple[Any, str | None, str | None]:
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


def _format(spec: _FieldSpec, value: Any) -> str:
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
)
OBSERVATION_FIELDS[4].attr = "llmCalls"


class _SectionKind:
    __slots__ = ("name", "fields", "by_name", "key", "required")

    def __init__(self, name: str, fields: tuple[_FieldSpec, ...], key: str = ""):
        self.name, self.fields, self.key = name, fields, key
        self.by_name = {f.name: f for f in fields}
        self.required = tuple(f.attr for f in fields if f.required)


RESULT = _SectionKind("Plugin Result", RESULT_FIELDS)
INTENT = _SectionKind("Intent Group", INTENT_FIELDS, key="number")
UNIT = _SectionKind("Context Unit", UNIT_FIELDS, key="id")
RESOLVED = _SectionKind("Resolved Intent", RESOLVED_FIELDS, key="number")
PLAN = _SectionKind("Plan", PLAN_FIELDS)
ANSWER = _SectionKind("Answer", ())
SOURCES = _SectionKind("Sources", SOURCES_FIELDS)
OBSERVATION = _SectionKind("Observation", OBSERVATION_FIELDS, key="number")
SECTION_KINDS = (RESULT, INTENT, UNIT, RESOLVED, PLAN, ANSWER, SOURCES, OBSERVATION)

# Which sections may follow the result block, per op (None: any op, e.g. a foreign tool's own use).
SECTIONS_BY_OP: dict[str, tuple[_SectionKind, ...]] = {
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


def _classify(heading: str) -> tuple[_SectionKind | None, str, str | None]:
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
        if rest and not any(c.isspace() for c in rest):
            return UNIT, rest, None
        return UNIT, "", "'Context Unit' must be followed by one id without spaces"
    return None, "", None


# --------------------------------------------------------------------------- parsing


class _Section:
    __slots__ = ("kind", "key", "line", "values", "lines", "order", "text")

    def __init__(self, kind: _SectionKind, key: str, line: int):
        self.kind, self.key, self.line = kind, key, line
        self.values: dict[str, list[str]] = {}
        self.lines: dict[str, int] = {}
        self.order: list[str] = []
        self.text: list[str] = []


class IssueLog(list[CnlIssue]):
    """The issues kept (at most MAX_ISSUES) and `found`, how many were reported in all.

    The count, not the list, says whether something went wrong: past the cap the list stops growing,
    and a check that compared lengths would take a faulty section for a sound one.
    """

    found = 0

    def report(self, line: int, rule: str, message: str) -> None:
        self.found += 1
        if len(self) < MAX_ISSUES:
            self.append(CnlIssue(line, rule, message))


def parse_sections(text: str) -> tuple[list[_Section], IssueLog]:
    """Split a document into raw sections; syntax problems become issues, never exceptions."""
    issues = IssueLog()
    report = issues.report
    sections: list[_Section] = []
    current: _Section | None = None
    last_field: str | None = None
    in_answer = False
    orphan = False  # inside an unknown or bad section, or stray text already reported: stay quiet

    if "\r" in text:  # a CR before each LF (or at the very end) is part of the line break
        text = text.replace("\r\n", "\n")
        if text.endswith("\r"):
            text = text[:-1]
    by_name: dict[str, _FieldSpec] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("## "):
            heading = line[3:].strip()
            kind, key, problem = _classify(heading)
            if in_answer and kind is None:
                report(
                    number,
                    "heading-in-answer",
                    f"level-2 heading '{heading}' inside Answer; use ### or lower",
                )
                current.text.append(line)  # type: ignore[union-attr]
                continue
            in_answer = False
            last_field = None
            if kind is None or problem:
                if kind is None:
                    report(number, "unknown-section", f"unknown section '{heading}'")
                else:
                    report(number, "bad-heading", problem or "")
                current = None
                orphan = True
                continue
            orphan = False
            current = _Section(kind, key, number)
            by_name = kind.by_name
            sections.append(current)
            in_answer = kind is ANSWER
            continue
        if in_answer:
            current.text.append(line)  # type: ignore[union-attr]
            continue
        if not line:
            continue
        first = line[0]
        if first == " " or first == "\t" or first.isspace():
            if not line.strip() and not line.startswith("  "):
                continue
            if line.startswith("  ") or first == "\t":
                if current is None or last_field is None:
                    if line.strip() and not orphan:
                        report(number, "continuation", "indented line continues no field")
                    continue
                current.values[last_field].append(line[2:] if line.startswith("  ") else line[1:])
                continue
        if current is None:
            if not orphan:
                report(
                    number, "content-outside-section", "text outside any section (sections start with '## ')"
                )
                orphan = True
            continue
        colon = line.find(":")
        name = line[:colon] if colon > 0 else ""
        spec = by_name.get(name)  # every known field name is alphanumeric and starts with a letter
        if spec is None:
            if not name or not name.isalnum() or not name[0].isalpha():
                report(number, "field-syntax", f"expected 'Field: value', got {line[:40]!r}")
            else:
                report(number, "unknown-field", f"unknown field '{name}' in section '{current.kind.name}'")
            last_field = None
            continue
        values = current.values
        if name in values:
            report(number, "duplicate-field", f"field '{name}' given twice in section '{current.kind.name}'")
            last_field = None
            continue
        values[name] = [line[colon + 1 :].strip()]
        current.lines[name] = number
        current.order.append(name)
        last_field = name
    return sections, issues


def _typed_fields(section: _Section, report: Callable[[int, str, str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kind = section.kind
    by_name = kind.by_name
    for name, parts in section.values.items():
        spec = by_name[name]
        raw = parts[0] if len(parts) == 1 else "\n".join(parts).strip()  # a first part is stored stripped
        if not raw:
            if spec.required:
                report(section.lines[name], "required-field", f"field '{name}' must not be empty")
            continue
        if spec.kind == "text":
            out[spec.attr] = raw
            continue
        if len(parts) > 1:
            raw = " ".join(p.strip() for p in parts).strip()
        value, rule, message = _convert(spec, raw)
        if rule:
            report(section.lines[name], rule, message or "")
            continue
        out[spec.attr] = value
    for spec in kind.fields:
        if spec.required and spec.name not in section.values:
            report(section.line, "required-field", f"section '{kind.name}' needs field '{spec.name}'")
    return out


class _Bail(Exception):
    """The fast path met something unusual; the full parser takes over."""


def _bail(line: int, rule: str, message: str) -> None:
    raise _Bail


class _AnyLine(dict):
    def __missing__(self, key: str) -> int:
        return 0


class _Nowhere:
    """What `_check_unit` reads of a section besides its fields: line numbers, only used when reporting."""

    line = 0
    lines = _AnyLine()


_NOWHERE = _Nowhere()


def _parse_fast(text: str, op: str | None) -> CnlDocument | None:
    """One cheap pass for the common case: a well-formed document with non-empty fields, values that
    continue on indented lines included (sd's source units: code blocks, procedures).

    Fields are typed as they are read. Returns None on anything else (CRs, empty values, stray lines,
    any rule broken); the full parser then locates every problem. When it returns a document, it is the
    one the full parser builds (tests/protocol/test_cnl_fastpath.py checks this property on generated
    documents).
    """
    if "\r" in text or not text.startswith("## "):
        return None
    allowed = SECTIONS_BY_OP.get(op) if op else None
    sections: list[tuple[_SectionKind, str, Any]] = []  # (kind, key, typed fields or answer lines)
    seen: set[tuple[_SectionKind, str]] = set()
    fields: dict[str, Any] = {}
    by_name: dict[str, _FieldSpec] = {}
    answer: list[str] | None = None
    parts: list[str] | None = None  # the field being read: its first value and continuation lines
    spec: _FieldSpec | None = None
    for line in text.split("\n"):
        if line[:3] == "## ":
            if parts is not None:
                if not _settle(fields, spec, parts):
                    return None
                parts = None
            kind, key, problem = _classify(line[3:].strip())
            if kind is None or problem or (kind, key) in seen:
                return None
            if kind is not RESULT and (not sections or (allowed is not None and kind not in allowed)):
                return None
            seen.add((kind, key))
            if kind is ANSWER:
                answer = []
                sections.append((kind, key, answer))
            else:
                answer = None
                fields, by_name = {}, kind.by_name
                sections.append((kind, key, fields))
        elif answer is not None:
            answer.append(line)
        elif line:
            first = line[0]
            if first == " " or first == "\t" or first.isspace():  # as parse_sections reads them
                two = line[:2] == "  "
                if not two and not line.strip():
                    continue
                if parts is None or not (two or first == "\t"):
                    return None
                parts.append(line[2:] if two else line[1:])
                continue
            if parts is not None and not _settle(fields, spec, parts):
                return None
            name, sep, value = line.partition(":")
            spec = by_name.get(name)
            if spec is None or spec.attr in fields:
                return None
            parts = [value.strip()]
    if parts is not None and not _settle(fields, spec, parts):
        return None
    result: PluginResult | None = None
    intents: list[IntentGroup] = []
    units: list[KnowledgeUnit] = []
    resolved: list[ResolvedIntent] = []
    plan: Plan | None = None
    answer_text: str | None = None
    sources: list[str] | None = None
    observations: list[Observation] = []
    try:
        for kind, key, content in sections:
            if kind is ANSWER:
                answer_text = "\n".join(content).strip("\n")
                continue
            for attr in kind.required:
                if attr not in content:
                    return None
            if kind is RESULT:
                if content.get("status") == "success" and "confidence" not in content:
                    return None
                result = PluginResult(**content)
            elif kind is UNIT:
                check_unit(_NOWHERE, content, _bail)
                units.append(KnowledgeUnit(id=key, **content))
            elif kind is INTENT:
                intents.append(IntentGroup(index=int(key), **content))
            elif kind is RESOLVED:
                resolved.append(ResolvedIntent(index=int(key), **content))
            elif kind is PLAN:
                plan = Plan(**content)
            elif kind is SOURCES:
                sources = content.get("used", [])
            elif kind is OBSERVATION:
                check_observation(_NOWHERE, content, _bail)
                observations.append(Observation(index=int(key), **content))
    except _Bail:
        return None
    if result is None or _answer_missing(op, result.status, answer_text):
        return None
    return CnlDocument(
        result=result,
        intents=intents,
        units=units,
        resolved=resolved,
        plan=plan,
        answer=answer_text,
        sources=sources,
        observations=observations,
    )


def _settle(fields: dict[str, Any], spec: _FieldSpec | None, parts: list[str]) -> bool:
    """Type a field read by the fast path (`_typed_fields`' rules); False: the full parser decides."""
    if spec is None:
        return False
    raw = parts[0] if len(parts) == 1 else "\n".join(parts).strip()
    if not raw:
        return False
    if spec.kind == "text":
        fields[spec.attr] = raw
        return True
    if len(parts) > 1:
        raw = " ".join(p.strip() for p in parts).strip()
    typed, rule, _ = _convert(spec, raw)
    if rule:
        return False
    fields[spec.attr] = typed
    return True


def _answer_missing(op: str | None, status: str, answer: str | None) -> bool:
    """A solve success must carry an answer: the kernel has nothing to give the user otherwise."""
    return op == "solve" and status == "success" and not (answer or "").strip()


def parse_document(text: str, op: str | None = None) -> CnlDocument:
    """Parse and validate a whole plugin output; raises CnlError listing every located problem.

    Whatever the input, nothing but CnlError escapes: a value that is not a string, or a fault of this
    parser that the property tests (tests/protocol/test_cnl_fuzz.py) have not found, becomes an `internal` issue.
    """
    try:
        if not isinstance(text, str):
            raise CnlError([CnlIssue(1, "not-text", f"a CNL document is text, not {type(text).__name__}")])
        fast = _parse_fast(text, op)
        if fast is not None:
            return fast
        return _parse_full(text, op)
    except CnlError:
        raise
    except Exception as err:  # noqa: BLE001 - the one promise of this function: CnlError or a document
        raise CnlError([CnlIssue(1, "internal", f"the parser failed on this input: {err!r:.200}")]) from err


def _parse_full(text: str, op: str | None) -> CnlDocument:
    """The full parser: locates every problem (up to MAX_ISSUES of them)."""
    sections, issues = parse_sections(text)
    report = issues.report

    if not sections:
        if not issues:
            report(1, "result-missing", "empty document: output must begin with '## Plugin Result'")
        raise CnlError(issues)
    if sections[0].kind is not RESULT:
        report(sections[0].line, "result-first", "the first section must be '## Plugin Result'")
    allowed = SECTIONS_BY_OP.get(op) if op else None
    result: PluginResult | None = None
    intents: list[IntentGroup] = []
    units: list[KnowledgeUnit] = []
    resolved: list[ResolvedIntent] = []
    plan: Plan | None = None
    answer: str | None = None
    sources: list[str] | None = None
    observations: list[Observation] = []
    seen_keys: set[tuple[str, str]] = set()
    for section in sections:
        kind = section.kind
        ident = (kind.name, section.key)
        if ident in seen_keys:
            label = f"{kind.name} {section.key}".strip()
            report(section.line, "duplicate-section", f"section '{label}' appears twice")
            continue
        seen_keys.add(ident)
        if kind is not RESULT and allowed is not None and kind not in allowed:
            report(section.line, "section-not-allowed", f"section '{kind.name}' is not part of a {op} output")
            continue
        if kind is ANSWER:
            answer = "\n".join(section.text).strip("\n")
            continue
        before = issues.found
        fields = _typed_fields(section, report)
        if kind is UNIT:
            check_unit(section, fields, report)
        elif kind is OBSERVATION:
            check_observation(section, fields, report)
        if issues.found != before:
            continue
        if kind is RESULT:
            if fields.get("status") == "success" and "confidence" not in fields:
                report(section.line, "confidence-required", "Confidence is required when Status is success")
                continue
            result = PluginResult(**fields)
        elif kind is INTENT:
            intents.append(IntentGroup(index=int(section.key), **fields))
        elif kind is UNIT:
            units.append(KnowledgeUnit(id=section.key, **fields))
        elif kind is RESOLVED:
            resolved.append(ResolvedIntent(index=int(section.key), **fields))
        elif kind is PLAN:
            plan = Plan(**fields)
        elif kind is SOURCES:
            sources = fields.get("used", [])
        elif kind is OBSERVATION:
            observations.append(Observation(index=int(section.key), **fields))
    if result is None and not issues.found:  # defensive: a missing or bad result block is reported above
        report(1, "result-missing", "output must begin with a valid '## Plugin Result'")
    if result is not None and _answer_missing(op, result.status, answer):
        report(
            sections[0].line,
            "answer-required",
            "a solve answer with Status: success needs a non-empty '## Answer' section "
            "(no answer to give: answer Status: no-context or insufficient)",
        )
    if issues.found:
        raise CnlError(sorted(issues, key=lambda issue: issue.line), issues.found)
    assert result is not None
    return CnlDocument(
        result=result,
        intents=intents,
        units=units,
        resolved=resolved,
        plan=plan,
        answer=answer,
        sources=sources,
        observations=observations,
    )


def validate_document(text: str, op: str | None = None) -> list[CnlIssue]:
    """Every problem in a document, or an empty list."""
    try:
        parse_document(text, op)
    except CnlError as err:
        return err.issues
    return []


# --------------------------------------------------------------------------- rendering


def _clean(value: str) -> str:
    if "\r" in value:
        value = value.replace("\r\n", "\n").replace("\r", "\n")
    return value.strip()


def _render_fields(out: list[str], fields: Iterable[_FieldSpec], obj: Any) -> None:
    for spec in fields:
        value = getattr(obj, spec.attr)
        if value is None or value == "" or value == []:
            if spec.required and spec.kind == "csv":
                out.append(f"{spec.name}:")
            continue
        text = _clean(_format(spec, value))
        if "\n" in text:
            first, *rest = text.split("\n")
            out.append(f"{spec.name}: {first}".rstrip())
            out.extend(f"  {line}" if line.strip() else "  " for line in rest)
        else:
            out.append(f"{spec.name}: {text}")


def _demote_headings(markdown: str) -> str:
    lines = _clean(markdown).split("\n")
    return "\n".join("#" + line if line.startswith("## ") or line == "##" else line for line in lines)


def render_unit(unit: KnowledgeUnit, out: list[str]) -> None:
    out.append(f"## Context Unit {unit.id}")
    _render_fields(out, UNIT_FIELDS, unit)
    out.append("")


def render_document(doc: CnlDocument) -> str:
    """Render a typed document as CNL Markdown that `parse_document` reads back unchanged."""
    out: list[str] = ["## Plugin Result"]
    _render_fields(out, RESULT_FIELDS, doc.result)
    out.append("")
    for intent in doc.intents:
        out.append(f"## Intent Group {intent.index}")
        _render_fields(out, INTENT_FIELDS, intent)
        out.append("")
    for item in doc.resolved:
        out.append(f"## Resolved Intent {item.index}")
        _render_fields(out, RESOLVED_FIELDS, item)
        out.append("")
    if doc.plan is not None:
        out.append("## Plan")
        _render_fields(out, PLAN_FIELDS, doc.plan)
        out.append("")
    for unit in doc.units:
        render_unit(unit, out)
    if doc.answer is not None:
        out.append("## Answer")
        out.append(_demote_headings(doc.answer))
        out.append("")
    if doc.sources is not None:
        out.append("## Sources")
        out.append(f"Used: {', '.join(doc.sources)}".rstrip())
        out.append("")
    for seen in doc.observations:
        out.append(f"## Observation {seen.index}")
        _render_fields(out, OBSERVATION_FIELDS, seen)
        out.append("")
    return "\n".join(out)
