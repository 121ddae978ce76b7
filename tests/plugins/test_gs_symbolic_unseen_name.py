"""A name the question writes with a token no term stands for (issue 20 item 2): "a k suffix", "the '#'
flag". The shared analyser drops a lone lower-case letter and a symbol, so a sentence about a sibling ("The
time can be suffixed with 'w' …") or about the kind as a whole ("Flags are ignored by …") covers every term
of the question; it must write the asked token (or stand under a heading that does) to be `success`, else it
is reported weak — never refused.

The document is invented (a home-brewing log format). The two positive cases were answered `success` on main
0bc17d9; the guards (the sibling's own question, a flag the quote writes, a file extension, a conversion, an
abbreviation) answer as on main."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.unseen_name import unseen_names, unwritten_name
from mrpvm.protocol.document import KnowledgeUnit

BREWLOG = """# Brewlog file format

Brewlog keeps one line per brewing step, in columns.

## Times

First, the time that a step starts (in the START column) is not necessarily the local wall clock time.
The time can be suffixed with 'w' (for "wall") to mean local wall clock time, and with 'm' (for "mash")
to mean minutes counted from the start of the mash.

## Printing flags

Flags change how a column is printed. Flags are ignored by columns that do not expect them.

The '+' flag always prints a sign before a gravity reading.

## Files

The log itself is written to brewlog.txt beside the recipe.
"""


@needs_model
def test_a_sibling_letter_is_not_success() -> None:
    doc = ask("What does a k suffix on a time mean?", units_of(BREWLOG))
    assert doc.result.status != "success"


@needs_model
def test_flags_in_general_do_not_answer_a_quoted_flag() -> None:
    doc = ask("What does the '#' flag do?", units_of(BREWLOG))
    assert doc.result.status != "success"


@needs_model
def test_the_letter_written_still_answers() -> None:
    doc = ask("What does a w suffix on a time mean?", units_of(BREWLOG))
    assert doc.result.status == "success"
    assert "wall" in doc.answer


@needs_model
def test_the_quoted_flag_written_still_answers() -> None:
    doc = ask("What does the '+' flag do?", units_of(BREWLOG))
    assert doc.result.status == "success"
    assert "sign" in doc.answer


def test_which_tokens_name_the_asked_thing() -> None:
    assert unseen_names("What does a u suffix on the time mean?") == ["u"]
    assert unseen_names("What does the '-' flag do?") == ["-"]
    assert unseen_names("What does the `g` modifier do?") == ["g"]
    # an article, a file extension, a conversion, an escape, a contraction, an abbreviation: no names
    assert unseen_names("Who wrote regexp.c?") == []
    assert unseen_names("What is %s in the FORMAT column replaced by?") == []
    assert unseen_names("What does \\n do, e.g. in a template? I don't know.") == []
    assert unseen_names("Is there a default?") == []


def test_a_heading_that_writes_the_token_carries_it() -> None:
    unit = KnowledgeUnit(
        id="u", sourceId="s", chunkId="c", kuType="atomic", role="Description", topic="t",
        sectionTitle="Flags > The '#' flag",
    )  # fmt: skip
    assert unwritten_name("What does the '#' flag do?", "It prints the alternate form.", [unit]) == ""
    assert unwritten_name("What does the '#' flag do?", "Flags change printing.", []) == "#"
