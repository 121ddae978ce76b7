"""The scope of conditions and restrictions in yes/no answers (gs_symbolic polarity.py, statements.py,
qualifiers.py; issue 20, item 5), on a document written here: a condition that follows a clause governs
that clause only ("X, it is enough if Y" still states X), and "only" or "not all" says No to a question
about every member of a set, while it says Yes of the member it names; a comparison the other way ("fewer
than 8") is another proposition than "more than 8"; "A may …, but B may not" says No of B; a sentence with the question's words but another verb ("deletes" for
"keep") is no `success`."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

DOC = """# Heron sync

## Setup

Heron does not need a network connection during setup, it is enough if the network is up before the
first sync. The setup writes its settings to the home folder.

## Integrity

For speed, Heron verifies the checksum of the first block of each file only, not all blocks of it.
If the disk is full, Heron pauses the upload queue.

## Slots

Definitely, don't give a share fewer than 8 upload slots. While it is fine to give a share more than 8
upload slots, most hosts never use them.

## Sharing

Owners may share a synced folder with other devices, but guests may not.

## Mirrors

Some, but not all, mirrors of Heron keep a copy of old releases.

## Cleanup

At the end of each sync, Heron deletes the local cache of removed folders.
"""


def test_a_condition_on_the_next_clause_does_not_stop_the_first_from_answering():
    doc = ask("Does Heron need a network connection during setup?", units_of(DOC))
    assert doc.answer.startswith("No."), doc.answer
    assert "does not need a network connection during setup" in doc.answer


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        ("Does Heron verify the checksum of every block of a file?", "No."),
        ("Does Heron verify the checksum of all blocks of a file?", "No."),
        ("Does Heron verify the checksum of the first block of a file?", "Yes."),
    ],
)
def test_only_restricts_a_statement_to_the_member_it_names(question, verdict):
    doc = ask(question, units_of(DOC))
    assert doc.answer.startswith(verdict), doc.answer
    assert "first block of each file only" in doc.answer


def test_some_but_not_all_answers_no_to_all():
    doc = ask("Do all mirrors of Heron keep a copy of old releases?", units_of(DOC))
    assert doc.answer.startswith("No."), doc.answer
    assert "Some, but not all" in doc.answer


def test_a_condition_opening_the_sentence_still_governs_its_main_clause():
    doc = ask("Does Heron pause the upload queue?", units_of(DOC))
    assert not doc.answer.startswith("Yes."), doc.answer
    assert doc.answer == NO_CONTEXT_ANSWER or "If the disk is full" in doc.answer


def test_a_comparison_the_other_way_is_another_proposition():
    doc = ask("Is it allowed to give a share more than 8 upload slots?", units_of(DOC))
    assert doc.answer.startswith("Yes."), doc.answer
    assert "fine to give a share more than 8" in doc.answer


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        ("Can guests share a synced folder with other devices?", "No."),
        ("Can owners share a synced folder with other devices?", "Yes."),
    ],
)
def test_an_elided_verb_phrase_is_said_of_its_own_subject(question, verdict):
    doc = ask(question, units_of(DOC))
    assert doc.answer.startswith(verdict), doc.answer
    assert "but guests may not" in doc.answer


def test_a_sentence_without_the_asked_verb_is_no_success():
    doc = ask("Does Heron keep the local cache of removed folders?", units_of(DOC))
    assert doc.result.status != "success", (doc.answer, doc.result.evidence)
