"""Unanswerable questions answered from text that is about something else (issue 20 item 2): a name the
question quotes that the evidence never writes, a cross-reference that only sends the reader elsewhere, and a
document's opening line giving its own version for a feature's.

- "What is the default value of 'ripplemin'?" over a help file that states the default of 'ripplemark' in
  the neighbouring entry and never one of 'ripplemin': a quoted name is mentioned, not used, so it names
  one thing as an identifier does (named.py): only evidence writing it may answer.
- "Which HTTP status code should a server return when a merge operation fails?" over "See [RFC9999],
  Section 4 for considerations regarding errors …, including suggested status codes …": the sentence says
  where to read, not what the code is: `weak`, not `success`.
- "Which Tide version introduced the tag ripple method?" over "*tide.txt* For Tide version 4.2.": the
  version the document is written for, not the version a feature came with: refused.

Each document is invented. The positive cases were answered on main 755bd99 (`success`, or weak for the
opening line); the guards (the asked entry's own default, a question asking where to read, the document's
own version and date) answer here as on main."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.named import quoted_names, written_identifiers
from mrpvm.plugins.gs_symbolic.referral import target
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

HELP = """*tide.txt*      For Tide version 4.2.  Last change: 2024 Mar 3


\t\t  TIDE REFERENCE MANUAL    by Ola Brenner


Ripples\t\t\t\t\t\t*Ripples* *ripples*

You can find an introduction on ripples in chapter 12 of the user manual.
|usr_12.txt|

1. Ripple methods\t|ripple-methods|
2. Ripple commands\t|ripple-commands|

==============================================================================
1. Ripple methods\t\t\t\t\t*ripple-methods*

The ripple method is set with the 'ripplemethod' option.  It can be one of:

\tmanual\t\tripples are made by hand
\tindent\t\tripples follow the indent of the lines
\ttag\t\tripples are made between tag lines in the text

TAG\t\t\t\t\t\t\t*ripple-tag*

Tags in the text mark where a ripple begins and ends.  A ripple begins at a
"<<<" tag and ends at the next ">>>" tag.  The tags can be set with the
'rippletags' option.

RIPPLETEXT\t\t\t\t\t\t*ripple-ripplemark*

The 'ripplemark' option sets the text shown in the summary line of a closed
ripple.  The default value is |ripplemark()|.  This gives a short summary for
most kinds of text.

==============================================================================
2. Ripple commands\t\t\t\t\t*ripple-commands*

zr\t\tOpen the ripple under the cursor.
zR\t\tOpen every ripple in the window.
zc\t\tClose the ripple under the cursor.

A ripple shorter than 'ripplemin' lines is always shown open.

When a buffer that was edited before is edited again, the last ripple settings
are used once more.  For hand-made ripples the saved ripples are restored.

==============================================================================
3. Ripple options\t\t\t\t\t*ripple-options*

'ripplemethod'\t'rpm':\tThe method used to make ripples.
'ripplemark'\t'rmk':\tText of the summary line.
'ripplemin'\t'rmn':\tSmallest number of lines a ripple must span to close.
'rippletags'\t'rtg':\tThe tags used by the "tag" method.
"""

SPEC = """Quill Working Group                                            A. Marsh
Request for Comments: 9998                                 Quill Press
Category: Standards Track                                     May 2025


                      Quill Merge Documents

Abstract

   A Quill merge document lists operations that change a stored text.
   It is sent to a server, which applies the operations in order.

1.  Operations

   Each operation object has exactly one "act" member.  Its value is one
   of "insert", "erase" or "swap".

   The "insert" operation adds the text of its "with" member at the
   position given by its "at" member.

2.  Error Handling

   A merge document is applied one operation after another.  If an
   operation cannot be applied, the server stops and leaves the stored
   text as it was before the document was received.

   See [RFC9999], Section 4 for considerations regarding errors when a
   merge document is sent with the HTTP MERGE method, including
   suggested status codes to use to indicate various conditions.

