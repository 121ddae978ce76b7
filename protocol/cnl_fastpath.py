"""The CNL parser's fast path: one cheap pass over a well-formed document (protocol/cnl.py's
`parse_document` tries it first; on anything unusual it returns None and the full parser decides)."""

from __future__ import annotations

import functools
import math
from typing import Any

from .cnl_grammar import (
    ANSWER,
    INTENT,
    OBSERVATION,
    PLAN,
    RESOLVED,
    RESULT,
    SECTIONS_BY_OP,
    SOURCES,
    UNIT,
    FieldSpec,
    SectionKind,
    answer_missing,
    classify_heading,
    convert_value,
)
from .cnl_rules import NOWHERE, check_observation, check_unit
from .document import (
    CnlDocument,
    IntentGroup,
    KnowledgeUnit,
    Observation,
    Plan,
    PluginResult,
    ResolvedIntent,
)


class _Bail(Exception):
    """The fast path met something unusual; the full parser takes over."""


def _bail(line: int, rule: str, message: str) -> None:
    raise _Bail


def parse_fast(text: str, op: str | None) -> CnlDocument | None:
    """One cheap pass for the common case: a well-formed document, empty optional fields and values that
    continue on indented lines included (sd's source units: code blocks, procedures).

    Fields are typed as they are read. Returns None on anything else (CRs, empty required fields, stray lines,
    any rule broken); the full parser then locates every problem. When it returns a document, it is the
    one the full parser builds (tests/protocol/test_cnl_fastpath.py checks this property on generated
    documents). A unit section whose text was read before (kb-plugins send the same units turn after
    turn) is typed from `_UNITS` instead of line by line.
    """
    if "\r" in text or not text.startswith("## "):
        return None
    allowed = SECTIONS_BY_OP.get(op) if op else None
    # (kind, key, typed fields or answer lines, the unit's text when read line by line)
    sections: list[tuple[SectionKind, str, Any, str | None]] = []
    seen: set[tuple[SectionKind, str]] = set()
    for chunk in text[3:].split("\n## "):  # a line starting with "## " is a heading, wherever it is
        heading, _, body = chunk.partition("\n")
        kind, key, problem = _classified(heading.strip())
        if kind is None or problem or (kind, key) in seen:
            return None
        if kind is not RESULT and (not sections or (allowed is not None and kind not in allowed)):
            return None
        seen.add((kind, key))
        if kind is ANSWER:
            sections.append((kind, key, body.split("\n"), None))
            continue
        if kind is UNIT:
            known = _UNITS.get(body)
            if known is not None:
                sections.append((kind, key, _copied(known), None))
                continue
        fields = _fields(body, kind.by_name)
        if fields is None:
            return None
        sections.append((kind, key, fields, body if kind is UNIT else None))
    result: PluginResult | None = None
    intents: list[IntentGroup] = []
    units: list[KnowledgeUnit] = []
    resolved: list[ResolvedIntent] = []
    plan: Plan | None = None
    answer_text: str | None = None
    sources: list[str] | None = None
    observations: list[Observation] = []
    try:
        for kind, key, content, unit_text in sections:
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
                if unit_text is not None:  # read line by line: check it, then remember it
                    check_unit(NOWHERE, content, _bail)
                    _remember(unit_text, content)
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
                check_observation(NOWHERE, content, _bail)
                observations.append(Observation(index=int(key), **content))
    except _Bail:
        return None
    if result is None or answer_missing(op, result.status, answer_text):
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


# classify_heading, remembered: a turn's headings are mostly last turn's (units' ids pass through)
_remembered_heading = functools.lru_cache(maxsize=4096)(classify_heading)


def _classified(heading: str) -> tuple[SectionKind | None, str, str | None]:
    """`classify_heading`; a short heading's answer remembered (a plugin's long ones never pile up)."""
    return _remembered_heading(heading) if len(heading) <= 256 else classify_heading(heading)


_INDENTED: Any = object()  # what `_one_line_fields` returns when a line is indented
# a field given with no value: kept while reading (a second one is a duplicate), then dropped
_EMPTY = object()


def _fields(body: str, by_name: dict[str, FieldSpec]) -> dict[str, Any] | None:
    """A section's fields typed from its lines (below the heading); None: the full parser decides.

    A section with no indented line (most of them) is read one field a line; otherwise most fields
    still hold one line: its value is settled as it stands, a list of the value's lines is made only
    when a continuation line follows. An empty optional field is left out, as the full parser does."""
    fields = _one_line_fields(body, by_name)
    if fields is not _INDENTED:
        return fields
    fields = {}
    spec: FieldSpec | None = None  # the field being read
    value = ""  # its first value
    parts: list[str] | None = None  # ... and its continuation lines, once there is one
    for line in body.split("\n"):
        if not line:
            continue
        first = line[0]
        if first.isspace():  # as parse_sections reads them
            two = line[:2] == "  "
            if not two and not line.strip():
                continue
            if spec is None or not (two or first == "\t"):
                return None
            if parts is None:
                parts = [value]
            parts.append(line[2:] if two else line[1:])
            continue
        if spec is not None and not _settle(fields, spec, value, parts):
            return None
        name, colon, raw = line.partition(":")
        spec = by_name.get(name)
        if spec is None or not colon or spec.attr in fields:
            return None
        value, parts = raw.strip(), None
    if spec is not None and not _settle(fields, spec, value, parts):
        return None
    return _without_empty(fields)


