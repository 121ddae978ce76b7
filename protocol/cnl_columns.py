"""Which units of a compact reply need the per-unit checks (protocol/cnl_compact.py), found field by field.

A compact reply of a large source holds thousands of units, nearly all of them well-formed: checking each
unit's ~35 fields one `getattr` at a time was most of the kernel's work on the reply, on the ingest's
critical path between the sd stage and the kb-plugins. `suspect_units` reads the units as columns
(`msgspec.structs.astuple`, one C call a unit) and tests each column as a whole (`set` subsets, `min`/`max`,
one search of the column's joined text); only a column that fails its test is read value by value. It
returns the indices of the units that MAY be recast (a text value the CNL form carries otherwise) or MAY
draw an issue: every other unit is exactly what the per-unit checks would pass unchanged. It may name a unit
that is fine (the per-unit checks then find nothing); it never leaves out one that is not. None: check every
unit (a repeated id, whose issue is reported in unit order, or a field kind it does not know).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from itertools import chain, repeat
from typing import Any

import msgspec

from .cnl_grammar import MAX_INT, FieldSpec
from .cnl_render import carried_as_is
from .cnl_rules import NOWHERE, UNIT_RULE_ATTRS, check_unit
from .document import KnowledgeUnit

_SEP = "\x00"  # joins a column's values for one search of them all
_SPACE = re.compile(r"\s")  # str.split()'s whitespace (Py_UNICODE_ISSPACE)
_POSITION = {name: k for k, name in enumerate(KnowledgeUnit.__struct_fields__)}


def _plain_column(values: Sequence[Any]) -> bool:
    """Whether every value is None or a non-empty line without outer whitespace (a whole-column test:
    False may be wrong, True never is)."""
    if "" in values:
        return False
    present = list(filter(None, values))
    joined = _SEP.join(present)
    return "\n" not in joined and "\r" not in joined and list(map(str.strip, present)) == present


def _items_ok(values: Sequence[list[str]], choices: frozenset[str] | None) -> bool:
    """Whether every item of every list is non-empty, holds no comma nor outer whitespace (and is one of
    `choices`)."""
    items = list(chain.from_iterable(filter(None, values)))
    if "" in items or "," in _SEP.join(items) or list(map(str.strip, items)) != items:
        return False
    return choices is None or choices.issuperset(items)


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != []


def _column_test(spec: FieldSpec) -> tuple[Callable[[Sequence[Any]], bool], Callable[[Any], bool]] | None:
    """(the whole column passes, one value passes) for a checked field; None for a kind not known here."""
    kind, required = spec.kind, spec.required
    choices = frozenset(spec.choices)
    if kind == "text":
        if required:
            return (lambda col: None not in col and "" not in col), _present
        return (lambda col: True), (lambda value: True)
    if kind == "enum":
        allowed = choices | {None, ""} if not required else choices

        def enum_value(value: Any) -> bool:
            return value in allowed

        return (lambda col: allowed.issuperset(col)), enum_value
    if kind in ("csv", "csv-enum") and not required:
        listed = choices if kind == "csv-enum" else None
        return (lambda col: _items_ok(col, listed)), (lambda value: _items_ok([value], listed))
    if kind == "int" and not required:

        def int_value(value: Any) -> bool:
            return value is None or 0 <= value <= MAX_INT

        return (lambda col: _int_column(col)), int_value
    if kind == "float" and not required:

        def float_value(value: Any) -> bool:
            return value is None or math.isfinite(value)

        return (lambda col: all(map(float_value, set(col)))), float_value
    return None


def _int_column(col: Sequence[Any]) -> bool:
    values = set(col)
    values.discard(None)
    return not values or (min(values) >= 0 and max(values) <= MAX_INT)


def suspect_units(
    units: Sequence[KnowledgeUnit], text_attrs: Sequence[str], checked: Sequence[FieldSpec]
) -> list[int] | None:
    """Indices (ascending) of the units that may be recast (`text_attrs`: the text fields the CNL form
    carries) or may draw an issue (`checked`: the fields the per-unit check types, the id's form, the
    unit rules of cnl_rules.check_unit); None: check every unit."""
    if not units:
        return []
    columns = list(zip(*map(msgspec.structs.astuple, units), strict=True))
    ids = columns[_POSITION["id"]]
    if len(set(ids)) != len(ids):
        return None
    suspects: set[int] = set()

    def mark(col: Sequence[Any], ok: Callable[[Any], bool]) -> None:
        suspects.update(k for k, value in enumerate(col) if not ok(value))

    if "" in ids or _SPACE.search(_SEP.join(ids)):
        mark(ids, lambda value: value.split() == [value])
    for attr in text_attrs:
        col = columns[_POSITION[attr]]
        if not _plain_column(col):
            mark(col, carried_as_is)
    for spec in checked:
        test = _column_test(spec)
        if test is None:
            return None
        col = columns[_POSITION[spec.attr]]
        if not test[0](col):
            mark(col, test[1])
    rule_columns = [columns[_POSITION[a]] for a in UNIT_RULE_ATTRS]
    if _rules_hold_everywhere(*rule_columns[:6]):  # then a unit has its whole triple iff it has a subject
        subject, confidence = rule_columns[3], rule_columns[6]
        suspects.update(
            k for k, c in enumerate(confidence) if c is not None and not (subject[k] and 0.0 <= c <= 1.0)
        )
    else:
        rules = zip(*rule_columns, strict=True)
        suspects.update(k for k, fields in enumerate(rules) if not _rules_hold(*fields))
    return sorted(suspects)


def _rules_hold_everywhere(
    claim: Sequence[Any],
    procedure: Sequence[Any],
    role: Sequence[Any],
    subject: Sequence[Any],
    relation: Sequence[Any],
    obj: Sequence[Any],
) -> bool:
    """`_rules_hold` but the confidence's, for every unit, tested column by column (False: some unit may
    break a rule). A text or enum value is present when true (None and "" are not)."""
    has_procedure = list(map(bool, procedure))
    return (
        list(map(operator.not_, claim)) == has_procedure
        and has_procedure == list(map(operator.eq, role, repeat("Procedure")))
        and list(map(bool, subject)) == list(map(bool, relation)) == list(map(bool, obj))
    )


def _rules_hold(*values: Any) -> bool:
    """cnl_rules.check_unit holds for one unit's `UNIT_RULE_ATTRS` values (a value present as typed is a field:
    None, "" and [] are absent): one of claim and procedure, a procedure iff the role says so, a triple whole
    or absent, a confidence only with a triple, in [0, 1]."""
    fields = {attr: value for attr, value in zip(UNIT_RULE_ATTRS, values, strict=True) if _present(value)}
    broken: list[str] = []
    check_unit(NOWHERE, fields, lambda _line, rule, _message: broken.append(rule))
    return not broken
