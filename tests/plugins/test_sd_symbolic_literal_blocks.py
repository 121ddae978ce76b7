"""reStructuredText literal blocks in a plain-text source (sd-symbolic outline_labels.mark_literal_blocks):
after a paragraph ending with "::", or a code directive, every deeper-indented line is code whatever its
punctuation (a doctest's output, a shell session), and the paragraph stays the block's lead-in; a
directive like ".. note::" opens no literal block (its body is prose). Issue 20, deliverable 4: a step
keeps the command or code block that follows it. Also what gs-symbolic makes of such entries: a bare
lead-in ("For example::") is no answer alone, and "which function …" names the entry its sentence leads."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sd_symbolic.source_units.outline import looks_like_plain_text
from mrpvm.plugins.sdk.embedding import available

GUIDE = """Using the brewctl tool
======================

Setting up
----------

To create a new batch, run the tool with the batch name::

   brewctl new amber-ale

This makes the ``amber-ale`` folder.

On Windows, run::

  brewctl.exe new amber-ale

To list the recipes, one line each, run:

.. code-block:: console

  $ brewctl list
  Amber ale (5 litres).
    Pale malt, 4 kg.
  Stout (3 litres).

.. note::

   The tool refuses a batch name that is already in use.

Cleaning up
-----------

Remove a finished batch with ``brewctl drop``.
"""


def _units() -> list:
    return [u for u in units_of(GUIDE, "guide.rst") if u.kuType == "atomic"]


def _text(unit) -> str:
    return unit.textBody or unit.claim or ""


def _holding(units: list, text: str):
    found = [u for u in units if text in _text(u)]
    assert len(found) == 1, [_text(u) for u in found]
    return found[0]


def test_the_document_is_read_by_its_layout():
    assert looks_like_plain_text(GUIDE)


def test_a_lead_ending_with_two_colons_keeps_its_block_as_code():
    unit = _holding(_units(), "brewctl new amber-ale")
    assert unit.chunkType == "code"
    assert "To create a new batch" in _text(unit)


def test_a_short_lead_over_its_block_is_not_a_term():
    units = _units()
    unit = _holding(units, "brewctl.exe new amber-ale")
    assert unit.title is None or "On Windows" not in unit.title
    assert unit.chunkType == "code"
    assert "On Windows, run" in _text(unit)
    assert not any((u.title or "").startswith("On Windows") for u in units)


def test_a_code_directive_body_is_one_block_whatever_its_punctuation():
    units = _units()
    unit = _holding(units, "$ brewctl list")
    assert unit.chunkType == "code"
    assert "To list the recipes" in _text(
        unit
    )  # the sentence leading into the directive introduces the block
    for line in ("Amber ale (5 litres).", "Pale malt, 4 kg.", "Stout (3 litres)."):
        assert line in _text(unit)
    assert not any((u.title or "").startswith(("Amber", "Pale", "Stout")) for u in units)


def test_a_note_directive_stays_prose():
    unit = _holding(_units(), "refuses a batch name")
    assert unit.chunkType != "code"
    assert "```" not in _text(unit)


def test_the_directive_line_is_markup_no_unit_quotes():
    assert not any(".. code-block" in (u.claim or "") for u in _units())


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_a_step_is_answered_with_the_block_it_leads_to():
    doc = ask("Which command lists the recipes?", units_of(GUIDE, "guide.rst"))
    assert "$ brewctl list" in doc.answer
    assert "To list the recipes" in doc.answer
    assert ".. code-block" not in doc.answer


REFERENCE = """The spool module
================

.. function:: rewind(tape)

   Move the read head of *tape* back to its first block.

   For example::

      rewind(t)

.. attribute:: speed

   (default: ``4``) Blocks read per second.
"""


def test_a_directive_names_its_entry_by_its_argument():
    titles = {u.title for u in units_of(REFERENCE, "spool.rst") if u.title}
    assert {"rewind(tape)", "speed"} <= titles
    assert not any(t.startswith(".. ") for t in titles)


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_a_lead_in_alone_is_no_answer():
    doc = ask("What does rewind do?", units_of(REFERENCE, "spool.rst"))
    assert "Move the read head" in doc.answer
    assert "For example" not in doc.answer


SPOOL_MD = """# The spool module

## rewind(tape)

Move the read head of the tape back to its first block. It takes a few seconds.

## eject(tape)

Push the tape out of the drive and park the head.
"""


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_which_entry_is_answered_with_the_entry_its_sentence_leads():
    """gs-symbolic solver._entry_name: "which function …" is answered by the entry whose first sentence
    says it; the sentence alone names no function."""
    doc = ask("Which function moves the read head back to the first block?", units_of(SPOOL_MD, "spool.md"))
    assert doc.answer.startswith("rewind(tape): Move the read head")
    assert "eject" not in doc.answer
