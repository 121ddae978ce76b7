""" "What is X?" is answered by a sentence about X (gs_symbolic/definiendum.py): a definition by apposition
counts as one, and a sentence naming X inside a clause about something else is no `success` (issue 20)."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.definiendum import about, apposes, asked_definiendum
from mrpvm.plugins.gs_symbolic.evidence import Sentence
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.document import KnowledgeUnit

NOTES = """Kiln sandboxes
==============

Why sandboxes
-------------

Plugins often need native libraries that clash with each other.  The fix is to run each plugin in
a :term:`kiln sandbox`, a private directory tree holding its own runtime and libraries.

Making sandboxes
----------------

The tool used to make and repair kiln sandboxes is called :mod:`kilnctl`.
"""


def _sentence(text: str, heading: str = "Notes") -> Sentence:
    unit = KnowledgeUnit(
        id="u",
        sourceId="s",
        chunkId="c",
        kuType="atomic",
        role="Description",
        topic="t",
        sectionTitle=heading,
    )
    return Sentence(text, unit, terms(text), (0, 0, 0))


def test_the_definiendum_is_a_short_phrase_naming_a_thing():
    assert asked_definiendum("What is a kiln sandbox?") == frozenset(terms("kiln sandbox"))
    assert asked_definiendum("What is the default port of kilnd?") == frozenset()  # an attribute
    assert asked_definiendum("What is the default sandbox size?") == frozenset()  # a value
    assert asked_definiendum("What does kilnctl do?") == frozenset()


def test_a_sentence_is_about_what_it_opens_with_defines_by_apposition_or_is_headed_by():
    sandbox = frozenset(terms("kiln sandbox"))
    assert about(sandbox, _sentence("A kiln sandbox keeps a plugin's libraries apart."))
    assert apposes(sandbox, _sentence("Run it in a :term:`kiln sandbox`, a private directory tree."))
    assert about(sandbox, _sentence("It keeps libraries apart.", heading="Kiln sandbox"))
    assert not about(sandbox, _sentence("It is fast.", heading="Making kiln sandboxes"))  # a section
    assert not about(sandbox, _sentence("The tool used to make kiln sandboxes is called kilnctl."))
    assert not apposes(sandbox, _sentence("The manual, a long text, mentions kiln sandboxes."))


@needs_model
def test_what_is_x_is_not_a_success_from_a_sentence_about_something_else():
    doc = ask("What is a kiln sandbox?", units_of(NOTES, "sandboxes.rst"))
    assert not (doc.result.status == "success" and "is called" in doc.answer)
    assert "private directory tree" in doc.answer
