"""The compact reply (protocol/SPEC.md, "Compact reply"): a source's KU tree as MessagePack instead of CNL.

An sd-plugin whose manifest says `"replyForm": "msgpack"` is asked for it (`payload.replyForm` of a
`normalizePersistentContext` request) and may answer with the typed document (`CnlDocument`: the result
block and the units, field names as in JSON payloads) encoded as one MessagePack map, instead of the CNL
Markdown a multi-megabyte tree would otherwise be rendered to and parsed from. The kernel tells the two
apart by the first byte (a CNL document starts with `#`, a MessagePack map with 0x80-0x8f, 0xde or 0xdf)
and holds the compact form to the rules the CNL parser checks (cnl_grammar.py, cnl_rules.py): the same
types, enums, ranges, required fields and unit rules; a broken one is refused as invalid CNL is
(CnlError). Text values are read as the CNL form carries them (`cnl_render.carried_text`: CRs, outer
whitespace, blank lines), so both forms give the same document.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import msgspec

from .cnl_columns import suspect_units
from .cnl_grammar import (
    MAX_INT,
    MAX_ISSUES,
    RESULT_FIELDS,
    SECTIONS_BY_OP,
    UNIT,
    UNIT_FIELDS,
    CnlError,
    CnlIssue,
    FieldSpec,
    convert_value,
    format_value,
)
from .cnl_render import carried_plainly, carried_text
from .cnl_rules import NOWHERE, UNIT_RULE_ATTRS, check_unit
from .document import CnlDocument, KnowledgeUnit, PluginResult
from .gc_pause import paused_gc

COMPACT_FORM = "msgpack"  # the manifest's and the payload's `replyForm` value asking for it
COMPACT_OPS = frozenset({"normalizePersistentContext"})  # the ops a compact reply may answer
_MAP_MARKERS = frozenset({*range(0x80, 0x90), 0xDE, 0xDF})  # fixmap, map 16, map 32


class CompactReply(CnlDocument, kw_only=True, omit_defaults=True):
    """What a compact reply may carry besides the document: the plugin's analysis of its units
    (`analysis`: the MessagePack list of protocol/handoff.py's `UnitAnalysis`, `analysis[i]` of `units[i]`,
    by the analyser `analyser` names), which the kernel hands the kb-plugins instead of analysing the units
    again (read lazily: the kernel decodes it only for an ingest)."""

    analyser: str = ""
    analysis: msgspec.Raw = msgspec.Raw()  # empty: none


class ShippedAnalysis(msgspec.Struct, frozen=True):
    """A compact reply's analysis, as the kernel keeps it until the units file is encoded."""

    analyser: str
    analysis: msgspec.Raw


_encode = msgspec.msgpack.Encoder().encode
S = TypeVar("S", bound=msgspec.Struct)
_decoders: dict[type, msgspec.msgpack.Decoder[Any]] = {}  # built on first use: a plugin only encodes


def _decode_as(kind: type[S], data: bytes) -> S:
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.msgpack.Decoder(kind)
    return decoder.decode(data)


def encode_compact(doc: CnlDocument) -> bytes:
    """The document as one MessagePack map."""
    return _encode(doc)


def is_compact(data: bytes) -> bool:
    """Whether a reply's bytes are a MessagePack map (a CNL document starts with `#`)."""
    return bool(data) and data[0] in _MAP_MARKERS


class _Result(msgspec.Struct):
    request: str | None = None


class _Head(msgspec.Struct):
    result: _Result


def compact_request_id(data: bytes) -> bytes | None:
    """The result block's `request` of a compact reply (the worker's id check; the rest is skipped
    unread, ~1 ms for a 5 MB tree), None when there is none or `data` is not one."""
    try:
        request = _decode_as(_Head, data).result.request
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return None if request is None else request.strip().encode()


class _Issues(list):  # noqa: FURB189 - CnlIssues with a cap, located by unit index (line 0: the result block)
    def report(self, where: int, rule: str, message: str) -> None:
        if len(self) < MAX_ISSUES:
            self.append(CnlIssue(where, rule, message))


def decode_compact(data: bytes, op: str | None) -> CnlDocument:
    """The document a compact reply holds, checked as `parse_document` checks CNL; CnlError otherwise
    (an issue's `line` is 0 for the result block and i + 1 for the i-th unit)."""
    return read_compact(data, op)[0]


def read_compact(data: bytes, op: str | None) -> tuple[CnlDocument, ShippedAnalysis | None]:
    """`decode_compact`, and the analysis the reply ships (None when it has none)."""
    with paused_gc():  # a source's KU tree and its checks' columns hold no cycles (protocol/gc_pause.py)
        return _read_compact(data, op)


