"""Golden tests of an honest `success` for "what/which <noun> …" (issue 20 item 2), on a document written here:
a quoted passage that states the question's other words but neither writes the asked noun nor holds a
value naming itself beside them (the asked detail is absent, its topic words present) is the best candidate
(weak), never `success`; a passage that writes the noun, or names the instance without it (an identifier,
code), stays `success`."""

from __future__ import annotations

from answer_support import solve_question
from kb_corpus import tree
from mrpvm.protocol.document import CnlDocument

KILN = tree(
    "kiln",
    [
        (
            "Changes in kiln 4.2",
            [
                (
                    "Description",
                    "sockets",
                    "Let kpack read from a socket as well. Support the Z80 in crc.S. "
                    "Retry short reads (needed on BSD when kiln packs data from a socket).",
                ),
                (
                    "Description",
                    "empty",
                    "For an empty archive kiln now writes the checksum 0000 in the trailer.",
                ),
                (
                    "Description",
                    "glyphs",
                    "For proper handling of wide glyphs in kiln listings, see `Kiln::Wide`.",
                ),
            ],
        ),
    ],
)


def solve(question: str) -> CnlDocument:
    return solve_question(question, KILN, "entity")


def test_a_passage_without_the_asked_noun_or_a_value_beside_the_question_is_not_success():
    doc = solve("What checksum does kiln write when it packs data from a socket?")
    # the socket sentences say nothing of a checksum; the figure and the file name stand in another sentence
    assert doc.result.status != "success"


def test_a_passage_writing_the_asked_noun_stays_success():
    doc = solve("What checksum does kiln write for an empty archive?")
    assert doc.result.status == "success"
    assert "0000" in doc.answer


def test_an_instance_named_without_the_class_noun_stays_success():
    doc = solve("Which module handles wide glyphs in kiln listings?")
    assert doc.result.status == "success"
    assert "Kiln::Wide" in doc.answer


LOOM = tree(
    "loom",
    [
        (
            "Changes in loom 2.0",
            [
                (
                    "Description",
                    "trailer",
                    "Before, loom kept the 32-bit length of piped data in the trailer, modulo 2**32.",
                ),
                ("Description", "colours", "The colours of the status line can be set in loomrc."),
            ],
        ),
    ],
)


def test_a_numeral_measuring_something_else_is_no_value_of_the_asked_noun():
    doc = solve_question("What checksum does loom keep for piped data?", LOOM, "entity")
    assert doc.result.status != "success"  # "32-bit" and "2**32" size the length; no checksum is stated
