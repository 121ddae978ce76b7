"""A labelled line or a table row of a code block answers the question that names it (issue 20: false
refusals with the evidence in hand).

A copyright header quoted as a block (`Upstream-Contact: …`) and a manual's indented table of state letters
are read by sd-symbolic as code, which the sentence ranking does not read for a "who"/"what does D mean"
question: both were refused with the answering unit selected. The label the question names (every word of
it), or the key it writes as written, now answers; a label or key the documents lack, or a question about
something the block does not speak of, stays refused."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.code_fields import code_field
from mrpvm.plugins.gs_symbolic.evidence import Sentence
from mrpvm.plugins.gs_symbolic.question import analyse
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

COPYRIGHT = """Format: https://www.example.org/packaging/copyright-format/1.0/
Comment:
 This package was first assembled by Oskar Lindqvist <oskar@example.net> in
 the spring of 2004.
Source: https://quillpad.example.org/releases/
Upstream-Contact: Ilse Varga <ilse@quillpad.example.org>

Files: *
Copyright: (C) 2001-2024  Ilse Varga
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software, to deal in the Software without restriction.
"""

MANUAL = """# TIDEMON(1)

## NAME

tidemon - report the state of the harbour gauges

## GAUGE STATE CODES

Here are the different letters that the gstate output field (header "GST") will show to describe a gauge:

```
K    keeping pace with the tide table
Q    quiet, no reading for an hour
V    drifting beyond the calibration band
H    held by an operator for servicing
```

## EXIT STATUS

tidemon exits with 0 when every gauge answered.
"""


def _copyright(question: str) -> tuple[str, str]:
    doc = ask(question, units_of(COPYRIGHT, "copyright"))
    return doc.result.status, doc.answer or ""


def _manual(question: str) -> tuple[str, str]:
    doc = ask(question, units_of(MANUAL, "tidemon.md"))
    return doc.result.status, doc.answer or ""


def test_the_labelled_line_the_question_names_answers() -> None:
    # a whole file of stanzas is read stanza by stanza (sd-symbolic's stanzas.py), its fields as statements:
    # the field the question names answers; "quillpad" is written only inside addresses, so it stays weak
    status, answer = _copyright("Who is the upstream contact for quillpad?")
    assert "Ilse Varga" in answer, (status, answer)


def test_a_label_or_subject_the_block_lacks_is_never_success() -> None:
    # read as statements, a field of another subject is at most the best candidate, never `success`
    assert _copyright("Who is the upstream contact for inkwell?")[0] != "success"
    assert _copyright("Who is the maintainer of quillpad?")[1] == NO_CONTEXT_ANSWER


def test_the_row_whose_key_the_question_writes_answers() -> None:
    status, answer = _manual("What does a Q in the GST column of tidemon output mean?")
    assert "quiet, no reading" in answer and "drifting" not in answer, answer
    assert status in ("success", "insufficient")
    status, answer = _manual("What does the letter V stand for in the gstate field?")
    assert "drifting beyond the calibration band" in answer, answer


def test_a_key_no_row_has_or_another_subject_is_refused() -> None:
    assert _manual("What does a B in the GST column of tidemon output mean?")[1] == NO_CONTEXT_ANSWER
    assert _manual("What does a Q mean in the harbour master's log?")[1] == NO_CONTEXT_ANSWER


def _block(text: str) -> Sentence:
    unit = KnowledgeUnit(
        id="u", sourceId="s", chunkId="c", kuType="atomic", role="Description", topic="t", claim=text
    )
    return Sentence(text, unit, [], (0, 0, 0), code=True)


def test_bad_input() -> None:
    q = analyse("Who is the upstream contact?", None, "", [], "", "person")
    assert code_field(q, [], []) is None  # no code at all
    assert code_field(q, [_block("")], []) is None  # an empty block
    # two blocks naming the same label with different values: which one is asked is not told
    two = [_block("Upstream-Contact: Ilse Varga"), _block("Upstream-Contact: Oskar Lindqvist")]
    assert code_field(q, two, []) is None
    # a label's value without the asked shape (no name for "who")
    assert code_field(q, [_block("Upstream-Contact: see the web site")], []) is None
    # a table of two rows is no table; a row key that is a stop word is no key the question writes
    assert (
        code_field(analyse("What does a Q mean?", None, "", [], ""), [_block("Q  quiet\nK  keeping")], [])
        is None
    )
