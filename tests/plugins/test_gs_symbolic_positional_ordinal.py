"""An ordinal that places an argument ("the second argument") names no thing (positional.py; issue 20).

An invented function reference: "How many items does take() return when the second argument is omitted?"
over "The take(L,N) function returns the first N items of the list L. If the N argument is omitted, it is
taken to be 10." was refused on main: the reference names its arguments by letter, so "second" is a word
the collection never holds, read as the thing the question turns on. A word the documents never hold that
names a thing ("… when the cache argument is omitted?") still refuses."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.positional import positional_ordinals
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

REFERENCE = """# List functions of the Quillet query language

## take()

The take(L,N) function returns the first N items of the list L.
If the N argument is omitted, it is taken to be 10.

## drop()

The drop(L,N) function returns the list L without its first N items.
A negative N is an error.

## reverse()

The reverse(L) function returns the items of L in reverse order.
"""


def _ask(question: str) -> tuple[str, str]:
    doc = ask(question, units_of(REFERENCE, "functions.md"))
    return doc.result.status, doc.answer or ""


@needs_model
def test_a_positional_ordinal_does_not_refuse() -> None:
    _, answer = _ask("How many items does take() return when the second argument is omitted?")
    assert "taken to be 10" in answer, answer


@needs_model
def test_a_word_naming_an_unheld_thing_still_refuses() -> None:
    status, answer = _ask("How many items does take() return when the cache argument is omitted?")
    assert answer == NO_CONTEXT_ANSWER or status != "success", (status, answer)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What happens when the second argument is omitted?", {"second"}),
        ("Which value does its third field hold?", {"third"}),
        ("When was it first released?", set()),  # an adverb, no position
        ("How long is the 30 second timeout?", set()),  # a unit of time
        ("Does it wait a second?", set()),
        ("", set()),
    ],
)
def test_positional_ordinals(question: str, expected: set[str]) -> None:
    assert positional_ordinals(question) == expected
