"""Agreement of the two independent views that choose a passage: its words and its meaning (reported only).

The judge (passages.py) ranks passages by a combination: the question's weighted words (the lexical view,
evidence.Scorer) plus the cosine of MiniLM sentence vectors (the meaning view, meaning.py), and a battery of
form checks. Each view alone also ranks the evidence. `Leads` says how far the section the combination
quotes is ahead of the best other section (another heading path or document) by each view alone; gs-symbolic
reports both figures in its evidence for bench/status_features.py, and nothing reads them at run time.

Session 21 (docs/answers/FAILURES.md, answers20) tried them as a status test: `success` only when at
least one view alone prefers the quoted section. With rivals counted per section it demoted one right
`success` of the development suites, none of their answer-removed negatives and one wrong `success` of the
held suites (a wash: not landed); counted per unit it demoted 5 wrong negatives for 1 right suite answer,
but also a right answer whose sibling item under the same heading was the rival.
"""

from __future__ import annotations

from collections.abc import Sequence

from .evidence import Sentence
from .passages import Judge, Passage


def section(s: Sentence) -> tuple[str, str]:
    """Where a sentence stands: its document and heading path (an entry, an option, a section)."""
    return (s.unit.sourceId, s.unit.sectionTitle or "")


class Leads:
    """How far the quoted passage's best sentence is ahead of the best sentence of another section (another
    document, or another heading path in it), by each view alone (negative: another section is preferred;
    None: no sentence of another section was read by that view). The sentences of the quoted ones' own
    sections are no rivals: they complete the same entry."""

    def __init__(self, judge: Judge, passage: Passage, pool: Sequence[Sentence], quoted: Sequence[Sentence]):
        places = {section(s) for s in quoted}
        self.meaning: float | None = None
        if passage.meaning is not None and judge.meaning is not None:
            closes = [judge.meaning.of(s) for s in judge.meaning.read if section(s) not in places]
            rivals = [c for c in closes if c is not None]
            self.meaning = passage.meaning - max(rivals) if rivals else None
        score = judge.scorer.score
        others = [score(s) for s in pool if section(s) not in places]
        self.words = max(score(s) for s in passage.sentences) - max(others) if others else None

    def __str__(self) -> str:
        views = (("meaning", self.meaning), ("words", self.words))
        return ", ".join(f"{name} lead {v:.2f}" for name, v in views if v is not None)
