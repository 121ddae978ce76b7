"""A span of time stated by its bound answers "how long" (extent.py; issue 20: false refusals).

An invented guide to a tool library's lending rules: "How long may I keep a borrowed drill?" over "A
borrowed tool may be kept until the library closes on Saturday." was refused on main (no figure and unit,
so the passage was read as not stating a duration); the bound ("until …", "for the lifetime of …",
"indefinitely") is the duration's value. Questions about spans the guide does not bound stay refused."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.extent import states_extent
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

GUIDE = """# Lending rules of the Alder Street tool library

## Borrowing

Members borrow tools at the front desk with their library card.
A borrowed drill may be kept until the library closes on Saturday.
Ladders are lent for the whole duration of a member's renovation project.
Safety goggles handed out at the desk are the member's to keep indefinitely.

## Returns

Tools are returned to the front desk.
A volunteer checks each returned tool for damage before it is lent again.

## Membership

Membership is free for residents of the district.
A member's card is renewed at the front desk.
"""


def _ask(question: str) -> tuple[str, str]:
    doc = ask(question, units_of(GUIDE, "lending.md"))
    return doc.result.status, doc.answer or ""


@needs_model
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How long may I keep a borrowed drill?", "until the library closes"),
        ("How long are ladders lent?", "whole duration of a member's renovation project"),
    ],
)
def test_a_bound_answers_how_long(question: str, expected: str) -> None:
    status, answer = _ask(question)
    assert expected in answer, answer
    assert status == "success", (status, answer)


@needs_model
@pytest.mark.parametrize(
    "question",
    [
        "How long does the damage check of a returned tool take?",  # no span stated at all
        "How long is a membership card valid?",  # renewed, but for no stated span
    ],
)
def test_no_bound_no_answer(question: str) -> None:
    status, answer = _ask(question)
    assert answer == NO_CONTEXT_ANSWER or status != "success", (status, answer)


@pytest.mark.parametrize(
    "text",
    [
        "The key stays valid until you sign out.",
        "Sessions last till the next restart.",
        "The lock is held for the lifetime of the process.",
        "Logs are kept for as long as the account exists.",
        "Backups are kept indefinitely.",
        "The token expires after 30 minutes.",  # a measure, as before
    ],
)
def test_states_extent(text: str) -> None:
    assert states_extent(text)


@pytest.mark.parametrize(
    "text",
    [
        "Until now, no release has changed the format.",  # points back at another time
        "The key is valid.",
        "Keep the receipt while you like the tool.",  # a condition, no span
        "",
    ],
)
def test_states_no_extent(text: str) -> None:
    assert not states_extent(text)
