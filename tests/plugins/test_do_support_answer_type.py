"""A "what does <noun phrase> <verb>?" question: "what" is the verb's object and the noun phrase after
"does" its subject, so the subject's head noun ("option", "version", "port") names what is asked about, not
the kind of answer. Session 19 (answers14): "What does the COMMENT option display?" was typed as asking
for an option, and the option's own description (which names no other option) was refused.

Golden cases written for these tests (no story of the eval suites), asked as a turn does (answer_support).
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.sdk.answer_types import expected_type

# an rST reference page: options as a definition list, each term in double backquotes
PAGE = """kettle_boil
===========

Boil the water in the named kettle.

The options are:

``QUIET``
  Suppress the whistle when the water reaches its boiling point.

``BANNER``
  Show the given greeting on the kettle's panel before the heating starts.

``LIMIT``
  Stop heating after the given number of minutes.
"""


def test_the_subject_after_does_does_not_type_the_answer():
    assert expected_type("What does the BANNER option show?") not in ("option", "number", "version")
    assert expected_type("What does the version field hold?") != "version"
    # the noun right after the wh-word, or after a copula, still types it
    assert expected_type("What option does kettle_boil take for a greeting?") == "option"
    assert expected_type("Which version does kettle_boil require?") == "version"
    assert expected_type("What is the default port?") == "number"


def test_an_option_described_in_a_definition_list_answers_what_it_does():
    doc = ask("What does the BANNER option show?", units_of(PAGE, "kettle.rst"))
    assert "greeting" in (doc.answer or ""), doc.answer
    assert doc.result.status != "no-context"


def test_an_option_the_page_does_not_list_is_still_refused():
    doc = ask("What does the TIMER option of kettle_boil show?", units_of(PAGE, "kettle.rst"))
    assert doc.result.status == "no-context", doc.answer
