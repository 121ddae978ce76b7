"""A "when" question asks for a time or for the circumstance something happens in (gs-symbolic,
sdk/time_answers.py): a condition ("if …"), a temporal clause ("once …") or a span ("after 48 hours")
answers it as a date does. Before, such a question was refused for want of a date. A "when" question the
document does not answer stays refused, and one about the future still needs a date or a release."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sdk.time_answers import asks_circumstance, states_circumstance
from mrpvm.protocol.document import CnlDocument

RULES = """# Quarry project rules

## Reviewers

Reviewers maintain the quarry repository.
A reviewer is automatically made inactive if it has been more than 6 months since the last review.

## Voting

The vote passes if, after 48 hours, there are two or more approvals.

## Releases

The next release will add a plugin system.
"""


def solve(question: str) -> CnlDocument:
    return ask(question, units_of(RULES, "rules.md", "rules"))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When is a reviewer made inactive?", "more than 6 months"),
        ("When does the vote pass?", "after 48 hours"),
    ],
)
def test_a_condition_or_a_span_answers_a_when_question(question: str, expected: str) -> None:
    doc = solve(question)
    assert doc.result.status == "success", doc.answer
    assert expected in doc.answer


@pytest.mark.parametrize(
    "question",
    [
        "When was the quarry repository created?",  # the words are there, no time nor circumstance is
        "When will the next release ship?",  # the future: a date or a release, not a clause
    ],
)
def test_a_when_question_the_document_does_not_answer_is_refused(question: str) -> None:
    doc = solve(question)
    assert doc.result.status != "success", doc.answer


def test_what_reads_as_a_circumstance() -> None:
    assert asks_circumstance("When does the vote pass?")
    assert not asks_circumstance("What year was it released?")
    assert states_circumstance("The vote passes if there are two approvals.")
    assert states_circumstance("It expires after 20 minutes.")
    assert not states_circumstance("Reviewers maintain the quarry repository.")
