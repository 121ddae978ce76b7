"""gs-symbolic's action judges read the vectors of a passage's words in one batch (action._read_ahead), not
one encode per word, and judge exactly as word by word (issue 22 item 5: ~4 ms of fixed cost per encode)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from answer_support import needs_model, sentence_of
from mrpvm.plugins.gs_symbolic import action as action_module
from mrpvm.plugins.gs_symbolic import meaning
from mrpvm.plugins.gs_symbolic.action import acts, asked_action, done_elsewhere, misapplied

POOL = [
    "A lantern is configured by `glow.ini` files; each lists wicks, and a wick is a named flame with its fuel.",
    "``glow trim`` will shorten the wicks of every lantern in the shed.",
    "Run ``glow snuff`` to extinguish a lantern and cool its chimney.",
    "Lanterns are never lit without a chimney fitted.",
]


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The number of texts of each encode (kept_vectors) call, with the worker's cache emptied."""
    calls: list[int] = []
    real = meaning.kept_vectors

    def counted(texts: Sequence[str]) -> object:
        calls.append(len(texts))
        return real(texts)

    monkeypatch.setattr(meaning, "_cache", type(meaning._cache)())
    monkeypatch.setattr(meaning, "_ahead", {})
    monkeypatch.setattr(meaning, "kept_vectors", counted)
    yield calls


def _verdicts(question: str) -> tuple[bool, bool, list[bool]]:
    asked = asked_action(question)
    assert asked is not None
    pool = [sentence_of(text) for text in POOL]
    said = {t for s in pool for t in s.terms}
    return (
        done_elsewhere(asked, pool),
        misapplied(asked, pool),
        [acts(asked, [s], said) for s in pool],
    )


@needs_model
def test_a_passage_s_words_are_encoded_in_one_batch(encodes: list[int]) -> None:
    _verdicts("How do I extinguish a lantern?")
    assert len(encodes) == 1  # word by word: one encode per word compared with the verb
    assert encodes[0] > 10


@needs_model
def test_reading_ahead_judges_as_word_by_word(monkeypatch: pytest.MonkeyPatch, encodes: list[int]) -> None:
    questions = ["How do I extinguish a lantern?", "How do I shorten a lantern?", "How do I trim a wick?"]
    batched = [_verdicts(q) for q in questions]
    asked = list(meaning._cache)
    assert batched[1][:2] == (True, True)  # shortening is done to the wicks, not the lantern
    monkeypatch.setattr(meaning, "_cache", type(meaning._cache)())
    monkeypatch.setattr(meaning, "_ahead", {})
    monkeypatch.setattr(action_module, "_read_ahead", lambda action, sentences: None)
    assert [_verdicts(q) for q in questions] == batched
    # the texts asked for (which `for_question` reads free) are the same, in the same order: reading
    # ahead never adds a sentence to what the meaning judge reads
    assert list(meaning._cache) == asked