def _one_line_fields(body: str, by_name: dict[str, FieldSpec]) -> dict[str, Any] | None:
    """`_fields` of a section none of whose lines is indented (one field a line); `_INDENTED` when one is.

    A short line typed before in a section of the same kind is taken from `_LINES` (replies repeat most of
    their lines turn after turn: `Status: success`, an observation's `Success: 1.0`, `Alpha: 0.3`)."""
    memo = _line_memo(by_name)
    fields: dict[str, Any] = {}
    empty = False
    for line in body.split("\n"):
        if not line:
            continue
        known = memo.get(line)
        if known is not None:
            if known[0] in fields:
                return None
            fields[known[0]] = known[1]
            continue
        if line[0].isspace():
            return _INDENTED
        name, colon, raw = line.partition(":")
        spec = by_name.get(name)
        if spec is None or not colon or spec.attr in fields:
            return None
        raw = raw.strip()
        if raw and spec.kind == "text":  # the commonest field, settled here
            fields[spec.attr] = raw
        elif not _settle(fields, spec, raw, None):
            return None
        elif not raw:
            empty = True
            continue
        if len(line) <= _LINE_MAX_CHARS and type(fields[spec.attr]) in _IMMUTABLE:
            if len(memo) >= _LINES_MAX:
                memo.clear()
            memo[line] = (spec.attr, fields[spec.attr])
    return _without_empty(fields) if empty else fields


# a section kind's field table (by identity) -> (the table, its typed lines: line -> (attribute, value))
_LINES: dict[int, tuple[dict[str, FieldSpec], dict[str, tuple[str, Any]]]] = {}
_LINES_MAX = 1024  # lines a section kind, then forgotten all at once (a latency's digits never repeat)
_LINE_MAX_CHARS = 120  # a longer line (a claim, a note) is typed every time
_IMMUTABLE = (str, int, float, bool)  # a list value (csv) is the reader's to change: never shared


def _line_memo(by_name: dict[str, FieldSpec]) -> dict[str, tuple[str, Any]]:
    entry = _LINES.get(id(by_name))
    if entry is None or entry[0] is not by_name:  # the table is held, so its id is never reused
        entry = _LINES[id(by_name)] = (by_name, {})
    return entry[1]


def _finite_float(raw: str) -> float | None:
    """`raw` as a finite number, None when it is none (the full parser then says why)."""
    try:
        number = float(raw)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _without_empty(fields: dict[str, Any]) -> dict[str, Any]:
    if _EMPTY in fields.values():
        return {k: v for k, v in fields.items() if v is not _EMPTY}
    return fields


_UNITS: dict[str, dict[str, Any]] = {}  # a unit section's text (below its heading) -> its checked fields
_UNITS_MAX = 4096  # units, then forgotten all at once (an ingest's units pass through; a turn's come back)
_UNITS_MAX_CHARS = 8 << 20  # ... or this much text: a plugin's huge units never pile up in the kernel
_UNIT_MAX_CHARS = 16 << 10  # a larger unit is read line by line every time
_units_chars = 0


def _remember(unit_text: str, fields: dict[str, Any]) -> None:
    global _units_chars
    if len(unit_text) > _UNIT_MAX_CHARS:
        return
    if len(_UNITS) >= _UNITS_MAX or _units_chars + len(unit_text) > _UNITS_MAX_CHARS:
        _UNITS.clear()
        _units_chars = 0
    _UNITS[unit_text] = _copied(fields)
    _units_chars += len(unit_text)


def _copied(fields: dict[str, Any]) -> dict[str, Any]:
    """A unit's fields with their lists copied: a parsed unit may be changed by its reader."""
    return {k: v.copy() if type(v) is list else v for k, v in fields.items()}


def _settle(fields: dict[str, Any], spec: FieldSpec, value: str, parts: list[str] | None) -> bool:
    """Type a field read by the fast path (`_typed_fields`' rules): its first value, and its continuation
    lines when it has some (`parts`, the first value included); False: the full parser decides."""
    raw = value if parts is None else "\n".join(parts).strip()
    if not raw:
        if spec.required:
            return False
        fields[spec.attr] = _EMPTY
        return True
    kind = spec.kind
    if kind == "text":
        fields[spec.attr] = raw
        return True
    if kind == "float" and parts is None:  # convert_value's float without its messages
        if (number := _finite_float(raw)) is None:
            return False
        fields[spec.attr] = number
        return True
    if parts is not None:
        raw = " ".join(p.strip() for p in parts).strip()
    typed, rule, _ = convert_value(spec, raw)
    if rule:
        return False
    fields[spec.attr] = typed
    return True
