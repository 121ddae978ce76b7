"""Answers from a manual written here (issue 20). A list asked of prose (gs_symbolic/solver.py): when no item of
a list or table answers, the sentence that enumerates what is asked is the answer, not every sentence of the
entry that shares a word with the question; items of a real list are still listed. An option's letter ("-F")
is no name the answer must write (question.py)."""

from __future__ import annotations

from answer_support import solve
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.document import CnlDocument, IntentGroup

MANUAL = """KILN(1)                         User Commands                         KILN(1)

NAME
       kiln - fire a batch of ware

OPTIONS
       -b batchlist
              Select by batch (quick mode).  This selects the batches whose numbers appear in
              batchlist.  With this option kiln reads the records of the listed batches only and
              applies no further filtering rules.  No additional shelf options, sorting and tree
              listings are allowed in this mode.  Identical to b and --quick-batch.

       -t temperature
              Fire at the given temperature.  The default is 900 degrees.

FIRING MODES
       The kiln knows these firing modes:

       - bisque firing, for unglazed ware
       - glaze firing, for glazed ware
       - raku firing, for ware taken out hot
"""


def ask(
    question: str,
    answer_type: str,
    text: str = "",
    *,
    act: str = "identify",
    output: str = "list",
    markdown: bool = False,
) -> CnlDocument:
    """gs-symbolic's answer from every atomic unit sd-symbolic makes of `text` (a man page unless `markdown`)."""
    meta = SourceMeta("kiln", "kiln.md", "markdown") if markdown else SourceMeta("kiln", "kiln.1", "text")
    evidence = [u for u in build_tree(text or MANUAL, meta) if u.kuType == "atomic"]
    return solve(
        IntentGroup(index=1, act=act, intent=question, output=output, answerType=answer_type), evidence
    )


def test_a_list_asked_of_prose_is_the_sentence_that_enumerates_it():
    doc = ask("Which options are not allowed together with the quick batch mode of kiln (-b)?", "option")
    assert "sorting and tree listings are allowed" in doc.answer, doc.answer
    assert "Select by batch" not in doc.answer and "This selects" not in doc.answer, doc.answer
    assert not doc.answer.startswith("- "), doc.answer


def test_the_items_of_a_list_are_still_listed():
    doc = ask("Which firing modes does the kiln know?", "")
    for mode in ("bisque", "glaze", "raku"):
        assert mode in doc.answer, doc.answer


def test_an_option_letter_is_no_name_the_entry_lead_answers_what_it_does():
    # "-F" does not make "F" a name the answer must state: the entry's lead sentence says what -F does
    # (before: "See the -f option, which -F implies." alone, the only sentence that writes "-F")
    doc = ask(
        "What does the -F option of kiln do?", "definition", SHORT_OPTIONS, act="describe", output="paragraph"
    )
    assert "Extra full firing." in doc.answer, doc.answer


SHORT_OPTIONS = """KILN(1)                         User Commands                         KILN(1)

OPTIONS
       -f     Full firing.  Fire every shelf of the kiln to the cone set for it.

       -F     Extra full firing.  See the -f option, which -F implies.

       -w     Wide log.  Use this option twice for an unlimited log width.
"""


POLICY = """KILN POLICY                     Kiln Handbook                     KILN POLICY

SCRIPTS
       Kiln scripts should start by naming the kiln's own interpreter, to ensure that the kiln installation
       is used and that every module a kiln script needs is present.
       The preferred specification for the kiln interpreter is /opt/kiln/bin/fire (or
       /opt/kiln/bin/fire2 for the old controllers).
"""


def test_a_question_asking_for_the_exact_text_is_answered_by_the_passage_quoting_it():
    # before: the sentence sharing most words ("… should name the kiln's own interpreter …") was quoted and
    # the literal never was
    doc = ask(
        "What exact interpreter line should a kiln script start with?",
        "entity",
        POLICY,
        act="describe",
        output="paragraph",
    )
    assert "/opt/kiln/bin/fire" in doc.answer, doc.answer


TABLE = """# kiln-plugin

## Options

|Name|Type|Default|Description|
|:--:|:--:|:-----:|:----------|
|**`shelf`**|`{String}`|`top`|The shelf to load first|
|**`vent`**|`{Boolean\\|String}`|`true`|`true \\|\\| 'top' \\|\\| 'side' \\|\\| false` Open the vents of the kiln during the firing. When passing `'top'` only the top vents open, which keeps the lower shelves hotter than the upper ones. `'side'` opens the side vents instead, for an even draught across the chamber. Passing `false` keeps every vent of the kiln shut.|
|**`log`**|`{Boolean}`|`false`|Write a log of the firing|
"""


def test_an_options_table_row_answers_which_option_value_and_is_quoted_in_part():
    # the row's key, written as code, is the option's name (before: no option shape, no answer); of its long
    # description the sentences that state the question's words are quoted (before: all of it)
    question = "Which option value keeps every vent of the kiln shut?"
    doc = ask(question, "option", TABLE, output="brief", markdown=True)
    assert "`vent`" in doc.answer and "Passing `false` keeps every vent of the kiln shut." in doc.answer, (
        doc.answer
    )
    assert "even draught" not in doc.answer, doc.answer


FORMATS = """# Kiln log formats

## Rejected formats

The CSV format was initially considered but quickly rejected. While easy to produce from any controller, it \
cannot nest the readings of one firing under its shelves. The XML format was rejected as well.
"""


def test_a_why_answered_by_a_sentence_restating_the_question_goes_on_to_the_reason():
    # before: "The CSV format was initially considered but quickly rejected." alone, which says no why
    doc = ask(
        "Why was CSV rejected as the log format?",
        "reason",
        FORMATS,
        act="explain",
        output="paragraph",
        markdown=True,
    )
    assert "cannot nest the readings" in doc.answer, doc.answer
    assert "XML" not in doc.answer, doc.answer
