"""A YAML document read as its tree (sd_symbolic/source_units/yaml_tree.py): each mapping a unit under its key
path, its leaves `key: value` statements, a list of scalars joined under its key, a text its sentences,
anchors and merge keys resolved, offsets into the source. Read as Markdown or plain text (before), a nested
mapping's unit lost the key it stands under and lines ran into each other across the structure: "Which fields
of a Cake are required?" and "What is the maximum number of candles?" were refused, "Which status code means
the loaf was sold out?" answered with the 200 response. Both documents are invented."""

from __future__ import annotations

import re

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.plugins.sd_symbolic.source_units.outline import read_source
from mrpvm.plugins.sd_symbolic.source_units.yaml_tree import ALIAS_BUDGET, read_yaml

API = """openapi: 3.0.3
info:
  title: Heron Bakery Orders
  version: 2.1.0
  description: |
    The Heron Bakery takes orders for loaves and cakes through this interface.
    Orders placed before noon are baked the same day.
  contact:
    name: Bakery desk
    email: desk@heron-bakery.test
servers:
  - url: https://orders.heron-bakery.test/v2
    description: Production ovens
  - url: https://sandbox.heron-bakery.test/v2
    description: Practice kitchen for integrators
paths:
  /loaves/{loafId}:
    get:
      summary: Fetch one loaf.
      description: Returns the loaf with its flour and crust.
      operationId: getLoaf
      parameters:
        - name: loafId
          in: path
          required: true
          schema:
            type: integer
            minimum: 1
      responses:
        '200':
          description: The loaf was found.
        '410':
          description: The loaf was sold out for the day
  /cakes:
    post:
      summary: Order a cake.
      operationId: orderCake
      parameters:
        - name: size
          in: query
          description: How many people the cake should feed
          schema:
            type: string
            default: medium
            enum: [small, medium, party]
components:
  schemas:
    Cake:
      type: object
      required:
        - flavour
        - candles
      properties:
        flavour:
          type: string
          description: The flavour of the sponge, chosen from the day's list.
        candles:
          type: integer
          maximum: 99
        message:
          type: string
          description: The words piped on the top, at most forty letters.
"""

COMPOSE = """# Kestrel ledger: the services of a bookkeeping stack
x-defaults: &defaults
  restart: unless-stopped
  logging:
    driver: journald

services:
  ledger:
    <<: *defaults
    image: kestrel/ledger:4.2
    ports:
      - "8640:8640"
    environment:
      LEDGER_CURRENCY: NZD
      LEDGER_FISCAL_START: "04-01"
    depends_on:
      - vault
  vault:
    <<: *defaults
    image: kestrel/vault:1.9
    healthcheck:
      test: ["CMD", "vault", "ping"]
      interval: 20s
"""


def _atomic(text: str) -> dict[str, str]:
    return {u.sectionTitle or "": u.claim or "" for u in units_of(text, "story.nl") if u.kuType == "atomic"}


def test_each_mapping_is_a_unit_under_its_key_path():
    units = _atomic(API)
    param = units["paths > /loaves/{loafId} > get > parameters > loafId"]
    assert "required: true" in param and "schema.minimum: 1" in param  # a small leaf mapping stated inline
    size = units["paths > /cakes > post > parameters > size"]
    assert "schema.default: medium" in size and "schema.enum: small, medium, party" in size
    # a list of scalars joined under its key; the schema's name is the unit's heading
    assert "required: flavour, candles" in units["components > schemas > Cake"]
    # a text is its sentences, without its key; a field next to it stays `key: value`
    flavour = units["components > schemas > Cake > properties > flavour"]
    assert (
        "The flavour of the sponge, chosen from the day's list." in flavour and "description:" not in flavour
    )
    assert "type: string" in flavour
    info = units["info"]
    assert "Orders placed before noon are baked the same day." in info
    assert "contact.email: desk@heron-bakery.test" in info
    # list items of mappings are sibling units, labelled by their first value
    assert "Practice kitchen for integrators" in units["servers > https://sandbox.heron-bakery.test/v2"]
    assert "The loaf was sold out for the day" in units["paths > /loaves/{loafId} > get > responses > 410"]


