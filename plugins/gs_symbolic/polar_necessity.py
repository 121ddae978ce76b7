"""A yes/no question under a negated condition, answered by a stated necessity (issue 20: false refusals).

"Can I add an account to a list if I don't follow it?" over "Add accounts to the given list. Note that the
user must be following these accounts.": the reference states a necessary condition of the asked action
(*must*, *has to*, *needs to*, *is required to*, *only if*), the question asks the action with that very
condition negated, and the answer follows by modus tollens: No. A question under a condition is otherwise
answered only by an explicit statement (explicit.py): no polarity reader reads a conditional question.

The necessity is read where the action is stated: a sentence of a unit that states (itself, with the
sentence before it in its unit, or with its heading) at least MIN_ACTION of the weighted words of the
question's main clause, and whose necessity clause writes a word of the asked condition (by stem: "follow"
/ "following"). A prohibition ("must not …") or a necessity without the condition's word is no answer;
two units both qualifying with different sentences leave the question to the other readers (None). The
answer is the best candidate (weak): the inference is the reader's, not a sentence's.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, terms

from .directives import split_at_condition
from .evidence import Sentence
from .material import Outcome
from .question import Question

MIN_ACTION = 0.6  # weighted share of the main clause's words the action's sentences must state
# a necessity (not a prohibition: "must not", "need not", "does not have to" are not read) and what it
# governs, up to the end of its clause
_NECESSITY = lazy_pattern(
    r"\b(?:must(?!\s+not\b|n[’']t)|(?<!not )ha(?:s|ve)\s+to|needs?\s+to|(?:is|are)\s+required\s+to"
    r"|only\s+(?:if|when))\b([^.;:]*)",
    re.I,
)
# the words of a question's main clause that frame it ("Can I …", "Is it possible to …")
_FRAME = frozenset(terms("can could may might possible allowed able"))


def necessity_verdict(q: Question, pool: list[Sentence], weights: dict[str, float]) -> Outcome | None:
    """No, when the evidence states the negated condition as a necessity of the asked action (see the
    module docstring); None otherwise."""
    question = q.focus or q.text
    split = split_at_condition(question)
    if split is None or not split[1].negated:
        return None
    asked, condition = split
    main = {t for t in terms(asked) if t not in _FRAME and t not in STOPWORDS}
    wanted = {t for t in condition.about if t not in STOPWORDS} - main
    if not main or not wanted:
        return None
    total = sum(weights.get(t, 1.0) for t in main)
    before = {(s.unit.id, s.order[2]): s for s in pool}
    found: dict[str, tuple[float, list[Sentence]]] = {}
    for s in pool:
        m = _NECESSITY.search(s.text)
        if m is None or not set(terms(m.group(1))) & wanted:
            continue  # no necessity, or not of the asked condition
        window = [p for p in (before.get((s.unit.id, s.order[2] - 1)), s) if p is not None]
        said = {t for p in window for t in p.terms} | set(terms(s.unit.heading or "")) | s.under
        share = sum(weights.get(t, 1.0) for t in main & said) / total
        if share >= MIN_ACTION and share > found.get(s.unit.id, (0.0, []))[0]:
            found[s.unit.id] = (share, window)
    if len(found) != 1:
        return None  # none, or several units' necessities: which one governs the asked action is not told
    share, window = next(iter(found.values()))
    quote = " ".join(p.text for p in window)
    evidence = f"a stated necessity of the asked action ({share:.2f} of its words), the condition negated"
    return Outcome(f"No. {quote}", [window[-1].unit.id], "low", evidence, "explicit", supported=False)
