"""An identifier the question writes constrains which evidence answers it (issue 20: unanswerable questions).

"What is the default value of $Grist::Fold::glue?" over a module manual that states the default of
`$Grist::Fold::width` and none of the glue: the width's sentence shares "default", "value", "Grist" and "Fold"
with the question and was answered with `success`. A variable's name stands for one thing; only the evidence
that writes it (or stands under it) is about that thing, so the question is refused, while the width's
default is still answered; so is a version asked of a variable no evidence writes, not answered by the version
of another. In a reStructuredText list-table the key's cell and its value's cell are units of
their own: the cell that is the name alone labels the cell after it, so "Which values can fold_style be set
to?" is answered from the value cell, not from the table's header row."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.named import written_identifiers
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

MANUAL = """# Grist::Fold - folding long lines

## Description

Grist::Fold breaks long lines of text at word boundaries and joins the pieces again.

## Variables

Lines are folded at `$Grist::Fold::width` columns (default value: 72). Set it to the width of your
terminal.

If you want the folded pieces joined by something other than a newline, set `$Grist::Fold::glue` to the
string of your choice. Every newline the folding adds is replaced by it.

When a word is longer than `$Grist::Fold::width`, it is cut at the last column unless `$Grist::Fold::keep`
is true.

## History

`$Grist::Fold::keep` was added in version 2.1.
"""

KEYS = """Fold settings
=============

.. list-table::
   :header-rows: 1

   * - Key
     - Supported values
   * - ``fold_style``
     - Set to ``hard``, ``soft`` or ``none`` to choose how lines are broken. Case is ignored.
   * - ``fold_width``
     - A whole number of columns. Lines longer than this are folded.
   * - ``fold_marker``
     - A single character.
"""


def test_the_identifiers_a_question_writes():
    assert written_identifiers("What is the default value of $Grist::Fold::glue?") == ["$Grist::Fold::glue"]
    assert written_identifiers("Which values can fold_style take, and what does foldLater do?") == [
        "fold_style",
        "foldLater",
    ]
    assert written_identifiers("Does Grist::Fold run on macOS?") == ["Grist::Fold"]
    assert written_identifiers("What does the -x option do?") == []
    assert written_identifiers("Which variable is used instead of $Grist::Fold::width?") == []


@needs_model
def test_a_default_stated_only_of_a_sibling_variable_is_refused():
    units = units_of(MANUAL, "fold.md")
    doc = ask("What is the default value of $Grist::Fold::glue?", units)
    assert doc.result.status == "no-context", doc.answer
    assert doc.answer == NO_CONTEXT_ANSWER
    doc = ask("What is the default value of $Grist::Fold::width?", units)
    assert doc.result.status == "success", doc.answer
    assert "72" in (doc.answer or "")


@needs_model
def test_an_identifier_no_evidence_writes_is_not_answered_from_another():
    units = units_of(MANUAL, "fold.md")
    doc = ask("In which version was $Grist::Fold::indent added?", units)
    assert doc.answer == NO_CONTEXT_ANSWER, doc.answer
    doc = ask("In which version was $Grist::Fold::keep added?", units)
    assert "2.1" in (doc.answer or ""), doc.answer


@needs_model
def test_a_key_cell_labels_the_value_cell_after_it():
    units = units_of(KEYS, "fold.rst")
    doc = ask("Which values can fold_style be set to?", units)
    assert "``soft``" in (doc.answer or ""), doc.answer