def test_units_offsets_slice_the_source():
    for text in (API, COMPOSE):
        for unit in units_of(text, "story.nl"):
            assert unit.charStart is not None and unit.charEnd is not None
            assert 0 <= unit.charStart <= unit.charEnd <= len(text)
    for unit in units_of(API, "story.nl"):  # no alias here: every word of a unit is in its slice
        if unit.kuType == "atomic":
            shown = API[unit.charStart : unit.charEnd]
            words = set(re.findall(r"[A-Za-z0-9]+", unit.claim or ""))
            assert words <= set(re.findall(r"[A-Za-z0-9]+", shown)), (unit.sectionTitle, shown)


def test_anchors_and_merge_keys_are_resolved():
    units = _atomic(COMPOSE)
    ledger, vault = units["services > ledger"], units["services > vault"]
    for service in (ledger, vault):
        assert "restart: unless-stopped" in service and "logging.driver: journald" in service
    assert "environment.LEDGER_CURRENCY: NZD" in ledger and "depends_on: vault" in ledger
    assert "healthcheck.test: CMD, vault, ping" in vault
    # the merged entries are shown where the service refers to them
    for unit in units_of(COMPOSE, "story.nl"):
        if unit.sectionTitle == "services > vault" and unit.kuType == "atomic":
            assert COMPOSE.index("  vault:") <= (unit.charStart or 0)


@needs_model
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which fields of a Cake are required?", ["flavour", "candles"]),
        ("What is the maximum number of candles?", ["99"]),
        ("Which status code means the loaf was sold out?", ["410"]),
        ("What is the contact email of the bakery desk?", ["desk@heron-bakery.test"]),
    ],
)
def test_a_leaf_under_its_key_path_answers(question, expected):
    doc = ask(question, units_of(API, "story.nl"))
    assert doc.result.status != "no-context", doc.answer
    assert all(word in (doc.answer or "") for word in expected), doc.answer


@needs_model
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which image does the vault service run?", "kestrel/vault:1.9"),
        ("What currency does the ledger use?", "NZD"),
    ],
)
def test_a_service_of_a_compose_file_answers(question, expected):
    doc = ask(question, units_of(COMPOSE, "story.nl"))
    assert expected in (doc.answer or ""), doc.answer


# --------------------------------------------------------------------------- bad input


def test_a_billion_laughs_stays_small():
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, 10):
        refs = ", ".join([f"*{chr(96 + k)}"] * 9)
        lines.append(f"{chr(97 + k)}: &{chr(97 + k)} [{refs}]")
    bomb = "\n".join(lines) + "\nnested:\n  key: value\n"
    page = read_yaml(bomb)
    assert page is not None
    assert len(page.text) < 20 * ALIAS_BUDGET  # 9**9 items unexpanded: the budget bounds the reading
    assert len(units_of(bomb, "story.nl")) < ALIAS_BUDGET // 4  # 9**8 lists of nine: a few hundred read


@pytest.mark.parametrize(
    "text",
    [
        "root:\n  deep: " + "[" * 10_000 + "]" * 10_000 + "\n",  # deeper than the composer nests
        "".join(" " * k + f"k{k}:\n" for k in range(100)) + " " * 100 + "leaf: 1\n",  # deeper than MAX_DEPTH
        "name: tabs\nblock:\n\tkey: value\n\tother: value\n",  # a tab indents
        "name: broken\nblock:\n  key: [unclosed\n  other: value\n",  # invalid
        "---\ntitle: A page\ntags: [a, b]\n---\n# A page\n\nSome prose about the page.\n",  # front matter
        "name: flat\nkind: list\nsize: 3\ncolour: red\nshape: round\nweight: 2\n",  # no nesting
    ],
)
def test_what_is_no_yaml_tree_keeps_its_reading(text):
    assert read_yaml(text) is None
    units = units_of(text, "story.nl")  # the other readers read it, without error
    assert units and read_source(text)[1] is not None


def test_duplicate_keys_and_streams_are_read_as_written():
    twice = "service:\n  port: 80\n  port: 8080\n  host: alpha\nother:\n  a: 1\n  b: 2\n"
    claims = " ".join(_atomic(twice).values())
    assert "port: 80" in claims and "port: 8080" in claims
    stream = "kind: first\nspec:\n  size: 3\n  name: one\n---\nkind: second\nspec:\n  size: 5\n  name: two\n"
    units = _atomic(stream)
    assert "spec.size: 3" in units["first"] and "spec.size: 5" in units["second"]
