"""Constrained answers (Yes/No, one word) only from statements that say the answer explicitly.

Yes/No: the question's proposition (its content words, in order) must occur in order inside one
evidence sentence or one proved conclusion; the sentence's polarity gives Yes or No. Conflicting
statements, hypothetical questions, or no such statement give no answer at all (never a guess).

Which/who/what: the question's predicate must occur in order in a sentence, and the words of that
sentence's remaining slot (the subject before it, or the object after it) must name one entity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mrpvm.plugins.sdk.text import STOPWORDS, stems, terms

from .evidence import Sentence, is_subsequence
from .question import Question

_NEGATION = frozenset(
    ["not", "no", "never", "cannot", "neither", "nor", "none", "nothing", "nobody", "nowhere"]
)
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
_PRONOUNS = frozenset(
    [
        "he",
        "she",
        "it",
        "they",
        "this",
        "that",
        "these",
        "those",
        "him",
        "her",
        "them",
        "we",
        "you",
        "i",
        "his",
        "its",
        "their",
    ]
)
_AUX = frozenset(
    ["do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "can", "will", "shall"]
)
_DETERMINERS = frozenset(["the", "a", "an", "single", "one", "only"])
_RELATIVE = frozenset(["that", "who", "whose", "which", "whom"])
_CLAUSE_BREAK = re.compile(r"[,;:()—–]|\s-\s")


@dataclass(slots=True)
class Verdict:
    answer: str
    sentences: list[Sentence]  # the statements that give it
    derived: bool = False


_HEDGES = frozenset(
    ["if", "unless", "may", "might", "could", "would", "possibly", "perhaps", "probably", "whether"]
)


def negated(words_: list[str]) -> bool:
    text = " ".join(words_).replace("not only", "")
    return any(t in _NEGATION or t.endswith("n't") for t in text.split())


def proposition(text: str) -> list[str]:
    """A statement's content stems in order: every content word counts (no framing words dropped)."""
    return [t for t in terms(text) if "-" not in t]


def _polarity(s: Sentence, prop: list[str]) -> str | None:
    """'Yes' or 'No' when the sentence states the proposition (unhedged), else None.

    Only the words from the start of the sentence's clause to the end of the match decide: a negation
    or a hedge ("may", "if") there changes or voids the statement; one in another clause does not.
    """
    toks, aligned = _aligned(s.text)
    hit = is_subsequence(prop, [st for st, _ in aligned])
    if hit is None:
        return None
    first_tok, last_tok = aligned[hit[0]][1], aligned[hit[1]][1]
    start = 0
    for m in _CLAUSE_BREAK.finditer(s.text, 0, toks[first_tok][1]):
        start = m.end()
    span = [t[0].lower().replace("’", "'") for t in toks[: last_tok + 1] if t[1] >= start]
    if any(t in _HEDGES for t in span):
        return None
    return "No" if negated(span) else "Yes"


def yes_no(q: Question, pool: list[Sentence], conclusions: list[Sentence]) -> Verdict | None:
    """Yes or No when a statement asserts or denies the question's proposition; else None."""
    if q.hypothetical or not q.polar:
        return None
    prop = proposition(q.focus)
    if len(prop) < 2:
        return None
    found: dict[str, list[Sentence]] = {"Yes": [], "No": []}
    derived = False
    for s in pool:
        word = _polarity(s, prop)
        if word is not None:
            found[word].append(s)
    if not found["Yes"] and not found["No"]:
        for s in conclusions:
            if is_subsequence(prop, s.terms) is not None:
                found["Yes"].append(s)
                derived = True
    if found["Yes"] and found["No"]:
        return None  # the evidence contradicts itself: do not pick a side
    # "Isn't X Y?" is answered like "Is X Y?": the answer follows the statement's polarity.
    for word in ("Yes", "No"):
        if found[word]:
            return Verdict(word, found[word], derived)
    return None


