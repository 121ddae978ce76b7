"""Golden tests of an honest `success` for a question that sets a condition after what it asks (issue 20
item 2), on a document written here: a passage that describes the asked setting and says nothing of the
condition ("… if I don't configure one?" / "Set the folder …") is the best candidate (weak), never
`success`; a passage that states a condition of the same polarity or a default stays `success`."""

from __future__ import annotations

from answer_support import solve_question
from kb_corpus import tree
from mrpvm.plugins.sdk.answer_types import expected_type
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit

FERRY = tree(
    "ferry",
    [
        (
            "Settings",
            [
                ("Description", "cache-dir=", "Set the folder ferry keeps its downloaded pages in."),
                (
                    "Description",
                    "spool-dir=",
                    "Set the folder ferry writes outgoing pages to. If none is configured, pages go to /var/spool/ferry.",
                ),
                (
                    "Description",
                    "log-dir=",
                    "Set the folder ferry writes its logs to. It defaults to /var/log/ferry.",
                ),
            ],
        ),
    ],
)


def solve(question: str, units: list[KnowledgeUnit] = FERRY) -> CnlDocument:
    return solve_question(question, units, expected_type(question))


def test_a_description_silent_on_the_asked_condition_is_not_success():
    doc = solve("Which folder does ferry keep downloaded pages in if I don't configure one?")
    assert doc.result.status != "success"  # what the setting is, not where pages go when it is unset


def test_a_condition_of_the_same_polarity_stays_success():
    doc = solve("Which folder does ferry write outgoing pages to if I don't configure one?")
    assert doc.result.status == "success"
    assert "/var/spool/ferry" in doc.answer


def test_a_stated_default_answers_an_unset_condition():
    doc = solve("Which folder does ferry write its logs to if I don't configure one?")
    assert doc.result.status == "success"
    assert "/var/log/ferry" in doc.answer


SPOOL = tree(
    "spool",
    [
        (
            "Options",
            [
                (
                    "Description",
                    "fold_long_lines",
                    "Whether spool folds long lines (default: True). If true, fold_long_lines folds them at "
                    "the last blank. If false, fold_long_lines cuts them at the page edge.",
                ),
            ],
        ),
    ],
)


def test_a_condition_setting_a_value_is_no_question_of_the_default():
    doc = solve("What happens when fold_long_lines is false?", SPOOL)
    assert doc.result.status == "success"
    assert "cuts them at the page edge" in doc.answer
