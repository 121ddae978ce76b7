"""A yes/no question worded unlike the document (gs_symbolic/polarity.py, issue 20), on a changelog written
here: the example the question gives ("such as photos/june") is no part of the proposition, and a word no
document spells as the question does ("multi-level") is read by truncation ("multi" begins "multiple"), not
into a word it does not begin ("passwords" is not "folders")."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

CHANGELOG = """# crate changelog

## v2.0

### Features

* Archives with multiple nested folders can now be unpacked via `--deep`, see #31
* crate checks the byte order of headers, see #40
* crate keeps the dates of photos taken in June, see #44

## v1.2

### Fixes

* crate no longer crashes on empty config files, see #20
* The progress bar of crate shows the right total, see #18
* Colors are turned off when crate writes to a pipe, see #15

## v1.0

* First release of crate
"""


def test_a_statement_about_the_kind_answers_a_question_giving_an_example_in_other_words():
    doc = ask(
        "Can crate unpack archives that have multi-level folders such as photos/june?", units_of(CHANGELOG)
    )
    assert doc.answer.startswith("Yes."), doc.answer
    assert "`--deep`" in doc.answer
    # stated in its words, not only read from the sentence closest in meaning (weak)
    assert doc.result.status == "success", doc.result.evidence


def test_a_word_no_document_uses_is_not_read_into_a_word_it_does_not_begin():
    doc = ask(
        "Can crate unpack archives that have multi-level passwords such as photos/june?", units_of(CHANGELOG)
    )
    assert doc.answer == NO_CONTEXT_ANSWER or not doc.answer.startswith("Yes."), doc.answer
