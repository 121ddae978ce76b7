"""Scoring for `mrpvm eval` (DS021): whole-word matching, per-question scores and per-suite totals.

All matching is case-insensitive on whole words/phrases ("No" does not match "not", "Vex" does not match
"Vexed"); whitespace and typographic quotes/dashes are normalised. A question passes *strict* when its
answer passes and fits `answerMaxChars`. A refusal is the exact no-context sentence; a question expects
one when its `answerMustMention` quotes that sentence. A false refusal refuses a question that expects
an answer; a false answer answers one that expects a refusal.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

import msgspec
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER
from mrpvm.shells.evaluation.suites import Expected, ExpectedIntent

_QUOTES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2010": "-", "\u2011": "-"}
)
_SPACE = re.compile(r"\s+")
_DASHES = re.compile(r"[\u2012\u2013\u2014\u2015]")


def normalize(text: str) -> str:
    """Lower case, straight quotes, dashes and whitespace runs as one space."""
    return _SPACE.sub(" ", _DASHES.sub(" ", text.translate(_QUOTES).lower())).strip()


def _pattern(term: str) -> re.Pattern[str]:
    words = normalize(term).split(" ")
    body = r"\s+".join(re.escape(w) for w in words)
    return re.compile(rf"(?<!\w){body}(?!\w)")


def mentions(text: str, term: str) -> bool:
    """Does `text` mention `term` as a whole word/phrase (case-insensitive)? Empty terms never match."""
    if not term.strip():
        return False
    return _pattern(term).search(normalize(text)) is not None


def expects_refusal(expected: Expected) -> bool:
    """The expected answer is the no-context sentence: a required phrase of three or more words taken
    from it (suites write e.g. "not contain enough evidence")."""
    sentence = normalize(NO_CONTEXT_ANSWER)
    return any(
        len(normalize(t).split()) >= 3 and _pattern(t).search(sentence) for t in expected.answerMustMention
    )


def is_refusal(answer: str) -> bool:
    """The answer carries the exact no-context sentence (in any of its groups)."""
    return normalize(NO_CONTEXT_ANSWER) in normalize(answer)


class Score(msgspec.Struct, kw_only=True):
    intentPass: bool
    answerPass: bool
    contextPass: bool
    recall: float
    precision: float
    f1: float
    answerStrictPass: bool = False
    answerChars: int = 0
    refused: bool = False
    expectsRefusal: bool = False
    falseRefusal: bool = False
    falseAnswer: bool = False
    intentMissing: list[list[str]] = []
    answerMissing: list[str] = []
    answerForbidden: list[str] = []
    contextMissing: list[str] = []
    contextForbidden: list[str] = []


def _intents_match(expected: list[ExpectedIntent], detected: list[str]) -> tuple[bool, list[list[str]]]:
    """Match expected intents to distinct detected intents (bipartite); returns (pass, unmatched terms)."""
    if not expected:
        return True, []
    fits = [[all(mentions(d, t) for t in e.intentMustMention) for d in detected] for e in expected]
    ordered = not all(e.orderIndependent for e in expected)
    if ordered:
        missing = [
            e.intentMustMention for i, e in enumerate(expected) if i >= len(detected) or not fits[i][i]
        ]
        return not missing, missing
    owner: dict[int, int] = {}  # detected index -> expected index

    def augment(e: int, seen: set[int]) -> bool:
        for d, ok in enumerate(fits[e]):
            if ok and d not in seen:
                seen.add(d)
                if d not in owner or augment(owner[d], seen):
                    owner[d] = e
                    return True
        return False

    missing = [expected[e].intentMustMention for e in range(len(expected)) if not augment(e, set())]
    return not missing, missing


def score(expected: Expected, intents: list[str], evidence: list[str], answer: str) -> Score:
    """Score one question from the detected intents' texts, the evidence texts and the answer text."""
    intent_ok, intent_missing = _intents_match(expected.intents, intents)
    context = "\n".join(evidence)
    found_need = [t for t in expected.contextMustMention if mentions(context, t)]
    found_bad = [t for t in expected.contextMustNotMention if mentions(context, t)]
    recall = len(found_need) / len(expected.contextMustMention) if expected.contextMustMention else 1.0
    precision = (
        1.0 - len(found_bad) / len(expected.contextMustNotMention) if expected.contextMustNotMention else 1.0
    )
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    answer_missing = [t for t in expected.answerMustMention if not mentions(answer, t)]
    answer_bad = [t for t in expected.answerMustNotContain if mentions(answer, t)]
    answer_ok = not answer_missing and not answer_bad
    chars = len(answer.strip())
    refused, wants_refusal = is_refusal(answer), expects_refusal(expected)
    return Score(
        intentPass=intent_ok,
        answerPass=answer_ok,
        answerStrictPass=answer_ok and (expected.answerMaxChars is None or chars <= expected.answerMaxChars),
        answerChars=chars,
        refused=refused,
        expectsRefusal=wants_refusal,
        falseRefusal=refused and not wants_refusal,
        falseAnswer=wants_refusal and not refused and bool(answer.strip()),
        contextPass=len(found_need) == len(expected.contextMustMention) and not found_bad,
        recall=round(recall, 4),
        precision=round(precision, 4),
        f1=round(f1, 4),
        intentMissing=intent_missing,
        answerMissing=answer_missing,
        answerForbidden=answer_bad,
        contextMissing=[t for t in expected.contextMustMention if t not in found_need],
        contextForbidden=found_bad,
    )


class Totals(msgspec.Struct, kw_only=True):
    """Per-suite answer figures. The median length counts answers only (refusals and errors excluded),
    so a suite that refuses often cannot look concise."""

    answerStrictPass: int
    medianAnswerChars: float
    unanswerable: int
    refusedUnanswerable: int
    falseRefusals: int
    falseAnswers: int


def totals(scores: Sequence[Score]) -> Totals:
    answered = [s.answerChars for s in scores if s.answerChars and not s.refused]
    return Totals(
        answerStrictPass=sum(s.answerStrictPass for s in scores),
        medianAnswerChars=float(statistics.median(answered)) if answered else 0.0,
        unanswerable=sum(s.expectsRefusal for s in scores),
        refusedUnanswerable=sum(s.expectsRefusal and s.refused for s in scores),
        falseRefusals=sum(s.falseRefusal for s in scores),
        falseAnswers=sum(s.falseAnswer for s in scores),
    )
