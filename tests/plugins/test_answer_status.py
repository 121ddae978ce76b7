"""Golden tests of an honest status and of questions the lexical reading got wrong (issue 20), on a document
written here: a yes/no question whose wording the source does not repeat is answered from the sentence
closest in meaning, as weak evidence; "the same as" answered by "distinct from" is No; a passage that does
not hold what was asked for (a command, something to do) is never `success`; the source a question cites
("according to …") is not a word the answer must state; an option written in the question is a name."""

from __future__ import annotations

from answer_support import needs_model, solve_question
from kb_corpus import tree
from mrpvm.plugins.gs_symbolic.question import analyse
from mrpvm.plugins.sdk.answer_types import expected_type
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit

KILN = tree(
    "kiln",
    [
        (
            "Sync",
            [
                ("Description", "sync", "Note that kiln sync is distinct from kiln push."),
                ("Description", "mirrors", "Kiln offers no way to mirror a shelf onto a second host."),
            ],
        ),
        (
            "Setup",
            [
                (
                    "Description",
                    "glazing",
                    "You must first turn on glazing before any shelf can be fired on Windows.",
                ),
                ("Description", "firing", "A firing lasts forty minutes at most."),
            ],
        ),
    ],
)


def solve(question: str, units: list[KnowledgeUnit], answer_type: str = "") -> CnlDocument:
    return solve_question(question, units, answer_type)


@needs_model
def test_a_yes_no_question_worded_unlike_the_source_is_answered_weakly_from_the_closest_sentence():
    doc = solve("Can kiln mirror a shelf to another host?", KILN, "yes-no")
    assert doc.result.status == "insufficient"  # read from a paraphrase: weak, never `success`
    assert doc.answer.startswith("No. ")
    assert "offers no way to mirror a shelf" in doc.answer  # "no way to" read as the answer's No
    assert doc.sources == ["kiln::chunk-000::unit-001"]


@needs_model
def test_the_same_as_answered_by_distinct_from_is_no():
    doc = solve("Is kiln sync the same as kiln push?", KILN, "yes-no")
    assert doc.answer.startswith("No. ")
    assert "distinct from kiln push" in doc.answer


@needs_model
def test_a_command_question_answered_by_a_sentence_without_a_command_is_not_success():
    doc = solve("What command turns on glazing on Windows?", KILN, "command")
    assert doc.result.status != "success"


def test_the_source_a_question_cites_is_context_not_a_term_to_state():
    q = analyse("How long does a firing last according to the kiln handbook?", "identify")
    assert "handbook" not in q.terms and "handbook" in q.support
    assert "fire" in " ".join(q.terms)  # what is asked stays


def test_a_long_option_written_in_the_question_is_a_name_it_asks_about():
    q = analyse("Which release added a --sort option to kiln?", "identify")
    assert "sort" in q.name_terms


def test_question_types_values_and_what_should_i_do():
    assert expected_type("What values does the mode option accept?") != "number"  # 'auto' | 'manual'
    assert expected_type("What value is used when the fifth field is left out?") != "number"
    assert expected_type("Git still tracks them. What should I do?") == "procedure"
    assert expected_type("What is the maximum size of a shelf?") == "number"


def test_the_noun_asked_for_after_a_preposition():
    from mrpvm.plugins.sdk.answer_types import asked_noun

    assert asked_noun("Under which license is kiln released?") == "license"
    assert asked_noun("In which release was the -s flag added?") == "release"


SHELVES = tree(
    "shelves",
    [
        (
            "Firing",
            [
                ("Description", "-s", "Select shelves by number. For example: kiln fire -s 1 -s 2,3."),
                ("Description", "timer", "The timer stops the firing when it runs out."),
            ],
        )
    ],
)


def test_an_extreme_asked_for_is_not_excused_as_a_paraphrase():
    from mrpvm.plugins.gs_symbolic.evidence import Scorer
    from mrpvm.plugins.gs_symbolic.material import prepare
    from mrpvm.plugins.gs_symbolic.passages import Judge, Passage

    pool = prepare([u for u in SHELVES if u.kuType == "atomic"], "").pool
    example = next(s for s in pool if "For example" in s.text)
    weights = {"maximum": 3.0, "number": 1.0, "shelv": 2.0, "-s": 3.0}
    judge = Judge(Scorer(pool, list(weights), collection=weights), "number", {"maximum", "-s"})
    close = Passage([example], 1.0, 0.5, True, meaning=0.9)  # as close in meaning as can be
    assert not judge._paraphrased(close, {"maximum"})  # an example of -s states no maximum
    assert judge._paraphrased(close, {"-s"})  # a key name the collection holds may be paraphrased


GLAZE = tree(
    "glaze",
    [
        (
            "Packages",
            [
                (
                    "Description",
                    "download",
                    "This saves the `.glz` or `.GlazeBundle` packages to a folder you choose.",
                ),
            ],
        )
    ],
)


@needs_model
def test_a_command_question_answered_by_file_names_only_is_not_success():
    doc = solve("Which command installs a downloaded .glz glaze package?", GLAZE, "command")
    assert doc.result.status != "success"  # `.GlazeBundle` names a file, no command


@needs_model
def test_a_command_question_answered_by_a_row_naming_the_command_is_success():
    row = "kiln fire — Purpose: Starts a firing of every loaded shelf."
    units = tree("cli", [("Commands", [("Description", "commands", row)])])
    doc = solve("Which command starts a firing of every loaded shelf?", units, "command")
    assert doc.result.status == "success" and "kiln fire" in doc.answer
