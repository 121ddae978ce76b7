"""A support score's unit terms are kept by text (kernel/engine/support.py `unit_terms`): the same units
cited turn after turn are tokenized once, and every score is the one a fresh tokenization gives."""

from __future__ import annotations

import pytest
from mrpvm.kernel.engine import support
from mrpvm.protocol.document import KnowledgeUnit


def _unit(uid: str, topic: str, claim: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        sourceId="kiln",
        chunkId="kiln::chunk-0",
        kuType="atomic",
        role="Description",
        topic=topic,
        claim=claim,
    )


KILN = [
    _unit("kiln::unit-1", "Bisque firing", "A bisque firing heats the clay to 1000 degrees in eight hours."),
    _unit("kiln::unit-2", "Glaze firing", "The glaze firing follows at 1240 degrees; cones 6 to 8 bend."),
    _unit("kiln::unit-3", "Cooling", "The kiln cools for twelve hours before the lid is lifted."),
]


def _fresh_support(
    answer: str, question: str, sources: list[str], evidence: list[KnowledgeUnit]
) -> float | None:
    """The score tokenizing every text again (what `answer_support` computed before the memo)."""
    terms = support.answer_terms(answer)
    if not terms or not evidence:
        return None
    added = terms - support.answer_terms(question)
    if not added:
        return 0.0
    cited = [u for u in evidence if u.id in set(sources)] or evidence
    known: set[str] = set()
    for u in cited:
        known |= support.answer_terms(f"{u.title or ''} {u.topic or ''} {u.body}")
    return round(len(added & known) / len(added), 3)


@pytest.fixture(autouse=True)
def _empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(support, "_UNIT_TERMS", {}, raising=False)  # main has none: its tests fail, not error


CASES = [
    ("A bisque firing reaches 1000 degrees.", "How hot is a bisque firing?", ["kiln::unit-1"]),
    ("It cools for twelve hours.", "How long does the kiln cool?", ["kiln::unit-3"]),
    ("Cones 6 to 8 bend at 1240 degrees, after eight hours.", "What bends?", []),  # cites none: all evidence
    ("The lid is lifted at dawn by the potter.", "When is the lid lifted?", ["kiln::unit-9"]),  # unknown id
    ("How hot is a bisque firing?", "How hot is a bisque firing?", ["kiln::unit-1"]),  # restated: 0.0
]


@pytest.mark.parametrize(("answer", "question", "sources"), CASES)
def test_scores_equal_a_fresh_tokenization_first_and_again(
    answer: str, question: str, sources: list[str]
) -> None:
    expected = _fresh_support(answer, question, sources, KILN)
    assert support.answer_support(answer, question, sources, KILN) == expected  # the memo being filled
    assert support.answer_support(answer, question, sources, KILN) == expected  # read from it
    assert support.evidence_support(answer, sources, KILN) == support.evidence_support(answer, sources, KILN)


def test_a_unit_cited_again_is_not_tokenized_again(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    tokenize = support.answer_terms

    def counting(text: str) -> set[str]:
        seen.append(text)
        return tokenize(text)

    monkeypatch.setattr(support, "answer_terms", counting)
    for _ in range(3):
        support.answer_support("Twelve hours of cooling.", "How long?", ["kiln::unit-3"], KILN)
    unit_text = f" {KILN[2].topic} {KILN[2].body}"
    assert seen.count(unit_text) == 1  # the answer and the question are tokenized each time, the unit once
    assert seen.count("Twelve hours of cooling.") == 3


def test_the_kept_terms_cannot_be_changed_by_a_reader() -> None:
    first = support._cited_terms(["kiln::unit-1"], KILN)
    first.add("glaze")  # the caller's own set
    again = support._cited_terms(["kiln::unit-1"], KILN)
    assert "glaze" not in again and isinstance(
        support.unit_terms(f" {KILN[0].topic} {KILN[0].body}"), frozenset
    )


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(support, "_UNIT_TERMS_MAX", 3)
    for i in range(3):
        support.unit_terms(f"pot number {i}")
    assert len(support._UNIT_TERMS) == 3
    support.unit_terms("pot number 3")  # full: forgotten all at once, then kept
    assert list(support._UNIT_TERMS) == ["pot number 3"]
    long_text = "kiln " * (support._UNIT_TERMS_MAX_CHARS // 4)
    assert support.unit_terms(long_text) == frozenset({"kiln"})
    assert long_text not in support._UNIT_TERMS  # a long text is tokenized every time
