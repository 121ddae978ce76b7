"""Rendering a typed CNL document as Markdown that protocol/cnl.py's `parse_document` reads back unchanged."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .cnl_grammar import (
    INTENT_FIELDS,
    OBSERVATION_FIELDS,
    PLAN_FIELDS,
    RESOLVED_FIELDS,
    RESULT_FIELDS,
    UNIT_FIELDS,
    FieldSpec,
    format_value,
)
from .document import CnlDocument, KnowledgeUnit


def _clean(value: str) -> str:
    if "\r" in value:
        value = value.replace("\r\n", "\n").replace("\r", "\n")
    return value.strip()


def carried_plainly(value: str | None) -> bool:
    """Whether a text value is one the CNL form carries unchanged at a glance: absent, or a non-empty line
    without outer whitespace (False may be wrong: `carried_as_is` then asks `carried_text`)."""
    return value is None or (
        bool(value) and "\n" not in value and "\r" not in value and value == value.strip()
    )


def carried_as_is(value: str | None) -> bool:
    """Whether the CNL form carries a text value as it is (`carried_text` leaves it)."""
    return value is None or carried_plainly(value) or carried_text(value) == value


def carried_text(value: str) -> str | None:
    """A text field's value as the CNL form carries it: what `parse_document` reads back from what
    `_render_fields` writes (CRs as newlines, outer whitespace and the first line's trailing whitespace
    dropped, blank lines empty; None when nothing is left, as an absent field)."""
    text = _clean(value)
    if "\n" in text:
        first, *rest = text.split("\n")
        text = "\n".join([first.rstrip(), *(line if line.strip() else "" for line in rest)])
    return text or None


def _render_fields(out: list[str], fields: Iterable[FieldSpec], obj: Any) -> None:
    for spec in fields:
        value = getattr(obj, spec.attr)
        if value is None or value == "" or value == []:
            if spec.required and spec.kind == "csv":
                out.append(f"{spec.name}:")
            continue
        text = _clean(format_value(spec, value))
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
