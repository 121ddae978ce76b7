"""The field a question asks of a record answers it in any record format sd-symbolic reads as entries with
fields, not only an Ansible module's `options:` (gs_symbolic/record_fields.py): here an invented OpenAPI-like
schema, whose properties each carry a `description` and short fields (`type`, `minimum`, `default`,
`example`). The record's own field line answers; a field the named record does not list is not stated, even
when another record of the evidence lists it."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.evidence import split_units
from mrpvm.plugins.gs_symbolic.record_fields import fields_only, record_fields

SCHEMA = """# Lantern Inventory API: the schema of a warehouse shelf
openapi: 3.0.3
info:
  title: Lantern Inventory API
  version: 1.4.0
components:
  schemas:
    Shelf:
      type: object
      description: A shelf of the warehouse that holds crates.
      properties:
        capacity:
          description: How many crates the shelf can hold before it is full.
          type: integer
          minimum: 1
          default: 40
        aisle:
          description: The aisle the shelf stands in, counted from the loading dock.
          type: string
          example: B7
        colour:
          description: The paint the shelf is marked with, to tell its zone apart.
          type: string
          enum: [red, amber, green]
"""


def _records():
    return {u.title: u for u in units_of(SCHEMA, "lantern.yaml") if record_fields(u)}


def test_a_schemas_properties_are_records_with_their_fields():
    records = _records()
    # the schema (its text, then `type: object`) is a record as its properties are
    assert sorted(records) == ["Shelf", "aisle", "capacity", "colour"]
    assert record_fields(records["capacity"]) == [
        ("type", "type: integer"),
        ("minimum", "minimum: 1"),
        ("default", "default: 40"),
    ]
    assert record_fields(records["aisle"])[-1] == ("example", "example: B7")
    # the property's prose is what the record says of itself; its fields alone are not a passage about it
    pool = split_units([records["capacity"]])
    assert not fields_only(pool)
    assert fields_only([s for s in pool if s.text.startswith("default:")])


@needs_model
def test_the_asked_field_of_the_named_property_answers():
    units = units_of(SCHEMA, "lantern.yaml")
    doc = ask("What is the default value of capacity?", units)
    assert doc.result.status == "success", doc.answer
    assert "default: 40" in (doc.answer or "") and "minimum" not in (doc.answer or ""), doc.answer
    doc = ask("What is the minimum of capacity?", units)
    assert "minimum: 1" in (doc.answer or "") and "40" not in (doc.answer or ""), doc.answer
    doc = ask("What is the example value of aisle?", units)
    assert "B7" in (doc.answer or ""), doc.answer


@needs_model
@pytest.mark.parametrize("question", ["What is the default value of aisle?", "What is the default colour?"])
def test_a_field_the_named_property_does_not_list_is_not_stated(question):
    # `capacity` lists a default; `aisle` and `colour` list none, and their prose never writes one
    doc = ask(question, units_of(SCHEMA, "lantern.yaml"))
    assert doc.result.status == "no-context" and "40" not in (doc.answer or ""), doc.answer
