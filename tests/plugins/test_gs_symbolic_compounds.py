"""Two question words the documents write as one ("wake signal" and WAKESIGNAL) are stated by a passage that
writes the compound, in its text or in its heading."""

from __future__ import annotations

from answer_support import units_of
from mrpvm.plugins.gs_symbolic.compounds import closed_compounds, with_compounds
from mrpvm.plugins.gs_symbolic.evidence import Scorer, split_units
from mrpvm.plugins.sdk.text import terms

LOOM = """# Loom scheduler

## WAKESIGNAL

When the directive is missing, the default is `SIGUSR1`.
The signal may be given by name or by number.

## Spindles

A spindle holds one thread of the pattern.
"""

QUESTION = "What is the default wake signal?"


def test_a_closed_compound_of_the_evidence_joins_two_adjacent_question_words() -> None:
    asked = terms(QUESTION)
    found = closed_compounds(QUESTION, asked, {"wakesign", "default", "spindl"})
    assert found == [(frozenset(terms("wake signal")), "wakesign")]
    assert closed_compounds(QUESTION, asked, {"default", "spindl"}) == []  # the evidence writes no compound
    # "the wake": a stopword is no part of a compound, even when the evidence writes "thewake"
    assert closed_compounds("Is the wake signal sent?", terms("Is the wake signal sent?"), {"thewak"}) == []
    assert with_compounds({"wakesign"}, found) >= set(terms("wake signal"))
    assert with_compounds({"default"}, found) == {"default"}


def test_a_sentence_under_the_compound_heading_covers_both_words() -> None:
    pool = split_units(units_of(LOOM))
    asked = terms(QUESTION)
    default = next(s for s in pool if s.text.startswith("When the directive is missing"))
    with_question = Scorer(pool, asked, question=QUESTION)
    without = Scorer(pool, asked)
    context = set(default.terms) | default.under
    assert with_question.asked_coverage(context) == 1.0
    assert without.asked_coverage(context) < 0.5
