"""A how-to answer performs the asked action on the asked object (gs_symbolic/action.py), and a Sphinx
cross-reference role is no command (sdk answer_shapes.without_references): issue 20, an honest status."""

from __future__ import annotations

from answer_support import ask, needs_model, sentence_of, units_of
from mrpvm.plugins.gs_symbolic.action import asked_action, misapplied
from mrpvm.plugins.sdk.answer_shapes import mentions_type, without_references
from mrpvm.plugins.sdk.text import terms

GUIDE = """Quarry Workspaces
=================

A workspace is a folder that holds your datasets and the indexes built over them.

Creating a workspace
--------------------

The module used to create and manage workspaces is called :mod:`quarry`.  :mod:`quarry` will usually
pick the newest index format your installation supports.

To create a workspace, choose an empty folder and run the :mod:`quarry` module with its path::

   python3 -m quarry init ./site

Managing datasets
-----------------

``quarry drop`` followed by one or more dataset names will remove the datasets from the workspace.

``quarry list`` shows every dataset a workspace holds, with its size.
"""


def test_the_action_and_its_object_are_read_from_a_how_to_question():
    action = asked_action("How do I delete a virtual environment on Linux?")
    assert action is not None and action.verb == "delete"
    assert action.target == frozenset(terms("virtual environment"))
    assert asked_action("How do I make it the default?") is None  # a light verb carries no action
    assert asked_action("What does quarry drop do?") is None


def test_an_action_on_another_object_is_told_from_the_asked_one():
    action = asked_action("How do I delete a workspace?")
    assert action is not None
    other = sentence_of("``quarry drop`` will delete the datasets from the workspace.")
    same = sentence_of("Run ``quarry purge`` to delete the workspace and everything in it.")
    passive = sentence_of("A workspace can be deleted by running ``quarry purge``.")
    unnamed = sentence_of("Open the settings and delete the datasets.")  # the workspace is not named
    assert misapplied(action, [other])
    assert not misapplied(action, [same])
    assert not misapplied(action, [passive])  # no object read after the verb: nothing to tell
    assert not misapplied(action, [unnamed])


def test_a_cross_reference_role_is_no_command():
    assert without_references("It is called :mod:`quarry`.") == "It is called quarry."
    assert without_references("See :py:func:`~quarry.init`.") == "See quarry.init."
    assert not mentions_type("The module is called :mod:`quarry`.", "command")
    assert mentions_type("Run :program:`quarry` or ``quarry init``.", "command")


@needs_model
def test_removing_things_from_the_workspace_does_not_answer_how_to_delete_it():
    doc = ask("How do I delete a workspace?", units_of(GUIDE, "workspaces.rst"))
    assert doc.result.status != "success"
    assert "remove the datasets from the workspace" not in doc.answer


@needs_model
def test_removing_the_datasets_is_answered_by_the_sentence_that_does_it():
    doc = ask("How do I remove datasets from a workspace?", units_of(GUIDE, "workspaces.rst"))
    assert "quarry drop" in doc.answer
    assert doc.result.status == "success"


@needs_model
def test_which_command_is_answered_by_the_lead_in_and_its_block_not_by_a_module_reference():
    doc = ask("Which command creates a workspace?", units_of(GUIDE, "workspaces.rst"))
    assert "python3 -m quarry init ./site" in doc.answer
    assert "module used to create" not in doc.answer
