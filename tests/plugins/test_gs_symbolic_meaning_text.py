"""gs-symbolic's meaning signal reads a sentence as its reader does: a Markdown link as its text, no bare
URL. An address is a run of word pieces that pulls the sentence's vector away from what it says, so a
sentence carrying a long link fell below the meaning floor and the question was refused."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.evidence import split_units
from mrpvm.plugins.gs_symbolic.meaning import sentence_text

README = """Quill
=====

Quill keeps recipes in plain files.

Development
-----------

Please submit bugs that you encounter to the [issue tracker](https://forge.example/quill-project/quill/issues/new?template=bug-report.md&labels=triage) with a recipe demonstrating the problem. Questions about usage are more at home on the [forum](https://forum.example/c/quill/usage-questions/17).
"""


def test_a_link_is_read_as_its_text():
    pool = split_units([u for u in units_of(README, "README.md") if u.kuType == "atomic"])
    read = next(sentence_text(s) for s in pool if "submit bugs" in s.text)
    assert "issue tracker with a recipe" in read and "https" not in read


@needs_model
def test_a_sentence_with_a_long_link_answers_by_meaning():
    doc = ask("Where should I submit bugs?", units_of(README, "README.md"))
    assert "issue tracker" in doc.answer
