"""The scope of conditions and restrictions in yes/no answers (gs_symbolic polarity.py, statements.py,
qualifiers.py; issue 20, item 5), on a document written here: a condition that follows a clause governs
that clause only ("X, it is enough if Y" still states X), and "only" or "not all" says No to a question
about every member of a set, while it says Yes of the member it names; a comparison the other way ("fewer
than 8") is another proposition than "more than 8"; "A may …, but B may not" says No of B; a necessity ("must be above 1024") says No to a free choice ("Can it be any port?"); a sentence with the question's words but another verb ("deletes" for
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

## Ports

Any free port can serve the dashboard. The sync port, however, must be a port above 1024.

## Verification

Heron can skip the checksum step by disabling verification in the settings. Disabling verification in the
settings speeds up the first sync.

## Cleanup

At the end of each sync, Heron deletes the local cache of removed folders.
"""


@pytest.mark.parametrize(
    ("question", "verdict", "quoted"),
    [
        # a condition on the next clause ("it is enough if …") does not stop the first from answering
        ("Does Heron need a network connection during setup?", "No.", "does not need a network connection"),
        # "only" restricts a statement to the member it names
        ("Does Heron verify the checksum of every block of a file?", "No.", "first block of each file only"),
        ("Does Heron verify the checksum of all blocks of a file?", "No.", "first block of each file only"),
        (
            "Does Heron verify the checksum of the first block of a file?",
            "Yes.",
            "first block of each file only",
        ),
        # "Some, but not all" answers No to "all"
        ("Do all mirrors of Heron keep a copy of old releases?", "No.", "Some, but not all"),
        # "fewer than 8" is another proposition than "more than 8"
        (
            "Is it allowed to give a share more than 8 upload slots?",
            "Yes.",
            "fine to give a share more than 8",
        ),
        # a free choice ("any" under "can") is limited by a necessity; "any" itself is not
        ("Can the sync port be any port?", "No.", "must be a port above 1024"),
        ("Can the dashboard use any free port?", "Yes.", "Any free port can serve the dashboard"),
        # an elided verb phrase is said of its own subject
        ("Can guests share a synced folder with other devices?", "No.", "but guests may not"),
        ("Can owners share a synced folder with other devices?", "Yes.", "but guests may not"),
    ],
)
def test_a_yes_no_answer_reads_the_scope_of_what_its_sentence_says(question, verdict, quoted):
    doc = ask(question, units_of(DOC))
    assert doc.answer.startswith(verdict), doc.answer
    assert quoted in doc.answer


def test_a_condition_opening_the_sentence_still_governs_its_main_clause():
    doc = ask("Does Heron pause the upload queue?", units_of(DOC))
    assert not doc.answer.startswith("Yes."), doc.answer
    assert doc.answer == NO_CONTEXT_ANSWER or "If the disk is full" in doc.answer


def test_a_sentence_without_the_asked_verb_is_no_success():
    doc = ask("Does Heron keep the local cache of removed folders?", units_of(DOC))
    assert doc.result.status != "success", (doc.answer, doc.result.evidence)


def test_a_gerund_subject_question_turns_on_the_verb_after_its_phrase():
    # "Does [disabling verification in the settings] slow down …?" turns on "slow", which no sentence says
    for question in (
        "Does disabling verification in the settings slow down Heron?",
        "Does disabling verification in the settings slow down the first sync?",
    ):
        slow = ask(question, units_of(DOC))
        assert slow.result.status != "success", slow.answer
    fast = ask("Does disabling verification in the settings speed up the first sync?", units_of(DOC))
    assert fast.answer.startswith("Yes."), fast.answer
    assert "speeds up the first sync" in fast.answer
    assert fast.result.status == "success"
