"""The sentences gs-symbolic reads by meaning do not depend on what a warm worker encoded before: a question
over the same evidence reads the same sentences in a fresh process and in a daemon that answered other
questions first (a sentence beyond the read budget used to be read "free" when an earlier turn had cached
its vector, so the same question could get another answer)."""

from __future__ import annotations

from answer_support import needs_model, units_of
from mrpvm.plugins.gs_symbolic import meaning
from mrpvm.plugins.gs_symbolic.evidence import split_units

# one sentence per subject, more than the read budget, each sharing a different amount of the question's words
LINES = "\n\n".join(
    f"The kiln number {i} fires {'glaze ' * (i % 3)}pots at {900 + i} degrees."
    for i in range(meaning.MAX_SENTENCES + 8)
)
DOC = f"Kilns\n=====\n\n{LINES}\n"
QUESTION = "At which temperature does the kiln fire glaze pots?"


def _overlap(sentence) -> float:
    return float(sentence.text.count("glaze"))


def _read_texts(pool) -> list[str]:
    found = meaning.for_question(QUESTION, pool, _overlap)
    assert found is not None
    return sorted(s.text for s in found.read)


@needs_model
def test_a_sentence_an_earlier_turn_encoded_is_not_read_beyond_the_budget():
    pool = split_units([u for u in units_of(DOC, "kilns.md") if u.kuType == "atomic"])
    assert len(pool) > meaning.MAX_SENTENCES
    fresh = _read_texts(pool)
    unread = [s for s in pool if s.text not in fresh]
    assert unread, "the pool must exceed what one question reads"
    meaning.vectors([meaning.sentence_text(s) for s in unread])  # an earlier turn encoded these
    assert _read_texts(pool) == fresh
    assert len(fresh) == meaning.MAX_SENTENCES
