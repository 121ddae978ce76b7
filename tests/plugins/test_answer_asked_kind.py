"""Golden tests of an honest `success` by the question's finer answer kind (issue 20 item 2), on a document
written here: "what is X good for?" answered by a sentence that only mentions X, "what exit status …"
answered by a sentence naming no code, "which <plural noun> …" answered by the class noun again, and "what
was X inspired by?" answered by a sentence that states no such relation are the best candidates (weak),
never `success`; the sentences that do supply the kind stay `success`."""

from __future__ import annotations

from answer_support import solve_question
from kb_corpus import tree
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit

QUILL = tree(
    "quill",
    [
        (
            "Changes",
            [
                ("Description", "fold", "The --fold option is now accepted by quill."),
                (
                    "Description",
                    "check",
                    "The exit status of the check command reports the state of the shelf.",
                ),
                (
                    "Description",
                    "readers",
                    "Readers, viewers or printers reading quill pages have their own settings.",
                ),
                ("Description", "rules", "The Shelf Rules: a warning for every misplaced volume."),
            ],
        ),
    ],
)

HERON = tree(
    "heron",
    [
        (
            "Options",
            [
                (
                    "Description",
                    "wrap",
                    "The --wrap option breaks long lines so that pages fit a narrow screen.",
                ),
                ("Description", "probe", "The probe command exits with status 3 when the shelf is locked."),
                ("Description", "viewers", "Heron pages open in Marlin and in Pelican Reader."),
                (
                    "Description",
                    "guide",
                    "The Shelf Guide was inspired by the Harbour Library's lending code.",
                ),
            ],
        ),
    ],
)


def solve(question: str, units: list[KnowledgeUnit]) -> CnlDocument:
    return solve_question(question, units, "entity")


def test_a_purpose_question_answered_by_a_mention_is_not_success():
    doc = solve("What is --fold good for?", QUILL)
    assert doc.result.status != "success"  # "now accepts the --fold option" says nothing of its use


def test_a_purpose_question_answered_by_a_statement_of_use_stays_success():
    doc = solve("What is --wrap good for?", HERON)
    assert doc.result.status == "success"
    assert "narrow screen" in doc.answer


def test_an_exit_status_question_answered_without_a_code_is_not_success():
    doc = solve("What exit status of the check command means the shelf is broken?", QUILL)
    assert doc.result.status != "success"


def test_an_exit_status_question_answered_with_a_code_stays_success():
    doc = solve("What exit status of the probe command means the shelf is locked?", HERON)
    assert doc.result.status == "success"
    assert "3" in doc.answer


def test_a_which_plural_question_answered_by_the_class_noun_is_not_success():
    doc = solve("Which readers open quill pages?", QUILL)
    assert doc.result.status != "success"  # "Readers, viewers or printers …" names no reader


def test_a_relation_question_answered_without_the_relation_is_not_success():
    doc = solve("What were the Shelf Rules inspired by?", QUILL)
    assert doc.result.status != "success"


def test_a_relation_question_answered_with_the_relation_stays_success():
    doc = solve("What was the Shelf Guide inspired by?", HERON)
    assert doc.result.status == "success"
    assert "Harbour Library" in doc.answer
