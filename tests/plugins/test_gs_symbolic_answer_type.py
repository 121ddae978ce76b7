"""gs-symbolic's answer-type re-ranking: a question's form ("which file", "by default") asks its answer to
state something beyond the question's words; among passages scoring close to the best, one that states it
answers, and a view whose passages do not state it refuses (answer_form.unanswered).

Golden cases written for these tests (no story of the eval suites), asked as a turn does (answer_support).
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.kernel.engine.views import confidence_rank

# the first paragraph restates more of the question's words; only the second names a file
RESTATES = "On start the weather plugin reads its station settings from a single file."
NAMES = "The plugin keeps the station settings of the user in `~/.stationrc`."
QUESTION = "In which file does the weather plugin keep the user's station settings?"


def document(*paragraphs: str) -> str:
    """Each paragraph under a heading of its own (separate units, as in a manual's sections)."""
    return "# Weather plugin\n\n" + "".join(f"## Part {i}\n\n{p}\n\n" for i, p in enumerate(paragraphs, 1))


def test_which_file_is_answered_by_the_passage_naming_a_file():
    for paragraphs in ((RESTATES, NAMES), (NAMES, RESTATES)):
        doc = ask(QUESTION, units_of(document(*paragraphs)))
        assert "~/.stationrc" in (doc.answer or ""), doc.answer
        assert "reads the station settings" not in (doc.answer or "")


def test_a_view_without_the_asked_form_refuses_and_one_with_it_answers():
    """Two views: one holds only the passage restating the question, the other also the passage naming
    the file. The one naming no file does not say which file (session 18: refused, no sources; it was a weak
    answer ranked below), so the kernel keeps the answer naming it."""
    alone = ask(QUESTION, units_of(document(RESTATES)))
    both = ask(QUESTION, units_of(document(RESTATES, NAMES)))
    assert alone.result.status == "no-context" and not alone.sources
    assert "~/.stationrc" in (both.answer or "")
    assert both.result.status != "no-context"


def test_a_file_named_in_the_only_passage_is_no_weaker():
    doc = ask(QUESTION, units_of(document(NAMES)))
    assert "~/.stationrc" in (doc.answer or "")
    assert confidence_rank(doc.result.confidence) >= confidence_rank("low")
