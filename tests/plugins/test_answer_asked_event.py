"""Golden tests of an honest status (issue 20: `success` that is not true), on a guide written here.

A time or a place answers a question only about the event the question asks of. A word the question turns on
that the documents never use ("released" in a guide that never speaks of a release) leaves the best candidate
weak, unless the answer states a synonym of it (unsaid.py). A two-sentence passage that takes the subject from
one sentence and the time from another ("The entry index is kept in X. Themes are copied when a journal is
created.") does not say when the entry index is removed: the sentence that holds the asked time, place or
figure must state a word of the question itself (support.py). Questions the guide answers stay `success`."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.question import analyse, with_collection
from mrpvm.plugins.gs_symbolic.unsaid import unsaid_word
from mrpvm.protocol.document import CnlDocument

GUIDE = """# Inkwell user guide

Inkwell keeps journals of plain-text entries on your computer.

## Installing Inkwell

Download the installer and run `inkwell-setup --user` to install Inkwell for your account.
The first start after installing takes about a minute while the entry index is built.

## Journals

A journal is a folder of entries with its own entry index.

## Entry index

The entry index of each journal is kept in `.inkwell/index` inside the journal folder.
Themes are copied from the `/opt/inkwell/themes` folder when a journal is created.

## Sharing

A journal can be opened by one user at a time.
"""


def solve(question: str) -> CnlDocument:
    return ask(question, units_of(GUIDE, "inkwell.md", "inkwell"))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When is the entry index built?", "while the entry index is built"),
        ("Where is the entry index kept?", ".inkwell/index"),
        ("When are themes copied?", "when a journal is created"),
    ],
)
def test_a_time_or_place_the_guide_states_is_success(question: str, expected: str) -> None:
    doc = solve(question)
    assert expected in doc.answer, doc.answer
    assert doc.result.status == "success", doc.result.evidence


@needs_model
@pytest.mark.parametrize(
    "question",
    [
        "When was Inkwell first released?",  # nothing is released: installing and a first start are no release
        "When is the journal folder moved?",  # nothing is moved: a journal is created
    ],
)
def test_an_event_the_guide_never_names_is_no_success(question: str) -> None:
    doc = solve(question)
    assert doc.result.status != "success", doc.answer
    assert "never use" in (doc.result.evidence or "")


def test_a_time_from_a_sentence_about_something_else_is_no_success() -> None:
    # "kept" and "entry index" from one sentence, "when a journal is created" from the next (about themes)
    doc = solve("When is the entry index removed?")
    assert doc.result.status != "success", doc.answer


@needs_model
def test_the_asked_word_the_documents_never_use_is_read_from_the_main_clause() -> None:
    def unsaid(question: str, collection: dict[str, float], answer: str) -> str:
        return unsaid_word(with_collection(analyse(question, None), collection), answer)

    asked = {"inkwel": 1.0, "first": 1.0, "releas": 0.0}
    assert unsaid("When was Inkwell first released?", asked, "The first start takes a minute.") == "released"
    desk = {"index": 1.0, "workstat": 0.0}  # a synonym in the answer words it otherwise
    assert unsaid("Where is the index kept on my workstation?", desk, "In `.inkwell`.") == "workstation"
    assert (
        unsaid("Where is the index kept on my workstation?", desk, "On your computer, in `.inkwell`.") == ""
    )
    # a premise, a light verb, the noun naming the kind of answer: not what the question turns on
    premise = {"pass": 0.0, "archiv": 1.0, "name": 1.0}
    assert unsaid("If I don't pass -f, where does it get the archive name?", premise, "From TAPE.") == ""
    assert unsaid("Where does Inkwell keep its index?", {"keep": 0.0, "index": 1.0}, "In `.inkwell`.") == ""
    assert unsaid("Which port does the daemon listen on?", {"port": 0.0, "daemon": 1.0}, "6010") == ""
    assert unsaid("When was Inkwell first released?", {}, "x") == ""  # no weights: nothing known absent
    # an open question is answered by what it names: "accept" is not the slot of a time or a place
    assert unsaid("What values does the mode option accept?", {"accept": 0.0, "mode": 1.0}, "x") == ""
