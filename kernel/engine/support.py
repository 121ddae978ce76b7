"""Evidence support of a goal solver's answer: the share of its terms found in the units it cites.

`answer_support` is what the planner learns from: the same share over the terms the answer adds to the
question (an answer that only restates the question's own words says nothing, and scores 0 however well
the evidence "supports" those words).

A run-time measure of groundedness that needs no gold answer: an answer that restates what its cited
units say scores near 1, one that adds names, numbers or claims they do not contain scores low. It is
term-level (lower-cased words and numbers, stop words and one-letter tokens dropped), so it cannot tell
a negation from an assertion; it is a signal for learning and for weighing a validator's rejection,
never a verdict of its own.
"""

from __future__ import annotations

import re

from mrpvm.protocol.document import KnowledgeUnit

_VERDICT = re.compile(r"^\W*(?:yes|no|true|false)\b", re.IGNORECASE)
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.+-]*[a-z0-9]|[a-z0-9]")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "must",
        "no",
        "not",
        "of",
        "on",
        "or",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yes",
        "also",
        "only",
        "other",
        "more",
        "most",
        "any",
        "all",
        "each",
        "both",
        "use",
        "used",
        "uses",
        "using",
        "see",
        "set",
    ]
)


def answer_terms(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.lower()) if (len(t) > 1 or t.isdigit()) and t not in _STOP}


def evidence_support(answer: str, sources: list[str], evidence: list[KnowledgeUnit]) -> float | None:
    """Share of the answer's terms present in its cited units (all evidence when it cites none that were
    given); None for an answer without terms or without evidence."""
    terms = answer_terms(answer)
    if not terms or not evidence:
        return None
    return round(len(terms & _cited_terms(sources, evidence)) / len(terms), 3)


def _cited_terms(sources: list[str], evidence: list[KnowledgeUnit]) -> set[str]:
    """The terms of the cited units (all evidence when none of the cited ids was given)."""
    wanted = set(sources)
    cited = [u for u in evidence if u.id in wanted] or evidence
    known: set[str] = set()
    for unit in cited:
        known |= unit_terms(f"{unit.title or ''} {unit.topic or ''} {unit.body}")
    return known


# A unit's text -> its terms. The same units are cited turn after turn (a KB's units, retrieved again for
# each question about them), and tokenizing them was most of a support score's CPU; the terms of a text
# never change, so a text seen before is not tokenized again. Bounded: forgotten all at once when full.
_UNIT_TERMS: dict[str, frozenset[str]] = {}
_UNIT_TERMS_MAX = 1024  # texts
_UNIT_TERMS_MAX_CHARS = 8 << 10  # a longer text is tokenized every time (the memo stays a few MB at most)


def unit_terms(text: str) -> frozenset[str]:
    """`answer_terms` of a unit's text, remembered for the next time the same text is cited."""
    known = _UNIT_TERMS.get(text)
    if known is not None:
        return known
    terms = frozenset(answer_terms(text))
    if len(text) <= _UNIT_TERMS_MAX_CHARS:
        if len(_UNIT_TERMS) >= _UNIT_TERMS_MAX:
            _UNIT_TERMS.clear()
        _UNIT_TERMS[text] = terms
    return terms


def answer_support(
    answer: str, question: str, sources: list[str], evidence: list[KnowledgeUnit]
) -> float | None:
    """`evidence_support` of the terms the answer adds to `question`; 0.0 when it adds none (a restated
    question is not an answer), unless it opens with a verdict (yes/no/true/false: the restated words are
    what it affirms or denies); None for an answer without terms or without evidence."""
    terms = answer_terms(answer)
    if not terms or not evidence:
        return None
    added = terms - answer_terms(question)
    if not added and _VERDICT.match(answer):
        added = terms
    if not added:
        return 0.0
    return round(len(added & _cited_terms(sources, evidence)) / len(added), 3)
