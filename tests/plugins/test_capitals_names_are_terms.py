"""A function word written in capitals names something ("the ALL option", "IS NOT NULL", "the IT team"):
it is a term on both sides, the question's and the index's, so a reference entry headed by it can be
found. Session 19 (answers14): a question asking what the ALL option of a build command does lost "ALL"
to the stopword list, and no retriever could reach the option's entry. A text written all in capitals ("SEE
ALSO") is read in lower case: its capitals name nothing.

Golden cases written for these tests (no story of the eval suites), asked as a turn does (answer_support).
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.sdk.answer_types import option_kinds
from mrpvm.protocol.analysis import content_words, terms

# an rST reference page: keywords as a definition list, two of them function words in capitals
PAGE = """kiln_fire
=========

Fire the named kiln with the given schedule. Switch the kiln off and let it cool before you open it.

The keywords are:

``OFF``
  Cut the power to the elements as soon as the witness cone bends.

``ONLY``
  Fire the top shelf alone and leave the lower shelves cold.

``GLAZE``
  Hold the peak temperature for twenty minutes so the glaze can mature.
"""


def test_a_function_word_in_capitals_is_a_term_and_in_lower_case_is_not():
    assert "off" in terms("What does the OFF keyword do?")
    assert "off" not in terms("Switch the kiln off.")
    assert terms("the column IS NOT NULL") == ["column", "is", "not", "null"]
    assert "all" in content_words("the ALL option") and "all" not in content_words("all options")
    # a text all in capitals names nothing by its capitals; single capitals A and I are still words
    assert terms("SEE ALSO") == ["see"] and terms("WHAT IS THE DEFAULT?") == ["default"]
    assert terms("A cat I fed") == ["cat", "feed"] and "m" in terms("an M suffix")
    assert terms("``OFF``") == ["off"]  # one word in capitals (a heading) is a name


def test_an_entry_headed_by_a_function_word_in_capitals_answers_what_it_does():
    # "keyword" names the kind of thing OFF is ("the -z option"): the page's "The keywords are:" is no answer
    assert option_kinds("What does the OFF keyword do?") == ["keyword"]
    assert option_kinds("What port does the HTTP server use?") == []  # an acronym modifies its noun
    doc = ask("What does the OFF keyword do?", units_of(PAGE, "kiln.rst"))
    assert "witness cone" in (doc.answer or ""), doc.answer
    doc = ask("What does ONLY do?", units_of(PAGE, "kiln.rst"))
    assert "top shelf" in (doc.answer or ""), doc.answer


def test_a_keyword_the_page_does_not_list_is_still_refused():
    doc = ask("What does the NOT keyword of kiln_fire do?", units_of(PAGE, "kiln.rst"))
    assert doc.result.status == "no-context", doc.answer
