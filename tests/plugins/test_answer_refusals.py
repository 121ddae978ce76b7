"""Refusing a how-to question the document does not answer (issue 20: false answers), on a guide written here.

A how-to question asks for an action on an object. A passage answers it only when it (with its headings) names
every word of the object (or a synonym) and either names the action (its verb or a synonym) or tells something
to do (an instruction, code, a command written out), not the reverse of the action: a passage about installing
is close in meaning to "How do I uninstall …" and says nothing of uninstalling. When the guide does the action
only to other things ("… will remove the pages from the notebook" for "How do I delete a notebook?"), the
question is refused. A verb a modal governs ("Notebooks can then hold …", "opening it will
change X and modify Y") states what may happen; it is no instruction. Questions the guide does answer, in its
words or others, stay answered. A "where" question is not answered by a phrase saying where something comes
from ("guests from other teams") unless it asks for an origin ("Where are templates copied from?"). "What does X
do?" over documents that never name a word of X is answered as the best candidate at most; "Who reviews X?" is
not answered by a sentence that says X is (not) reviewed, naming no one who reviews it. A
synthesis of the sentences most like an open request is reported as the best candidate, never `success`."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, sentence_of, units_of
from mrpvm.plugins.gs_symbolic.action import asked_action, performs
from mrpvm.plugins.gs_symbolic.definiendum import asked_subject, unnamed
from mrpvm.plugins.gs_symbolic.directives import is_instruction
from mrpvm.plugins.gs_symbolic.evidence import Sentence
from mrpvm.plugins.gs_symbolic.focus import action_verb
from mrpvm.plugins.sdk.agent_answers import agentless
from mrpvm.plugins.sdk.place_answers import asks_origin, states_place
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.document import CnlDocument

GUIDE = """# Ledgerpad user guide

Ledgerpad keeps notebooks of plain-text pages on your computer.

## Installing Ledgerpad

Download the installer and run `ledgerpad-setup --user` to install Ledgerpad for your account.
The first start after installing takes about a minute while the page index is built.

## Notebooks

A notebook is a folder of pages with its own page index.
Different projects can then keep their pages in different notebooks.
Opening a notebook will change the window title to show which notebook you are using, and refresh the page
index so that searching finds its pages.

To rename a notebook, run `ledgerpad mv OLD NEW` while Ledgerpad is closed.

## Page index

The page index of each notebook is kept in `.ledgerpad/index` inside the notebook folder.
Templates are copied from the `/opt/ledgerpad/templates` folder when a notebook is created.

## Sharing

Shared notebooks are read-only for guests from other teams, because their edits are not reviewed.

## Pages

`ledgerpad rm PAGE` followed by one or more page names will remove the pages from the notebook.