# --------------------------------------------------------------------------- which / who / what


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def _aligned(text: str) -> tuple[list[tuple[str, int, int]], list[tuple[str, int]]]:
    """Word tokens with spans, and (stem, token index) for each content word."""
    toks = _tokens(text)
    lowered = [t[0].lower().replace("’", "'") for t in toks]
    keep = [
        (i, w[:-2] if w.endswith("'s") else w)
        for i, w in enumerate(lowered)
        if w not in STOPWORDS and len(w) > 1
    ]
    stemmed = stems([w.replace("'", "") for _, w in keep])
    return toks, [(s, i) for s, (i, _) in zip(stemmed, keep, strict=True)]


def _predicate(focus: str) -> tuple[list[str], str] | None:
    """The question's predicate terms and which slot the answer fills ('subject' or 'object')."""
    toks = [t[0].lower() for t in _tokens(focus)]
    if not toks:
        return None
    i = 1
    head = toks[0]
    if head in ("name", "identify"):
        while i < len(toks) and toks[i] in _DETERMINERS:
            i += 1
        i += 1  # the head noun ("character", "tool")
        if i < len(toks) and toks[i] in _RELATIVE:
            i += 1
    elif head in ("which", "what", "whose") and i < len(toks) and toks[i] not in _AUX:
        i += 1  # "which component"
    rest = toks[i:]
    slot = "subject"
    # "what does A use" → object; "which tool is used by A" stays subject (passive)
    passive = len(rest) < 2 or rest[1].endswith("ed")
    if rest and rest[0] in _AUX and head in ("which", "what", "who", "whom") and not passive:
        slot = "object"
    pred = proposition(" ".join(rest))
    if len(pred) < 1:
        return None
    return pred, slot


def _entity_phrase(text: str, toks: list[tuple[str, int, int]]) -> str | None:
    """One entity named by a short phrase: a single capitalised name, or at most three content words."""
    clean = [t for t in toks if t[0].lower() not in STOPWORDS or t[0][0].isupper()]
    clean = [t for t in clean if t[0].lower() not in _DETERMINERS]
    if not clean:
        return None
    if any(t[0].lower() in _PRONOUNS for t in clean):
        return None
    runs: list[list[tuple[str, int, int]]] = []
    for t in clean:
        if t[0][0].isupper():
            if runs and _adjacent(text, runs[-1][-1], t):
                runs[-1].append(t)
            else:
                runs.append([t])
    if len(runs) == 1:
        run = runs[0]
        return text[run[0][1] : run[-1][2]]
    if not runs and len(clean) <= 3:
        return text[clean[0][1] : clean[-1][2]]
    return None


def _adjacent(text: str, a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    gap = text[a[2] : b[1]]
    return gap.strip() in ("", ".")


def which(q: Question, pool: list[Sentence]) -> Verdict | None:
    """The one entity a sentence supplies for the question's predicate; None when absent or ambiguous."""
    if q.hypothetical or not q.wh:
        return None
    parsed = _predicate(q.focus)
    if parsed is None:
        return None
    pred, slot = parsed
    answers: dict[str, tuple[str, list[Sentence]]] = {}
    for s in pool:
        toks, aligned = _aligned(s.text)
        hit = is_subsequence(pred, [st for st, _ in aligned])
        if hit is None:
            continue
        first_tok, last_tok = aligned[hit[0]][1], aligned[hit[1]][1]
        if slot == "subject":
            start = 0
            for m in _CLAUSE_BREAK.finditer(s.text, 0, toks[first_tok][1]):
                start = m.end()
            span = [t for t in toks[:first_tok] if t[1] >= start]
        else:
            end = len(s.text)
            m = _CLAUSE_BREAK.search(s.text, toks[last_tok][2])
            if m:
                end = m.start()
            span = [t for t in toks[last_tok + 1 :] if t[2] <= end]
            for k, t in enumerate(span):
                if t[0].lower() in _RELATIVE:
                    span = span[:k]
                    break
        phrase = _entity_phrase(s.text, span)
        if not phrase or set(terms(phrase)) & set(pred):
            continue
        key = phrase.lower()
        answers.setdefault(key, (phrase, []))[1].append(s)
    if len(answers) != 1:
        return None
    phrase, sents = next(iter(answers.values()))
    return Verdict(phrase, sents)
