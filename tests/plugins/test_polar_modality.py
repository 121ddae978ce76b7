"""A "Should …?" question is answered by a sentence with deontic force (gs_symbolic qualifiers.deontic;
issue 20, item 5), on a document written here: "discourage … from" says No, and a sentence that only says
what is possible or what some people do ("some teams allow …") answers no recommendation."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

DOC = """# Branch rules of the Lynx project

## Branches

Some distributions allow the size of the package cache to be changed via a local setting.
Contributors are strongly discouraged from rebasing the main branch once it is published.
Contributors should sign every commit they push to the main branch.
"""


def test_discourage_answers_no_to_should():
    doc = ask("Should contributors rebase the main branch?", units_of(DOC))
    assert doc.answer.startswith("No."), doc.answer
    assert "strongly discouraged" in doc.answer


def test_a_recommendation_answers_yes_to_should():
    doc = ask("Should contributors sign every commit they push to the main branch?", units_of(DOC))
    assert doc.answer.startswith("Yes."), doc.answer
    assert "should sign every commit" in doc.answer


def test_what_some_allow_is_no_recommendation():
    doc = ask("Should distributions change the size of the package cache?", units_of(DOC))
    assert doc.answer == NO_CONTEXT_ANSWER, doc.answer
