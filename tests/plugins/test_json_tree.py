"""A JSON document read as its tree, by the same reading as YAML (sd_symbolic/source_units/json_compose.py
composes it into the node tree yaml_tree.py reads): each object a unit under its key path, its leaves
`key: value` statements, a text its sentences, offsets into the source. Read as plain text (before), a unit
quoted the JSON's punctuation and lost the keys its values stand under. Both documents are invented."""

from __future__ import annotations

import json
import re

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.plugins.sd_symbolic.source_units.json_compose import compose_json
from mrpvm.plugins.sd_symbolic.source_units.outline import looks_like_plain_text, read_source
from mrpvm.plugins.sd_symbolic.source_units.yaml_shape import MAX_DEPTH
from mrpvm.plugins.sd_symbolic.source_units.yaml_tree import read_yaml

API = """{
  "openapi": "3.1.0",
  "info": {
    "title": "Marten Library Loans",
    "version": "1.4.0",
    "description": "The Marten Library lends books and tools to its members. A loan runs for three weeks.",
    "contact": {"name": "Loans desk", "email": "loans@marten-library.test"}
  },
  "paths": {
    "/loans/{loanId}": {
      "get": {
        "summary": "Fetch one loan.",
        "operationId": "getLoan",
        "parameters": [
          {"name": "loanId", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}}
        ],
        "responses": {
          "200": {"description": "The loan was found."},
          "451": {"description": "The item was withdrawn by the archive board"}
        }
      }
    }
  },
  "components": {
    "schemas": {
      "Loan": {
        "type": "object",
        "required": ["member", "item", "due"],
        "properties": {
          "member": {"type": "string", "description": "The card number of the borrowing member."},
          "renewals": {"type": "integer", "maximum": 4},
          "due": {"type": "string", "format": "date"}
        }
      }
    }
  }
}
"""

SETTINGS = """// Settings of the Wren editor's spell checker (JSONC: comments and trailing commas)
{
  "wrenSpell": {
    "language": {
      "type": "string",
      "default": "en-NZ",
      "description": "The dictionary the checker reads words against.",
    },
    "ignoreCapitals": {
      "type": "boolean",
      "default": false,
      /* the check skips words of capitals only */
      "description": "Whether words written in capitals only are skipped.",
    },
    "maxSuggestions": {"type": "integer", "default": 7, "minimum": 1},
  },
}
"""


def _atomic(text: str) -> dict[str, str]:
    return {u.sectionTitle or "": u.claim or "" for u in units_of(text, "story.nl") if u.kuType == "atomic"}


def test_each_object_is_a_unit_under_its_key_path():
    units = _atomic(API)
    param = units["paths > /loans/{loanId} > get > parameters > loanId"]
    assert "required: true" in param and "schema.minimum: 1" in param
    assert "required: member, item, due" in units["components > schemas > Loan"]
    member = units["components > schemas > Loan > properties > member"]
    assert "The card number of the borrowing member." in member and "description:" not in member
    assert "contact.email: loans@marten-library.test" in units["info"]
    assert "withdrawn by the archive board" in units["paths > /loans/{loanId} > get > responses > 451"]
    assert not any('"' in claim or "{" in claim for claim in units.values())  # no JSON punctuation quoted


def test_comments_and_trailing_commas_are_read():
    units = _atomic(SETTINGS)
    assert "default: en-NZ" in units["wrenSpell > language"]
    assert "Whether words written in capitals only are skipped." in units["wrenSpell > ignoreCapitals"]
    assert "default: 7" in units["wrenSpell > maxSuggestions"]


def test_a_top_level_array_lists_its_items():
    places = """[
  {"name": "North gate", "kind": "entrance", "geometry": {"type": "Point", "coordinates": [174.7, -41.2]}},
  {"name": "Fern house", "kind": "glasshouse", "open": "09:00", "geometry": {"type": "Point", "coordinates": [174.8, -41.3]}}
]"""
    units = _atomic(places)
    assert "kind: glasshouse" in units["Fern house"] and "open: 09:00" in units["Fern house"]
    assert "geometry.coordinates: 174.7, -41.2" in units["North gate"]


def test_units_offsets_slice_the_source():
    for text in (API, SETTINGS):
        for unit in units_of(text, "story.nl"):
            assert unit.charStart is not None and unit.charEnd is not None
            assert 0 <= unit.charStart <= unit.charEnd <= len(text)
            if unit.kuType == "atomic":  # every word of a unit is in its slice
                shown = text[unit.charStart : unit.charEnd]
                words = set(re.findall(r"[A-Za-z0-9]+", unit.claim or ""))
                assert words <= set(re.findall(r"[A-Za-z0-9]+", shown)), (unit.sectionTitle, shown)


