"""The column-wise look at a compact reply's units (protocol/cnl_columns.py): it clears only units the
per-unit checks pass unchanged, so `read_compact` gives the same document, the same issues in the same
order and the same shipped analysis as checking every unit one by one."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mrpvm.protocol import cnl_compact
from mrpvm.protocol.cnl import CnlError
from mrpvm.protocol.cnl_columns import suspect_units
from mrpvm.protocol.cnl_compact import CompactReply, encode_compact, read_compact
from mrpvm.protocol.cnl_grammar import MAX_INT, UNIT_FIELDS, FieldSpec
from mrpvm.protocol.cnl_rules import NOWHERE, UNIT_RULE_ATTRS, check_unit
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit, PluginResult
from mrpvm.protocol.handoff import ANALYSER, analyse_unit, ship_analysis
from test_cnl_compact import OP, tessel_tree

RESULT = PluginResult(status="success", plugin="p", confidence="high")
TEXT = cnl_compact._UNIT_TEXT_ATTRS
CHECKED = cnl_compact._UNIT_CHECKED

# one field's value that may break a rule or read otherwise in the CNL form (and some that do not)
_WORDS = st.sampled_from(
    ["", " ", "a", "a b", " a", "a ", "a\nb", "a\r\nb", "a\n\nb", "\u2028", "a\x85", "x,y"]
)
_CHANGES = st.one_of(
    st.tuples(st.sampled_from(TEXT), st.one_of(st.none(), _WORDS, st.text(max_size=6))),
    st.tuples(
        st.sampled_from(["kuType", "role", "relation"]), st.sampled_from([None, "", "molecule", "uses"])
    ),
    st.tuples(st.sampled_from(["role"]), st.sampled_from(["Procedure", "Description", "Wish"])),
    st.tuples(st.sampled_from(["claim", "procedure", "subject", "object"]), st.sampled_from([None, "", "s"])),
    st.tuples(
        st.sampled_from(["confidence", "score"]), st.sampled_from([None, 0.0, 0.5, 1.5, -0.1, float("nan")])
    ),
    st.tuples(
        st.sampled_from(["chunkIndex", "unitIndex", "charStart", "charEnd"]),
        st.sampled_from([None, 0, -1, 2**63, 7]),
    ),
    st.tuples(
        st.sampled_from(["utilityActs", "phaseScopes", "parentUnitIds", "childUnitIds", "resolvedFor"]),
        st.lists(st.sampled_from(["", "explain", "dance", "a b", " a", "a,b", "a\nb"]), max_size=3),
    ),
    st.tuples(st.sampled_from(["id"]), st.sampled_from(["two words", "", "fresh-id", "tab\tid"])),
)
_REQUIRED = {"id", "sourceId", "chunkId", "kuType", "role", "topic"}


def every_unit(data: bytes) -> tuple[CnlDocument, bool] | list[tuple[int, str, str]]:
    """What `read_compact` gave when it checked every unit one by one: (document, analysis shipped), or
    the issues (line, rule, message) it refused the reply with."""
    doc = cnl_compact._decode_as(CompactReply, data)
    issues = cnl_compact._Issues()
    sent = doc.units
    units = [cnl_compact._as_carried(u, cnl_compact._UNIT_TEXT) for u in sent]
    seen: set[str] = set()
    for i, unit in enumerate(units):
        cnl_compact._check_unit(unit, i + 1, issues)
        if unit.id in seen:
            issues.report(i + 1, "duplicate-section", f"unit {unit.id!r} appears twice")
        seen.add(unit.id)
    if issues:
        return [(i.line, i.rule, i.message) for i in issues]
    recast = any(a is not b for a, b in zip(sent, units, strict=True))
    return CnlDocument(result=doc.result, units=units), bool(doc.analyser) and not recast


def read(data: bytes) -> tuple[CnlDocument, bool] | list[tuple[int, str, str]]:
    try:
        doc, shipped = read_compact(data, OP)
    except CnlError as err:
        return [(i.line, i.rule, i.message) for i in err.issues]
    return doc, shipped is not None


def reply(units: list[KnowledgeUnit]) -> bytes:
    analysis = ship_analysis([analyse_unit(u) for u in units]).analysis
    return encode_compact(CompactReply(result=RESULT, units=units, analyser=ANALYSER, analysis=analysis))


@pytest.fixture(scope="module")
def tree() -> list[KnowledgeUnit]:
    return tessel_tree().units


def test_a_tidy_tree_needs_no_unit_checked_one_by_one(tree):
    assert suspect_units(tree, TEXT, CHECKED) == []
    assert read(reply(tree)) == every_unit(reply(tree))


def test_a_repeated_id_has_every_unit_checked(tree):
    units = [*tree, tree[3]]
    assert suspect_units(units, TEXT, CHECKED) is None
    issues = read(reply(units))
    assert issues == every_unit(reply(units))
    assert isinstance(issues, list) and issues[-1][:2] == (len(units), "duplicate-section")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(min_value=0), _CHANGES), min_size=1, max_size=4))
def test_changed_units_read_as_when_every_unit_is_checked(tree, changes):
    """Units changed anywhere in a real tree: the same document and analysis, or the same issues in the
    same order; and every unit the one-by-one check recasts or refuses is one `suspect_units` names."""
    units = list(tree)
    for position, (attr, value) in changes:
        k = position % len(units)
        if value is None and attr in _REQUIRED:  # typed `str`: a compact reply cannot carry None there
            value = ""
        units[k] = msgspec.structs.replace(units[k], **{attr: value})
    data = reply(units)
    assert read(data) == every_unit(data)
    suspects = suspect_units(cnl_compact._decode_as(CompactReply, data).units, TEXT, CHECKED)
    if suspects is None:
        return
    for k, sent in enumerate(cnl_compact._decode_as(CompactReply, data).units):
        if k in suspects:
            continue
        issues = cnl_compact._Issues()
        cnl_compact._check_unit(sent, k + 1, issues)
        assert not issues and cnl_compact._as_carried(sent, cnl_compact._UNIT_TEXT) is sent


_NO_CHOICE = "none-of-them"
# per field kind of the spec table: values that pass, that break the per-unit check, or that the CNL form
# carries otherwise (a required `str` field cannot carry None in a compact reply: "" stands for it)
_KIND_VALUES: dict[str, list[Any]] = {
    "text": [None, "", " ", "a", " a", "a ", "a\nb", "a\r\nb", "a\n\n b", "\u2028"],
    "enum": [None, "", _NO_CHOICE],
    "csv": [[], ["a"], [""], [" a"], ["a,b"], ["a b"], ["a\nb"]],
    "csv-enum": [[], [_NO_CHOICE], [""], [" a"]],
    "int": [None, 0, 7, -1, MAX_INT, MAX_INT + 1],
    "float": [None, 0.0, 0.5, 1.0, 1.5, -0.1, float("nan"), float("inf")],
}


def _spec_values(spec: FieldSpec) -> list[Any]:
    """The values a field of `spec` is tried with: its kind's, and its own choices (the first and last)."""
    assert spec.kind in _KIND_VALUES, f"{spec.attr}: a field kind cnl_columns is not tested on: {spec.kind}"
    values = list(_KIND_VALUES[spec.kind])
    if spec.kind == "enum":
        values += [spec.choices[0], spec.choices[-1]]
    elif spec.kind == "csv-enum":
        values += [[spec.choices[0]], [spec.choices[0], spec.choices[-1]]]
    if spec.required and spec.kind in ("text", "enum"):
        values = [v for v in values if v is not None]
    return values


