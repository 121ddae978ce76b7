"""An adverb between a how-to's verb and its object is no part of the object (gs_symbolic/action.py):
"Print only the owner of dataset 42" acts on an owner, not on datasets' IDs, so it does not tell how to
"print just the dataset IDs" (issue 20: a `success` whose instruction is about another thing)."""

from __future__ import annotations

from answer_support import ask, needs_model, sentence_of, units_of
from mrpvm.plugins.gs_symbolic.action import asked_action, misapplied
from mrpvm.plugins.sdk.text import terms

MANUAL = """Lantern datasets
================

Lantern keeps every dataset under a numeric ID. The ID of a dataset never changes.

Showing one dataset
-------------------

Print only the owner of dataset 42 by its ID: ``lantern show --id 42 --field owner``.

Listing datasets
----------------

``lantern ls`` prints every dataset with its size and its owner.
"""


def test_the_asked_object_is_read_past_an_adverb():
    action = asked_action("How do I print just the dataset IDs?")
    assert action is not None and action.verb == "print"
    assert action.target == frozenset(terms("dataset IDs"))


def test_an_instruction_on_another_object_is_told_past_an_adverb():
    action = asked_action("How do I print just the dataset IDs?")
    assert action is not None
    other = sentence_of("Print only the owner of the dataset IDs with ``lantern show 42 --field owner``.")
    same = sentence_of("Simply print the dataset IDs with ``lantern ls --quiet``.")
    assert misapplied(action, [other])
    assert not misapplied(action, [same])


@needs_model
def test_printing_the_owner_does_not_answer_how_to_print_the_ids():
    for question in ("How do I print just the dataset IDs?", "How do I print only the IDs of the datasets?"):
        doc = ask(question, units_of(MANUAL, "lantern.rst"))
        assert doc.result.status != "success"  # before: the owner's instruction, `success`
        assert "--field owner" not in doc.answer
