"""The sentence that states what the question asks, among sentences that share its words (issue 20: the
wrong passage with the answering unit in hand).

- "zero" is a number: "… the alert level will be zero" answers "What alert level does a gauge get …?" as
  "… will be 0" would (sdk/answer_shapes.NUMBER); before, the sentence had no answer of the asked shape and
  a neighbouring sentence that writes a digit answered instead, or nothing did.
- A paragraph that opens with a reference-style link ("[Proposal #812] introduces …", its target defined
  further down) is prose, not a line of code (sdk/text.looks_like_code): read as code it was no candidate at
  all, and a sentence repeating the question's words without naming the proposal answered.
- Under a heading that lists several entries ("Reed_GetLine, Reed_GetColumn, Reed_GetOffset"), the first
  sentence earns the heading's credit for the asked entry only when it does not speak of the heading's other
  entries instead ("Note: Reed_GetLine and Reed_GetColumn return 0 …" is not about Reed_GetOffset); and
  "What value does …" is answered by the sentence that states the value, not by one repeating the noun
  "value" ("If the return value is REED_FAIL …"): a noun that names only the kind of answer is filled by it
  (gs_symbolic/asked_slot.py).
The documents are invented."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.asked_slot import names_sibling, slot_stem
from mrpvm.plugins.sdk.answer_shapes import mentions_type
from mrpvm.plugins.sdk.text import looks_like_code

GAUGES = """# Tidewatch

## Alert levels

Tidewatch gives every gauge an alert level from its readings. A gauge starts a new alert when its level
is higher than the level of the gauge upstream, and the alert ends when it is lower than 2 for an hour.

## Level formula

The alert level of a gauge is computed by the `levelexpr` formula each minute. If the formula has an
error, or its result is not a whole number, no warning is shown and the alert level will be zero.
"""


def test_zero_is_a_number() -> None:
    assert mentions_type("no warning is shown and the alert level will be zero.", "number")
    assert mentions_type("Zero disables the limit.", "number")
    assert not mentions_type("One of: gnu, posix, ustar.", "number")  # still no quantity


@needs_model
def test_a_level_stated_as_zero_answers() -> None:
    doc = ask("What alert level does a gauge get when the levelexpr formula has an error?", units_of(GAUGES))
    assert doc.result.status == "success"
    assert "will be zero" in (doc.answer or "")


REVIEW = """# Harbor lock design review

[Proposal #812] introduces shared read locks for the harbor catalog. This is a long requested feature and
would help the nightly importers.

[Proposal #812]: https://example.org/harbor/proposals/812

## Highlights

The proposal lets a reader take a lock without blocking other readers of the catalog:

```
catalog.lock(shared=True)
```

## Discussion

The proposal was discussed at length; readers asked whether writers would starve.
"""


def test_a_reference_link_opens_prose() -> None:
    assert not looks_like_code("[Proposal #812] introduces shared read locks for the harbor catalog.")
    assert not looks_like_code("[1] Smith describes the method in detail.")
    for code in ("[section]", "[1, 2, 3]", '["a", "b"],', "[[product]]", "[ -f build.log ] && rm build.log"):
        assert looks_like_code(code), code


@needs_model
def test_the_sentence_naming_the_proposal_answers() -> None:
    doc = ask("Which proposal introduces shared read locks for the catalog?", units_of(REVIEW))
    assert doc.result.status == "success"
    assert "#812" in (doc.answer or "")


READER = """# Reedlib reference

## reed_open

Opens a reed stream on a file descriptor. The stream starts at the first record.

## Reed_GetLine, Reed_GetColumn, Reed_GetOffset

Note: Reed_GetLine and Reed_GetColumn return 0 to indicate an error. Note: Reed_GetOffset returns -1 to
indicate an error.

These functions report where the reader stands in the current stream. Call them from any record handler.

They may also be called after reed_read returns. If the return value is REED_FAIL then the position is that
of the record at which the error was found; otherwise it is the position after the last record read.

## reed_close

Closes the stream and frees its buffers.
"""


def test_the_asked_slot_and_a_listed_sibling() -> None:
    assert slot_stem("What value does Reed_GetOffset return on an error?") == "valu"
    assert slot_stem("Which handler is not cleared by a reset?") == ""  # names what the answer is
    assert slot_stem("What does Reed_GetOffset return?") == ""
    title = "Reed_GetLine, Reed_GetColumn, Reed_GetOffset"
    asked = {"valu", "reed", "getoffset", "return", "error"}
    assert names_sibling(title, {"note", "reed", "getlin", "getcolumn", "return"}, asked)
    assert not names_sibling(title, {"note", "reed", "getoffset", "return"}, asked)
    assert not names_sibling("Reed_GetOffset", {"reed", "getlin"}, asked)  # one entry: no siblings
    # an option's aliases are one entry: "Filter the bundle through squeeze(1)." under "-z, --squeeze"
    assert not names_sibling("-z, --squeeze", {"filter", "bundl", "squeez"}, {"z", "option", "frob"})


@needs_model
def test_the_sentence_about_the_asked_entry_answers() -> None:
    doc = ask("What value does Reed_GetOffset return to indicate an error?", units_of(READER))
    assert doc.result.status == "success"
    assert "-1" in (doc.answer or "")
    assert "Reed_GetColumn return 0" not in (doc.answer or "")