def _read_compact(data: bytes, op: str | None) -> tuple[CnlDocument, ShippedAnalysis | None]:
    try:
        doc = _decode_as(CompactReply, data)
    except (msgspec.DecodeError, msgspec.ValidationError) as err:
        raise CnlError([CnlIssue(1, "compact", f"not a compact CnlDocument: {err}")]) from None
    issues = _Issues()
    if op not in COMPACT_OPS:
        issues.report(
            1, "compact", f"a compact reply answers only {', '.join(sorted(COMPACT_OPS))}, not {op}"
        )
    extra = [name for name in ("intents", "resolved", "observations") if getattr(doc, name)]
    extra += [name for name in ("plan", "answer", "sources") if getattr(doc, name) is not None]
    if extra or (op in SECTIONS_BY_OP and UNIT not in SECTIONS_BY_OP[op] and doc.units):
        issues.report(1, "section-not-allowed", f"a compact {op} reply holds only result and units")
    doc.result = _as_carried(doc.result, _RESULT_TEXT)
    sent = doc.units
    # only the units a field-by-field look could not clear are checked one by one (cnl_columns.py); the
    # rest pass unchanged and draw no issue, so the issues are the same, in the same order
    suspects = suspect_units(sent, _UNIT_TEXT_ATTRS, _UNIT_CHECKED)
    checked = range(len(sent)) if suspects is None else suspects
    doc.units = list(sent)
    for i in checked:
        doc.units[i] = _as_carried(sent[i], _UNIT_TEXT)
    recast = any(doc.units[i] is not sent[i] for i in checked)
    _check_result(doc.result, issues)
    seen: set[str] = set()
    for i in checked:
        unit = doc.units[i]
        _check_unit(unit, i + 1, issues)
        if unit.id in seen:
            issues.report(i + 1, "duplicate-section", f"unit {unit.id!r} appears twice")
        seen.add(unit.id)
    if issues:
        raise CnlError(list(issues), len(issues))
    # an analysis of text the CNL form would carry otherwise is not the analysis of the units read here
    shipped = (
        ShippedAnalysis(doc.analyser, doc.analysis)
        if doc.analyser and len(doc.analysis) and not recast
        else None
    )
    return CnlDocument(result=doc.result, units=doc.units), shipped


def _text_fields(struct: type, specs: tuple[FieldSpec, ...]) -> tuple[tuple[str, Any], ...]:
    """(attr, the value an absent field has) of each text field."""
    defaults = {f.name: f.default for f in msgspec.structs.fields(struct)}
    absent = {name: "" if value is msgspec.NODEFAULT else value for name, value in defaults.items()}
    return tuple((s.attr, absent[s.attr]) for s in specs if s.kind == "text")


_RESULT_TEXT = _text_fields(PluginResult, RESULT_FIELDS)
_UNIT_TEXT = _text_fields(KnowledgeUnit, UNIT_FIELDS)
_UNIT_TEXT_ATTRS = tuple(attr for attr, _ in _UNIT_TEXT)

T = TypeVar("T", PluginResult, KnowledgeUnit)


def _as_carried(obj: T, text_fields: tuple[tuple[str, Any], ...]) -> T:
    """`obj` with its text fields as the CNL form would carry them (cnl_render.carried_text), so a compact
    reply gives the document its CNL gives; the same object when they are so already (the usual case)."""
    changes: dict[str, Any] = {}
    for attr, absent in text_fields:
        value = getattr(obj, attr)
        if carried_plainly(value):
            continue
        carried = carried_text(value)
        if carried != value:
            changes[attr] = absent if carried is None else carried
    return msgspec.structs.replace(obj, **changes) if changes else obj


def _checked(specs: tuple[FieldSpec, ...], also: tuple[str, ...] = ()) -> tuple[FieldSpec, ...]:
    """The fields worth a look: typed or required ones, and the text fields a section rule reads."""
    return tuple(s for s in specs if s.kind != "text" or s.required or s.attr in also)


_RESULT_CHECKED = _checked(RESULT_FIELDS)
_UNIT_CHECKED = _checked(UNIT_FIELDS, UNIT_RULE_ATTRS)  # and the text fields cnl_rules.check_unit reads


def _fields(obj: Any, specs: tuple[FieldSpec, ...], where: int, issues: _Issues) -> dict[str, Any]:
    """The fields of `specs` a CNL rendering would carry (None, "" and [] are absent), each checked as
    the CNL parser types it, and the required ones present."""
    fields: dict[str, Any] = {}
    for spec in specs:
        value = getattr(obj, spec.attr)
        if value is None or value == "" or value == []:
            if spec.required and not (spec.kind == "csv" and value == []):
                issues.report(where, "required-field", f"field '{spec.name}' is required")
            continue
        kind = spec.kind
        if kind == "text":
            ok = True
        elif kind == "enum":
            ok = value in spec.choices
        elif kind in ("csv", "csv-enum"):  # items as the CNL form can carry them
            ok = all(item and "," not in item and item == item.strip() for item in value)
            ok = ok and (kind == "csv" or all(item in spec.choices for item in value))
        elif kind == "int":  # typed already (msgspec: an int, never a bool): convert_value's range
            ok = 0 <= value <= MAX_INT
        elif kind == "float":
            ok = math.isfinite(value)
        else:
            ok = convert_value(spec, format_value(spec, value))[1] is None
        if not ok:
            issues.report(where, "enum" if "enum" in kind else kind, f"{spec.name} {value!r} is not valid")
            continue
        fields[spec.attr] = value
    return fields


def _check_result(result: PluginResult, issues: _Issues) -> None:
    fields = _fields(result, _RESULT_CHECKED, 0, issues)
    if fields.get("status") == "success" and "confidence" not in fields:
        issues.report(0, "confidence-required", "Confidence is required when Status is success")


def _check_unit(unit: KnowledgeUnit, where: int, issues: _Issues) -> None:
    if unit.id.split() != [unit.id]:  # as a `## Context Unit <id>` heading: one id without spaces
        issues.report(where, "bad-heading", f"unit id {unit.id!r} is not one id without spaces")
    fields = _fields(unit, _UNIT_CHECKED, where, issues)
    check_unit(NOWHERE, fields, lambda _line, rule, message: issues.report(where, rule, message))
