"""The span an answer quotes: a sentence that opens with an expletive "it" ("It is customary to …") reads on
its own, so the sentence before it is not quoted as its antecedent; a referring "it" still takes it."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.sdk.patterns import EXPLETIVE_IT, opens_with_anaphor, refers_back

HARBOUR = """# Harbour ledger

## Ledger rotation

The harbour ledger stores every mooring fee paid by visiting boats.
It is customary to rotate the harbour ledger in March of each year.

## Ledger keeper

The keeper signs each page of the harbour ledger at dusk with a blue pen.
It is stored in the tide office behind the chart table.
"""


def test_an_expletive_it_refers_to_nothing() -> None:
    for sentence in (
        "It is customary to rotate the ledger in spring.",
        "It is not necessary to sign twice.",
        "It is expected that keepers sign at dusk.",
        "It would be wise for visitors to pay early.",
        "It takes a week for the ink to dry.",
    ):
        assert EXPLETIVE_IT.match(sentence), sentence
        assert not opens_with_anaphor(sentence), sentence


def test_a_referring_it_still_refers_back() -> None:
    for sentence in (
        "It is stored in the tide office.",
        "It is used to record fees.",
        "It is expected to close at noon.",
        "It is useful for audits.",
        "This ledger is kept for ten years.",
    ):
        assert not EXPLETIVE_IT.match(sentence), sentence
        assert opens_with_anaphor(sentence), sentence


def test_one_test_of_referring_back_serves_the_evidence_and_the_answer_span() -> None:
    """The evidence's carried terms and the span's antecedent read the same words (one home in sdk.patterns)."""
    for sentence in ("Both are kept in the tide office.", "Them we list below.", "He signs at dusk."):
        assert opens_with_anaphor(sentence) and refers_back(sentence), sentence
    assert refers_back("To do so, open the ledger.") and not opens_with_anaphor("To do so, open the ledger.")
    assert not refers_back("It is customary to sign twice.")
    assert not refers_back("Keepers sign at dusk.")


def test_a_sentence_with_an_expletive_it_is_quoted_without_the_one_before() -> None:
    answer = ask("When is the harbour ledger rotated?", units_of(HARBOUR)).answer
    assert "in March" in answer
    assert "mooring fee" not in answer


def test_a_sentence_with_a_referring_it_is_quoted_with_its_antecedent() -> None:
    answer = ask("Where is the harbour ledger stored?", units_of(HARBOUR)).answer
    assert "tide office" in answer
    assert "keeper signs" in answer


def test_a_month_after_a_preposition_of_time_states_a_date() -> None:
    from mrpvm.plugins.sdk.answer_shapes import mentions_type

    assert mentions_type("The ledger is rotated in March of each year.", "date")
    assert mentions_type("Fees are waived until early June.", "date")
    assert not mentions_type("The keepers march along the pier.", "date")
    assert not mentions_type("You may sign the ledger twice.", "date")


def test_a_light_verb_written_inflected_is_no_term_an_answer_must_state() -> None:
    from mrpvm.plugins.gs_symbolic.question import analyse

    assert "keep" not in analyse("Where is the harbour ledger kept?", "identify").terms
    assert "make" not in analyse("Who made the harbour ledger?", "identify").terms
    # a bare form may name a thing: the make tool, the use of something
    assert "make" in analyse("Which make target builds the ledger?", "identify").terms
    assert "use" in analyse("What is the use of the ledger?", "identify").terms


def test_where_a_thing_is_kept_is_answered_by_where_it_is() -> None:
    doc = ask("Where is the harbour ledger kept?", units_of(HARBOUR))
    assert "tide office" in doc.answer
    assert "term coverage 1.00" in doc.result.evidence