def test_the_composer_keeps_what_json_reads():
    # a tab before a value, the escape `\/` and a key longer than 1,024 characters: PyYAML stops at each
    text = (
        '{\n\t"a":\t[1, 2.5e3, true, null, {"b": "a\\/b \\u00e9 \\"q\\""}],\n\t"'
        + "k" * 2000
        + '": {}, "d": []\n}'
    )
    top = compose_json(text, MAX_DEPTH)
    assert top is not None
    a = top.value[0][1]
    assert [x.value for x in a.value[:4]] == ["1", "2.5e3", "true", "null"]
    assert a.value[4].value[0][1].value == json.loads(text)["a"][4]["b"] == 'a/b \u00e9 "q"'
    assert [len(k.value) for k, _ in top.value] == [1, 2000, 1]
    for key, value in top.value:  # the marks slice the source
        assert text[key.start_mark.index : key.end_mark.index] == json.dumps(key.value)
        assert text[value.start_mark.index] in "[{" and text[value.end_mark.index - 1] in "]}"


@needs_model
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which fields of a Loan are required?", ["member", "item", "due"]),
        ("What is the maximum number of renewals?", ["4"]),
        ("What is the contact email of the loans desk?", ["loans@marten-library.test"]),
        ("Which status code means the item was withdrawn?", ["451"]),
        ("What is the default language?", ["en-NZ"]),
        ("What is the minimum of maxSuggestions?", ["1"]),
    ],
)
def test_a_leaf_under_its_key_path_answers(question, expected):
    # each refused on main (the document read as plain text)
    text = SETTINGS if "language" in question or "maxSuggestions" in question else API
    doc = ask(question, units_of(text, "story.nl"))
    assert doc.result.status != "no-context", doc.answer
    assert all(word in (doc.answer or "") for word in expected), doc.answer


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000_000,  # unclosed, deeper than the reading goes
        "[" * 100 + "]" * 100,  # closed, deeper than MAX_DEPTH
        '{"a": {"b": 1}, "c": 2,, "d": 3}',  # invalid
        '{"a": {"b": 1}} {"c": 2}',  # two documents
        '{"name": "flat", "kind": "list", "size": 3, "colour": "red", "shape": "round", "weight": 2}',  # flat
        '{"a": {"b": 1, "c": 2}}',  # nested, but a few keys only
        "[1] A reference list.\n[2] Another one, in plain text.\n",  # plain text opening with a bracket
        '{"cells": [{"cell_type": "markdown", "source": ["# Title\\n", "Some text about it."]}], "nbformat": 4,'
        ' "nbformat_minor": 5, "metadata": {"kernelspec": {"language": "python"}}}',  # a notebook
    ],
)
def test_what_is_no_json_tree_keeps_its_reading(text):
    assert read_yaml(text) is None
    assert read_source(text)[1] is not None


def test_bad_input_is_read_without_error():
    long_string = '{"meta": {"a": 1, "b": 2, "c": 3}, "blob": {"x": "' + "y" * 1_000_000 + '", "z": 1}}'
    assert read_yaml(long_string) is not None
    twice = '{"service": {"port": 80, "port": 8080, "host": "alpha"}, "other": {"a": 1, "b": 2}}'
    claims = " ".join(_atomic(twice).values())
    assert "port: 80" in claims and "port: 8080" in claims  # a key written twice states both values
    odd = '\ufeff{"limits": {"low": NaN, "high": Infinity, "floor": -Infinity}, "x": {"a": 1, "b": 2}}'
    page = read_yaml(odd)
    assert page is not None and "high: Infinity" in page.text
    for unit in units_of(odd, "story.nl"):  # offsets past the byte order mark
        assert unit.charStart is not None and 0 <= unit.charStart <= (unit.charEnd or 0) <= len(odd)
    assert read_yaml('{"a": {"b": "bad \\x escape"}, "c": {"d": 1, "e": 2, "f": 3, "g": 4}}') is None


def test_a_long_run_of_brackets_is_read_as_text():
    # main's inline-link pattern (`[^\]\n]+` from every bracket) was quadratic: 1 MB of `[` took minutes
    assert read_source("[" * 2_000_000)[1] is not None
    assert not looks_like_plain_text("See [the [v2] guide](https://docs.example.test) first.")
    assert not looks_like_plain_text("See [the guide](https://docs.example.test) first.")
    assert looks_like_plain_text("A reference [12] and a note [a [b] c] without a link.")
