"""Agreement of the two independent views that choose a passage: its words and its meaning.

The judge (passages.py) ranks passages by a combination: the question's weighted words (the lexical view,
evidence.Scorer) plus the cosine of MiniLM sentence vectors (the meaning view, meaning.py), and a battery of
form checks. Each view alone also ranks the evidence. When the unit the combination quotes is preferred by
NEITHER view alone (another section, i.e. another heading path or document, holds a sentence sharing more of the question's
weighted words, and a sentence of another section is closer in meaning), the choice rests on no independent evidence: the answer is
the best candidate, reported as weak, never `success`. The test is relative (the quoted unit against the
rest of the same evidence, a comparison with zero), so it needs no threshold fitted on any suite.

Measured on the development suites (real01-10, dev01-17: 1 right `success` of 183 lost, 0 of 7 wrong
demoted) and their answer-removed negatives (bench/status_features.py --negatives --forms
paragraphs,lines: 5 wrong `success` of 109 demoted, 0 of 12 right lost); a view alone disagrees far more
often with right answers (meaning: 23 right of 183 lost; words: 6).
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
            self.meaning = passage.meaning - max(c for c in closes if c is not None) if closes else None
        score = judge.scorer.score
        others = [score(s) for s in pool if section(s) not in places]
        self.words = max(score(s) for s in passage.sentences) - max(others) if others else None

    @property
    def disowned(self) -> bool:
        """Both views alone prefer other units over the quoted one."""
        return self.meaning is not None and self.meaning < 0 and self.words is not None and self.words < 0

    def __str__(self) -> str:
        views = (("meaning", self.meaning), ("words", self.words))
        return ", ".join(f"{name} lead {v:.2f}" for name, v in views if v is not None)