3.  Security Considerations

   A server should limit the size of the merge documents it accepts.
"""


def _ask(text: str, question: str) -> tuple[str, str]:
    doc = ask(question, units_of(text, "story.nl"))
    return doc.result.status, doc.answer or ""


def _succeeds(text: str, question: str, part: str) -> None:
    status, answer = _ask(text, question)
    assert status == "success" and part in answer, (status, answer)


def test_a_quoted_name_is_an_identifier() -> None:
    assert quoted_names("What is the default value of 'ripplemin'?") == ["ripplemin"]
    assert quoted_names('Which mode does `rip_level` set, and what does "strict" do?') == [
        "rip_level",
        "strict",
    ]
    assert written_identifiers("What happens when $wrap is set to 'hard'?") == ["$wrap", "hard"]
    assert quoted_names("What does the '-' flag do?") == []  # no name in it
    assert quoted_names("Where are the users' files kept?") == []  # an apostrophe, no quotation
    assert written_identifiers("Which option is used instead of 'ripplemin'?") == []  # set against the answer


@needs_model
def test_a_neighbouring_entrys_default_is_no_answer_for_a_quoted_name() -> None:
    # main: "The default value is |ripplemark()|." (the 'ripplemark' entry's), success
    assert _ask(HELP, "What is the default value of 'ripplemin'?") == ("no-context", NO_CONTEXT_ANSWER)


@needs_model
def test_a_quoted_name_the_evidence_never_writes_is_not_answered() -> None:
    # main: "When a buffer that was edited before is edited again, …", success
    assert _ask(HELP, "What does the 'ripplestart' option set when a buffer is opened?") == (
        "no-context",
        NO_CONTEXT_ANSWER,
    )


@needs_model
def test_the_quoted_names_own_entry_still_answers() -> None:
    _succeeds(HELP, "What is the default value of 'ripplemark'?", "ripplemark()")
    _succeeds(HELP, "What does 'ripplemin' do?", "ripplemin")


def test_a_cross_reference_is_read() -> None:
    assert target("See [RFC9999], Section 4 for considerations regarding errors.") == "[RFC9999], Section 4"
    assert target("For details on merge errors, refer to the server guide.") == "the server guide."
    assert target("See :term:`global interpreter lock`.") is None  # a pointer saying nothing of what for
    assert target("For wide characters, see L<Text::Wide>.") is None  # a module recommended by its name
    assert target("The server stops for a moment.") is None


@needs_model
def test_a_sentence_that_only_refers_elsewhere_is_weak() -> None:
    # main: the See-sentence, success
    status, answer = _ask(SPEC, "Which HTTP status code should a server return when a merge operation fails?")
    assert status == "insufficient" and "See [RFC9999]" in answer


@needs_model
def test_a_reference_answers_a_question_asking_for_its_target() -> None:
    _succeeds(SPEC, "Which section of RFC9999 covers merge errors?", "Section 4")
    _succeeds(SPEC, "What does the server do when an operation cannot be applied?", "stops")


@needs_model
def test_the_documents_opening_line_gives_no_features_version() -> None:
    # main: "*tide.txt* For Tide version 4.2.", success
    assert _ask(HELP, "Which Tide version introduced the tag ripple method?") == (
        "no-context",
        NO_CONTEXT_ANSWER,
    )


@needs_model
def test_an_opening_statement_is_no_banner() -> None:
    # a statement (it has a verb) about the kiln, not the document's name and version
    notes = "This kiln was assembled by Ida Varga on 3 May 2021.\n\nWalls\n=====\n\nThe brick walls keep the heat.\n"
    doc = ask("When was the brick kiln assembled?", units_of(notes, "story.nl"))
    assert "3 May 2021" in (doc.answer or "")


@needs_model
def test_the_opening_line_still_gives_the_documents_own_version_and_date() -> None:
    _succeeds(HELP, "Which Tide version is this manual for?", "4.2")
    _succeeds(HELP, "When was tide.txt last changed?", "2024 Mar 3")
