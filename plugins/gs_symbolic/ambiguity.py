"""Evidence that reads two ways: an honest status when the quoted passage is not the only reading.

Two tests, each of what the evidence says besides the quote (not of how close the quote is to the question:
closeness and margin alone were measured not to separate right answers from wrong ones):

- `typed_rival`: a question asking for a value of a shape (a figure, a version, a date, a duration, a path,
  an option) whose best passage has a rival in another section that neither view separates from it — its
  words score within NEAR_TIE of the quote's and its meaning is at least as close to the question, and it
  answers by the judge's own test — and that writes out a value of that shape the quote does not. Two sections give two
  different values for one asked value: which one is meant is not settled by the evidence, so the answer is
  the best candidate (`weak`), not `success` ("Where is the copy of the licence?" over "see the file COPYING"
  in one section and "A copy of this license is in /usr/share/…" in another).
- `excepted`: a Yes/No answered from a general statement when the very next sentence of its paragraph turns
  on a contrast ("however", "but", "except", "unlike") and names a word of the question the statement does
  not: the exception names the asked case ("Cargo warns about unused keys. The metadata table, however, is
  ignored."), so the general rule is not the answer for it.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_shapes import SHAPED_TYPES
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.typed_spans import typed_spans

from .evidence import Sentence
from .passages import Judge, Passage
from .render import passage_text

NEAR_TIE = 0.15  # a rival scoring within this share of the quoted passage's score reads as well as it
RIVALS = 12  # the ranked passages looked at for a rival (the judge's own `best_of` reads as many)
_CONTRAST = lazy_pattern(
    r"\b(?:however|but|except|excepting|unlike|whereas|nevertheless|nonetheless|instead)\b", re.I
)


def typed_rival(answer_type: str, passage: Passage, quoted: str, ranked: list[Passage], judge: Judge) -> str:
    """A value of the asked shape that a near-tied passage of another section writes and `quoted` (the
    answer's text) does not; "" when there is none (or the asked type has no shape)."""
    if answer_type not in SHAPED_TYPES or passage.score <= 0:
        return ""
    stated = typed_spans(quoted, answer_type)
    for other in ranked[:RIVALS]:
        if other.score < passage.score * (1 - NEAR_TIE):
            break
        if other.unit_id == passage.unit_id or not other.typed or _closer(passage, other):
            continue
        values = typed_spans(passage_text(other), answer_type)
        if values and not values & stated and judge.answers(other):
            return sorted(values)[0]
    return ""


def _closer(passage: Passage, other: Passage) -> bool:
    """The quoted passage is closer in meaning to the question than `other`: the dense view separates them."""
    return passage.meaning is not None and other.meaning is not None and passage.meaning > other.meaning


def excepted(stating: Sentence, pool: list[Sentence], asked: set[str]) -> str:
    """The sentence right after `stating` in its paragraph when it opens an exception (a contrast word) and
    names one of the `asked` terms `stating` does not write; "" otherwise."""
    unit, order = stating.unit.id, stating.order
    after = next(
        (
            s
            for s in pool
            if s.unit.id == unit and s.order[:2] == order[:2] and s.order[2] == order[2] + 1 and not s.code
        ),
        None,
    )
    if after is None or _CONTRAST.search(after.text) is None:
        return ""
    named = (asked & set(after.terms)) - set(stating.terms) - stating.carried
    return after.text if named else ""
