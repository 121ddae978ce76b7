"""Golden tests of the foreign focus (gs_symbolic/focus.py, issue 20): a question that turns on a word the
documents never use (the kind asked for, the action of a how-to) is never answered as `success`, and is
refused when the documents also lack another of its words; a synonym in the evidence is no foreign word.
The documents are written here; the collection weights come from kb-balanced's retrieval, as in a turn."""

from __future__ import annotations

from answer_support import ask, needs_model
from kb_corpus import tree
from mrpvm.plugins.gs_symbolic.focus import focus_words
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

KILN = tree(
    "kiln",
    [
        (
            "Getting kiln",
            [
                ("Procedure", "install", "To install kiln on a workstation, run `pip install kiln-tool`."),
                (
                    "Description",
                    "kiln",
                    "Kiln is a batch scheduler for pottery kilns written by the Clay Guild.",
                ),
                ("Description", "purge", "To remove kiln and its queue, run `kiln purge --all`."),
            ],
        ),
        (
            "Firing",
            [
                (
                    "Description",
                    "glaze",
                    "Kiln glazes each shelf with the enamelkit package before the first firing.",
                ),
                ("Description", "timer", "A firing of kiln lasts forty minutes at most."),
            ],
        ),
    ],
)

# the same documents without the sentence that says how to remove kiln
KILN_KEPT = [u for u in KILN if "remove kiln" not in (u.body or "")]


def test_focus_words_are_the_kind_asked_for_and_the_action_of_a_how_to():
    assert focus_words("Under which license is kiln released?") == ["license"]
    assert focus_words("How do I uninstall kiln?") == ["uninstall"]
    assert focus_words("How do I make kiln the default scheduler?") == []  # a light verb names no action
    assert focus_words("What does kiln glaze?") == []
    # the instrument a how-to names is what it turns on as much as its action
    assert focus_words("How do I fire a shelf with slipcast?") == ["fire", "slipcast"]
    assert focus_words("How can I install kiln using the Clayhub registry?") == ["install", "clayhub"]


@needs_model
def test_a_how_to_with_an_instrument_the_documents_never_name_is_refused():
    doc = ask("How do I install kiln with conda?", KILN)  # the documents say how with pip
    assert doc.result.status == "no-context" and doc.sources == []


@needs_model
def test_a_how_to_with_an_instrument_the_documents_name_is_answered():
    doc = ask("How do I install kiln with pip?", KILN)
    assert "pip install kiln-tool" in doc.answer


@needs_model
def test_a_kind_and_a_second_word_the_documents_never_use_are_refused():
    doc = ask("Under which license is the enamelkit package of kiln released?", KILN)
    assert doc.result.status == "no-context"
    assert doc.answer == NO_CONTEXT_ANSWER and doc.sources == []


@needs_model
def test_a_passage_close_in_meaning_to_a_foreign_question_is_weak_at_most():
    doc = ask("Under which license is the kiln batch scheduler released?", KILN)
    assert doc.result.status in ("insufficient", "no-context")  # never `success`


@needs_model
def test_an_action_the_documents_never_name_is_never_success():
    doc = ask("How do I uninstall the kiln scheduler from a workstation?", KILN_KEPT)
    assert doc.result.status != "success"
    if doc.result.status == "insufficient":
        assert "never name 'uninstall'" in doc.result.evidence


@needs_model
def test_an_instance_named_without_its_kind_is_answered_weakly():
    doc = ask("Which library does kiln use to glaze each shelf?", KILN)
    assert doc.result.status == "insufficient"  # the right sentence, but "library" is never said
    assert "enamelkit" in doc.answer


@needs_model
def test_a_synonym_in_the_evidence_is_no_foreign_word():
    doc = ask("How do I delete kiln and its queue?", KILN)  # "remove" is in the documents
    assert doc.result.status == "success"
    assert "kiln purge --all" in doc.answer


def test_without_collection_weights_no_word_is_foreign():
    from mrpvm.plugins.gs_symbolic.focus import foreign_focus

    assert foreign_focus("Under which license is kiln released?", {}, []) == ""
    assert foreign_focus("Under which license is kiln released?", {"licens": 1.2}, []) == ""
