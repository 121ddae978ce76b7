"""Golden tests of an honest `success` when the answer shares the question's subject but not what it asks
(issue 20, session 26), on a document written here: "how many …" answered by a sentence whose only numeral
completes a name ("the ISO 3166 list") and "which <modifier> <plural> …" answered by a sentence that speaks
of "some <plural>" without naming any are the best candidates (weak), never `success`; sentences that do
state a count or name the members stay `success`."""

from __future__ import annotations

from answer_support import solve_question
from kb_corpus import tree
from mrpvm.plugins.gs_symbolic.answer_form import states_figure
from mrpvm.plugins.gs_symbolic.asked_kind import INSTANCES, asked_kind, kind_stated

ALBUM = tree(
    "album",
    [
        (
            "Notes",
            [
                (
                    "Description",
                    "stamps",
                    "The stamps kept in the album are sorted by the ISO 3166 country list.",
                ),
                (
                    "Description",
                    "mills",
                    "Some paper mills and other suppliers deliver album pages and may not follow the binding guide.",
                ),
            ],
        ),
    ],
)

BINDERY = tree(
    "bindery",
    [
        (
            "Notes",
            [
                ("Description", "count", "The bindery album holds 240 stamps on twelve pages."),
                (
                    "Description",
                    "mills",
                    "Kestrel Mills and Osprey Works deliver the bindery album pages.",
                ),
            ],
        ),
    ],
)


def test_a_count_answered_by_the_numeral_of_a_name_is_not_success():
    doc = solve_question("How many stamps are kept in the album?", ALBUM, "number")
    assert doc.result.status != "success"  # "ISO 3166" names a list, it counts no stamps


def test_a_count_answered_by_a_cardinal_stays_success():
    doc = solve_question("How many stamps does the bindery album hold?", BINDERY, "number")
    assert doc.result.status == "success"
    assert "240" in doc.answer


def test_a_which_question_with_a_modifier_answered_by_some_members_is_not_success():
    doc = solve_question("Which paper mills deliver album pages?", ALBUM, "entity")
    assert doc.result.status != "success"  # "Some paper mills …" says there are such mills, not which


def test_the_numeral_of_a_name_states_no_figure_but_a_cardinal_does():
    assert not states_figure("Entries follow RFC 4180 and PEP 8.", set())
    assert states_figure("Entries hold 12 fields.", set())


def test_a_modified_plural_head_is_read_by_agreement_with_its_verb():
    assert asked_kind("Which paper mills deliver pages?", "entity") == (INSTANCES, "mills")
    assert asked_kind("Which file contains the settings?", "entity") == ("", "")  # "contains": singular head


def test_an_enumeration_after_some_members_names_them():
    question = "Which paper mills deliver pages?"
    assert not kind_stated(INSTANCES, "mills", "Some paper mills deliver PDF proofs to the press.", question)
    assert kind_stated(
        INSTANCES, "mills", "Some paper mills, such as Kestrel Mills, deliver pages.", question
    )
