"""Indented term lines (reStructuredText's definition lists) as definitions (sd-symbolic entries.py): each
term becomes its own unit named by the term, so a question about one item is not answered by its neighbours,
and a plain paragraph that wraps without indenting stays a paragraph."""

from __future__ import annotations

from answer_support import units_of
from mrpvm.plugins.sd_symbolic.source_units.outline import looks_like_plain_text

NAMES = """Other file names
----------------

Several other file names were considered and rejected.

pysettings.toml
  Most reasonable alternative.

pypa.toml
  While it makes sense to reference the PyPA, it is a somewhat niche
  term.

A plain paragraph that wraps
onto a second line without an indent.

A sentence that ends with a full stop.
  An indented line after it is a continuation, not a definition.

  An indented paragraph whose lines
  share one indent is prose too.

An example::

  # a comment in a literal block (a line like a Markdown heading: the text is read as Markdown)
  [build-system]
"""


def test_the_text_is_read_as_markdown():
    assert not looks_like_plain_text(NAMES)


def atomic(text: str) -> list:
    return [u for u in units_of(text, "names.rst") if u.kuType == "atomic"]


def test_each_indented_term_line_is_a_definition_of_its_own():
    defined = {u.title: u.claim for u in atomic(NAMES) if u.chunkType == "definition"}
    assert defined == {
        "pysettings.toml": "Most reasonable alternative.",
        "pypa.toml": "While it makes sense to reference the PyPA, it is a somewhat niche term.",
    }


def test_prose_without_a_term_line_stays_prose():
    paragraphs = [u.claim for u in atomic(NAMES) if u.chunkType == "paragraph"]
    assert "A plain paragraph that wraps onto a second line without an indent." in paragraphs
    assert any(c.startswith("A sentence that ends with a full stop.") for c in paragraphs)
    assert any("An indented paragraph whose lines share one indent is prose too." in c for c in paragraphs)
