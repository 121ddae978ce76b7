"""A yes/no question opened by would/could/might is read by the polarity readers (polar_modal.py; issue 20).

An invented proposal for a community garden's plot rules: "Would raised beds be allowed under the
proposal?" over "Raised beds would not be allowed." was refused on main (every question writing *would*
was hypothetical, left to explicit statements alone). The modal that opens the question is no supposition;
the sentence stating the proposition with that modal answers it, `success`. Stated without the modal, the
answer is weak; a condition ("… if …") keeps the question hypothetical."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.polar_modal import modal_asked, states_modal
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

PROPOSAL = """# Plot rules proposal for the Linden Row community garden

## Summary

The committee proposes new rules for the allotment plots, to be voted on in March.

## What the proposal changes

* Raised beds would not be allowed on the shared lawn.
* Each plot holder would be given a key to the tool shed.
* Compost bins are emptied by volunteers every Sunday.

## Open questions

The committee has not decided how the waiting list is ordered.
"""


def _ask(question: str) -> tuple[str, str]:
    doc = ask(question, units_of(PROPOSAL, "proposal.md"))
    return doc.result.status, doc.answer or ""


@needs_model
def test_a_negated_modal_statement_answers_no() -> None:
    status, answer = _ask("Would raised beds be allowed on the shared lawn under the proposal?")
    assert answer.startswith("No.") and "would not be allowed" in answer, answer
    assert status == "success", (status, answer)


@needs_model
def test_a_modal_statement_answers_yes() -> None:
    """A guard (answered on main too, by explicit.py's modal claims): the polarity readers keep it."""
    status, answer = _ask("Would each plot holder be given a key to the tool shed?")
    assert answer.startswith("Yes.") and "key to the tool shed" in answer, answer
    assert status == "success", (status, answer)


@needs_model
def test_without_the_modal_the_answer_is_weak() -> None:
    status, answer = _ask("Would compost bins be emptied by volunteers?")
    assert answer == NO_CONTEXT_ANSWER or status != "success", (status, answer)


@needs_model
@pytest.mark.parametrize(
    "question",
    [
        "Would raised beds be allowed on the shared lawn if the vote fails?",  # a condition: hypothetical
        "Would the waiting list be ordered by age?",  # not stated
    ],
)
def test_still_refused(question: str) -> None:
    status, answer = _ask(question)
    assert answer == NO_CONTEXT_ANSWER or status != "success", (status, answer)


def test_modal_asked() -> None:
    assert modal_asked("Would #[x] be kept?") == "would"
    assert modal_asked("Could a guest edit the board?") == "could"
    assert modal_asked("Might the job be retried?") == "might"
    assert modal_asked("Would it still work if I remove the cache?") == ""  # a condition
    assert modal_asked("Would it be kept instead?") == ""  # a counterfactual
    assert modal_asked("Could it be that the file would be lost?") == ""  # a second modal
    assert modal_asked("Can a guest edit the board?") == ""  # not hypothetical at all
    assert modal_asked("") == ""


def test_states_modal() -> None:
    assert states_modal("would", "Raised beds would not be allowed.")
    assert states_modal("would", "The key won't be kept.")
    assert states_modal("could", "A location cannot be moved into its children.")
    assert states_modal("might", "The job may be retried.")
    assert not states_modal("would", "The file is deleted.")
    assert not states_modal("", "The file would be deleted.")
