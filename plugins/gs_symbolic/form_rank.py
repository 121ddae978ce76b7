"""Answer-type re-ranking: among passages scoring close to the best, those stating what the question's form
asks for (answer_form.unstated) come first."""

from __future__ import annotations

from .answer_form import unstated
from .question import Question
from .render import passage_text
from .windows import Passage

FORM_WINDOW = 0.75  # answer-type re-ranking looks at passages scoring this share of the best (Judge.best_of)
FORM_DEPTH = 12  # ... among this many


def form_first(q: Question, ranked: list[Passage]) -> list[Passage]:
    """Answer-type re-ranking: among the passages scoring close to the best (the judge's window), those
    stating what the question's form asks for (a file's name for "which file", a default for "by default";
    answer_form.unstated) come first, in score order. Without one, the ranking stands."""
    if not ranked or not unstated(q, passage_text(ranked[0])):
        return ranked
    floor = ranked[0].score * FORM_WINDOW
    stating = [p for p in ranked[:FORM_DEPTH] if p.score >= floor and not unstated(q, passage_text(p))]
    if not stating:
        return ranked
    first = {id(p) for p in stating}
    return stating + [p for p in ranked if id(p) not in first]