I have made a change to a page by mistake. How do I undo it?
Run `ledgerpad restore PAGE` to bring back the version saved before your change.
"""


def solve(question: str) -> CnlDocument:
    return ask(question, units_of(GUIDE, "ledgerpad.md", "ledgerpad"))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How do I rename a notebook?", "ledgerpad mv"),
        ("How do I install Ledgerpad?", "ledgerpad-setup"),
        ("How do I remove pages from a notebook?", "ledgerpad rm"),
        ("How do I undo a change to a page?", "ledgerpad restore"),
        ("Where is the page index kept?", ".ledgerpad/index"),
        ("Where are templates copied from?", "/opt/ledgerpad/templates"),
    ],
)
def test_a_how_to_question_the_guide_answers_is_answered(question: str, expected: str) -> None:
    doc = solve(question)
    assert expected in doc.answer, doc.answer
    assert doc.sources


@needs_model
@pytest.mark.parametrize(
    "question",
    [
        "How do I uninstall Ledgerpad?",  # the guide only installs: the reverse of the action
        "How do I delete a notebook?",  # pages are removed from a notebook, nothing deletes one
        "How do I change the default notebook name?",  # a heading says "change", nothing names a default
    ],
)
def test_a_how_to_question_the_guide_does_not_answer_is_refused_without_sources(question: str) -> None:
    doc = solve(question)
    assert doc.result.status == "no-context", doc.answer
    assert not doc.sources


def test_a_phrase_saying_where_something_comes_from_is_no_place_where_it_is():
    doc = solve("Where are shared notebooks stored?")  # "guests from other teams" names no place
    assert doc.result.status != "success", doc.answer
    assert not states_place("It is read-only for guests from other teams.", origin=False)
    assert states_place("Copied from the `/usr/share/x` folder.", origin=False)  # a path, a place word
    assert states_place("Packages come from the Python Package Index.", origin=True)
    assert states_place("It is kept in `.ledgerpad/index`.", origin=False)
    assert asks_origin("Where does pip install packages from by default?")
    assert not asks_origin("Where is the index kept?")


def test_a_synthesis_of_related_sentences_is_no_success():
    # an open request with many words is answered by the sentences most like it: no one of them was found
    # to answer it, so the status says the answer is the best candidate
    doc = solve(
        "Explain how the page index of a notebook is built, kept and searched after installing Ledgerpad."
    )
    assert "page index is built" in doc.answer
    assert doc.result.status == "insufficient"
    assert "a synthesis" in (doc.result.evidence or "")


def test_what_a_thing_the_documents_never_name_does_is_no_success():
    doc = solve("What does ledgerpad sync do?")  # "sync" is never written: the guide does not say
    assert doc.result.status != "success", doc.answer
    assert solve("What does ledgerpad mv do?").result.status == "success"
    assert asked_subject("What does ledgerpad sync do?") == frozenset(terms("ledgerpad sync"))
    assert asked_subject("What is a notebook?") == frozenset(terms("notebook"))
    assert unnamed(frozenset(terms("ledgerpad sync")), {"ledgerpad": 1.2, "sync": 0.0}) == "sync"
    assert unnamed(frozenset(terms("ledgerpad")), {}) == ""  # no weights: nothing known to be absent


def test_a_verb_said_only_in_the_passive_without_an_agent_names_no_one_who_does_it():
    doc = solve("Who reviews guest edits?")  # "their edits are not reviewed": guests are named, no reviewer
    assert doc.result.status != "success", doc.answer
    review = terms("reviews")[0]
    assert agentless("Their edits are not reviewed.", review)
    assert agentless("Edits are carefully reviewed.", review)
    assert not agentless("Edits are reviewed by the maintainers.", review)
    assert not agentless("The maintainers review edits.", review)


def test_the_asked_action_object_and_verb_are_read():
    action = asked_action("How do I change the default branch name for new repositories?")
    assert action is not None and action.target == frozenset(terms("default branch name"))
    assert action.head == next(iter(terms("name")))
    assert action_verb("How do I uninstall it?") == "uninstall"
    assert action_verb("How do I get the old behaviour back?") == ""  # a light verb


def test_a_verb_a_modal_governs_is_no_instruction():
    assert not is_instruction("Different projects can then keep their pages in different notebooks.")
    assert not is_instruction("Opening it will change the title, and refresh the page index.")
    assert is_instruction("Open the settings, then run the check.")
    assert is_instruction("To rename a notebook, run the mover.")
    assert is_instruction("You can open the settings: run the check.")  # a new clause after a colon


def test_the_action_is_named_by_its_verb_or_in_the_heading():
    action = asked_action("How do I rename a notebook?")
    assert action is not None
    assert performs(action, [sentence_of("Notebooks are renamed by the mover.")])
    assert not performs(action, [sentence_of("A notebook is a folder of pages.")])
    headed = Sentence(
        "Run the mover.",
        sentence_of("x").unit,
        terms("Run the mover."),
        (0, 0, 0),
        under=frozenset(terms("Renaming notebooks")),
    )
    assert performs(action, [headed])