def test_every_field_of_the_spec_table_reads_as_when_every_unit_is_checked(tree):
    """Each unit field of cnl_grammar.UNIT_FIELDS, with values of its kind (read from the spec table, so a
    field added or retyped there is tried here), set on a unit with and one without a triple: the column
    look names every unit the per-unit checks recast or refuse, and the reply reads the same."""
    with_triple = next(k for k, u in enumerate(tree) if u.subject)
    places = sorted({0, with_triple, len(tree) - 1})
    for spec in UNIT_FIELDS:
        for value in _spec_values(spec):
            for k in places:
                units = list(tree)
                units[k] = msgspec.structs.replace(units[k], **{spec.attr: value})
                data = reply(units)
                assert read(data) == every_unit(data), (spec.attr, value, k)
                sent = cnl_compact._decode_as(CompactReply, data).units
                suspects = suspect_units(sent, TEXT, CHECKED)
                assert suspects is not None and _refused_or_recast(sent) <= set(suspects), (spec.attr, value)


def _refused_or_recast(units: list[KnowledgeUnit]) -> set[int]:
    """The units the per-unit checks refuse or recast."""
    out = set()
    for k, unit in enumerate(units):
        issues = cnl_compact._Issues()
        cnl_compact._check_unit(unit, k + 1, issues)
        if issues or cnl_compact._as_carried(unit, cnl_compact._UNIT_TEXT) is not unit:
            out.add(k)
    return out


class _Reads(dict):
    """A unit's fields that record which of them a rule reads."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.read: set[str] = set()

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)


def test_the_unit_rules_read_only_the_fields_the_column_look_reads():
    """cnl_rules.check_unit reads the fields UNIT_RULE_ATTRS lists, which cnl_columns reads as columns and
    cnl_compact checks: a rule on another field fails here until the list follows it."""
    unit_attrs = {s.attr for s in UNIT_FIELDS}
    assert set(UNIT_RULE_ATTRS) <= unit_attrs
    assert set(UNIT_RULE_ATTRS) <= {s.attr for s in CHECKED}
    read: set[str] = set()
    samples = [
        {"claim": "c"},
        {"procedure": "p", "role": "Procedure"},
        {"claim": "c", "role": "Description", "subject": "s", "relation": "uses", "object": "o"},
        {"claim": "c", "subject": "s", "confidence": 2.0},
        {"claim": "c", "subject": "s", "relation": "uses", "object": "o", "confidence": 0.5},
    ]
    for sample in samples:
        fields = _Reads(sample)
        check_unit(NOWHERE, fields, lambda *_: None)
        read |= fields.read
    assert read <= set(UNIT_RULE_ATTRS), read - set(UNIT_RULE_ATTRS)
    assert read & unit_attrs == set(UNIT_RULE_ATTRS)
