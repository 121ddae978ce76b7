"""CNL Markdown: the one parser and validator both the kernel and plugins use (SPEC.md §6), and the public
face of CNL (the grammar's vocabulary is protocol/cnl_grammar.py, rendering protocol/cnl_render.py, the
parser's fast path protocol/cnl_fastpath.py).

Grammar: a document is a sequence of sections. A section starts with a level-2 heading at column 0
(`## Name`) and holds `Field: value` lines; a line indented by two or more spaces continues the
previous field; the first `:` separates name and value. `## Answer` holds free Markdown until the end
or the next known section. The kernel enforces structure only (sections, fields, enums), never meaning.

Every problem is reported as a `CnlIssue` naming the line and the rule broken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# `_parse_fast` and `_Bail` keep their names here: the shared red-team fuzzer (rt_cnlfuzz.py) compares the
# fast path with the full parser through this module
from .cnl_fastpath import _Bail  # noqa: F401
from .cnl_fastpath import parse_fast as _parse_fast
from .cnl_grammar import (
    ANSWER,
    INTENT,
    MAX_ISSUES,
    OBSERVATION,
    PLAN,
    RESOLVED,
    RESULT,
    SECTIONS_BY_OP,
    SOURCES,
    UNIT,
    CnlError,
    CnlIssue,
    FieldSpec,
    SectionKind,
    answer_missing,
    classify_heading,
    convert_value,
)
from .cnl_render import render_document
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

# The public face of CNL: parse, validate, render, and the error they raise.
__all__ = [
    "MAX_ISSUES",
    "CnlError",
    "CnlIssue",
    "IssueLog",
    "parse_document",
    "parse_sections",
    "render_document",
    "validate_document",
]


# --------------------------------------------------------------------------- parsing


class _Section:
    __slots__ = ("kind", "key", "line", "values", "lines", "order", "text")

    def __init__(self, kind: SectionKind, key: str, line: int):
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
    by_name: dict[str, FieldSpec] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("## "):
            heading = line[3:].strip()
            kind, key, problem = classify_heading(heading)
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
        value, rule, message = convert_value(spec, raw)
        if rule:
            report(section.lines[name], rule, message or "")
            continue
        out[spec.attr] = value
    for spec in kind.fields:
        if spec.required and spec.name not in section.values:
            report(section.line, "required-field", f"section '{kind.name}' needs field '{spec.name}'")
    return out


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
    if result is not None and answer_missing(op, result.status, answer):
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
