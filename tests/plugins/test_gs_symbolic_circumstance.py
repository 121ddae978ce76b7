"""Golden tests of an honest `success` for a behaviour question (gs_symbolic/circumstance.py, issue 20 item
2), on a document written here: "what happens to X when C?", "what does X do with Y?" answered by a passage
that says what X does in general and nothing of the asked circumstance is the best candidate (weak), never
`success`; a passage that speaks to every part of it, in the question's words or in close ones ("ends" /
"exit"), stays `success`."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.circumstance import asks_behaviour, unspoken
from mrpvm.plugins.sdk.text import terms

# a build tool's manual where the passages about a failing hook, lines of tabs and an install of the
# cache server alone are absent: what is left describes hooks, saving and the cache in general
SILENT = """Kilnbuild manual
================

Hooks
-----

The ``HOOK`` instruction adds a *build hook* to the recipe, to be run at a later time, when the recipe is
used by another build.

Saving
------

When a recipe is saved, kilnbuild rewrites every line of the recipe with its own indentation.

Cache
-----

The minimal requirement for running the cache is ``redis-server``.
"""

# the same manual with the passages that answer
SPOKEN = """Kilnbuild manual
================

Hooks
-----

If one of the build hooks fails, the build that uses the recipe stops with an error.

Saving
------

When a recipe is saved, lines holding only tabs are dropped from the recipe.

Drafts
------

A draft recipe is discarded on session exit.
"""


def test_behaviour_questions_are_told_from_other_forms():
    assert asks_behaviour("What happens to lines holding only tabs when a recipe is saved?")
    assert asks_behaviour("What does tidy() do with trailing tabs?")
    assert asks_behaviour("How does kilnbuild order the hooks of a recipe?")
    assert not asks_behaviour("How do I save a recipe?")  # a procedure: its words name the goal
    assert not asks_behaviour("Which function removes spaces?")
    assert unspoken("Which function removes spaces?", set(), "") == []


def test_a_word_of_the_circumstance_the_passage_never_states_is_unspoken():
    text = "When a recipe is saved, kilnbuild rewrites every line of the recipe."
    silent = unspoken(
        "What happens to lines holding only tabs when a recipe is saved?", set(terms(text)), text
    )
    assert "tabs" in silent and "holding" in silent
    assert "saved" not in silent and "recipe" not in silent


QUESTIONS = [
    "What happens if one of the build hooks fails?",
    "What happens to lines holding only tabs when a recipe is saved?",
]


@needs_model
def test_a_passage_describing_the_thing_in_general_is_not_success():
    for question in QUESTIONS:
        doc = ask(question, units_of(SILENT, "kiln.rst"))
        assert doc.result.status != "success", question  # what the thing does in general
    doc = ask("What happens when only redis-server is installed?", units_of(SILENT, "kiln.rst"))
    assert doc.result.status != "success"  # a requirement, nothing of what happens once it is installed


@needs_model
def test_a_passage_speaking_to_the_circumstance_stays_success():
    for question, said in zip(QUESTIONS, ["stops with an error", "dropped"], strict=True):
        doc = ask(question, units_of(SPOKEN, "kiln.rst"))
        assert doc.result.status == "success", question
        assert said in doc.answer


@needs_model
def test_a_circumstance_said_in_close_words_stays_success():
    # "ends" is never written: "exit" says it (the model's cosine of the two words)
    doc = ask("What happens to a draft recipe when the session ends?", units_of(SPOKEN, "kiln.rst"))
    assert doc.result.status == "success"
    assert "discarded" in doc.answer
    assert (
        unspoken("What happens to a draft when the session ends?", set(terms(doc.answer)), doc.answer) == []
    )


def test_a_negation_is_a_polarity_not_a_word_to_state():
    text = "If you have not chosen a recipe or a hook, kilnbuild builds the plain recipe."
    assert unspoken("What happens if neither a recipe nor a hook is chosen?", set(terms(text)), text) == []
