"""sd-symbolic's plain-text reader (outline.py) and FAQ entries (entries.py): the layout as structure.

Man pages, FAQs, NEWS files and text exports carry their structure in indentation and line shape; the
reader turns it into the same blocks the Markdown reader makes, and the KU tree gives each option, exit
status, FAQ entry and example its own unit.
"""

from __future__ import annotations

import pytest
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.outline import looks_like_plain_text, read_blocks
from mrpvm.plugins.sd_symbolic.source_units.segments import Block
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.document import KnowledgeUnit

MAN = """TOOL(1)                     User Commands                     TOOL(1)

NAME
       tool - copy things

OPTIONS
       -f, --force
              Overwrite existing files. Without it, existing files are
              skipped.

       -j N, --jobs=N
              Run N copies at once. The default is 2.

EXIT STATUS
       0      Success.

       2      The source could not be read.

EXAMPLES
       Copy a folder and overwrite what is there:

              tool -f src/ dest/
"""

FAQ = """Service FAQ
===========

Q: How do I reset my password?
A: Open the sign-in page and choose "Forgot password". The link stays
valid for 30 minutes.

Why is my account locked?

An account is locked after ten failed sign-in attempts. The lock ends
after one hour.

1.2. Where are backups kept?

Backups are kept in the vault for 90 days.
"""


def blocks_of(text: str) -> list[Block]:
    return read_blocks(text)


def text_of(text: str, block: Block) -> list[str]:
    return [" ".join(text[s.start : s.end].split()) for s in block.segments]


def units_of(text: str) -> list[KnowledgeUnit]:
    return [u for u in build_tree(text, SourceMeta("s", "doc.txt", "text")) if u.kuType == "atomic"]


def test_plain_text_is_told_from_markdown() -> None:
    assert looks_like_plain_text(MAN) and looks_like_plain_text(FAQ)
    assert not looks_like_plain_text("# Title\n\nSome text with a [link](https://example.org).\n")


def test_caps_sections_and_one_definition_per_option_and_exit_status() -> None:
    blocks = blocks_of(MAN)
    headings = [b.title for b in blocks if b.kind == "heading"]
    assert headings == ["NAME", "OPTIONS", "EXIT STATUS", "EXAMPLES"]
    terms = [b.title for b in blocks if b.kind == "definition"]
    assert terms == ["-f, --force", "-j N, --jobs=N", "0", "2"]
    force = next(b for b in blocks if b.title == "-f, --force")
    assert text_of(MAN, force)[1:] == [
        "Overwrite existing files.",
        "Without it, existing files are skipped.",
    ]


def test_an_option_is_the_topic_of_its_own_unit_and_an_example_keeps_its_lead_in() -> None:
    units = units_of(MAN)
    jobs = next(u for u in units if u.title == "-j N, --jobs=N")
    assert jobs.topic == "-j N, --jobs=N" and "The default is 2." in (jobs.claim or "")
    assert "Overwrite" not in (jobs.claim or "")  # the neighbouring option is another unit
    status = next(u for u in units if u.title == "2")
    assert "could not be read" in (status.claim or "")
    example = next(u for u in units if "tool -f src/ dest/" in (u.claim or u.procedure or ""))
    assert "Copy a folder" in (example.claim or example.procedure or "")


def test_faq_entries_are_one_definition_each_with_the_question_as_term() -> None:
    blocks = [b for b in blocks_of(FAQ) if b.kind == "definition"]
    assert [b.title for b in blocks] == [
        "How do I reset my password?",
        "Why is my account locked?",
        "1.2. Where are backups kept?",  # a numbered entry keeps its number (FAQs cite it)
    ]
    # "Q:" and "A:" in one paragraph: the answer starts after its marker
    assert text_of(FAQ, blocks[0])[1].startswith("Open the sign-in page")
    assert text_of(FAQ, blocks[1])[1:] == [
        "An account is locked after ten failed sign-in attempts.",
        "The lock ends after one hour.",
    ]


def test_faq_units_carry_their_question_and_not_the_answer_marker() -> None:
    units = units_of(FAQ)
    reset = next(u for u in units if u.title == "How do I reset my password?")
    assert (reset.claim or "").startswith("Open the sign-in page") and "A:" not in (reset.claim or "")
    assert "30 minutes" in (reset.claim or "")


@pytest.mark.parametrize(
    "text",
    [
        "Q: What is it?\n",  # a question with no answer stays a paragraph
        "Q: What is it?\nA:\n",  # an empty answer marker
        "A: an answer with no question\n",
        "Question 1) Does it?\nAnswer 1) Yes.\n",
    ],
)
def test_odd_faq_shapes_never_lose_text(text: str) -> None:
    units = units_of(text)
    said = " ".join((u.title or "") + " " + (u.claim or u.procedure or "") for u in units)
    for word in ("What", "Does", "answer"):
        if word in text:
            assert word in said


CLAUSES = """Shipping Rules
==============

1.1. Returns

If You send a parcel back to the depot then:

(a) such parcel must also be labelled with the Return
    Code, as described in Section 1.2, and You must tell the
    courier how they can collect the parcel; and

(b) You may ship the parcel under a different tariff, provided
    that the tariff does not raise the price.

(iv) A numbered clause in roman numerals wraps
     onto a hanging indent as well.
"""


def test_parenthesized_clause_letters_are_list_items_not_headings() -> None:
    """A legal text's "(a)" clause wrapped onto a hanging indent is one item: its first line is no heading
    (before: "(a) such parcel … the Return" became a section and its quote read "Return: Code")."""
    units = units_of(CLAUSES)
    titles = {u.sectionTitle for u in units}
    assert not any(t and ("(a)" in t or "(b)" in t or "(iv)" in t) for t in titles)
    claims = "\n".join(u.claim or "" for u in units)
    assert "labelled with the Return Code, as described in Section 1.2" in claims
    assert "provided that the tariff does not raise the price" in claims
    assert "wraps onto a hanging indent as well" in claims
    assert all(u.sectionTitle and u.sectionTitle.endswith("1.1. Returns") for u in units)
