"""Yes/No from the one sentence that states the question's proposition or its negation.

The proposition is the question's main clause ("Can I keep using my existing ssh-rsa keys"), without the
clause that only sets the scene ("after OpenSSH 8.8 disabled RSA signatures"). A sentence states it when
it carries nearly all of the proposition's weighted terms itself (its heading or term may supply the
subject), including every key term (names, numbers, options). The answer's polarity is the parity of
negations in the clause of that sentence which carries the proposition ("WSL is not supported, but the
build should work": the first clause) against the question's own ("Isn't X …?"). No sentence states it:
no answer, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mrpvm.plugins.sdk.text import terms

from .clauses import is_negator, split_clauses, tokenize
from .evidence import Scorer, Sentence
from .lexicon import NEGATIVE_VERBS
from .passages import unit_context

MIN_STATED = 0.75  # weighted share of the proposition the sentence (with its context) states
MIN_OWN = 0.5  # ... and the sentence itself
_SCENE = re.compile(
    r"[,]?\s+\b(?:after|before|since|when|whenever|while|once|because|although|though|even though|now that|"
    r"given that|if|unless|until)\b.*$",
    re.I,
)
_FRAME = re.compile(r"^\s*(?:is it (?:possible|safe|ok|okay|true) (?:to|that)\s+)", re.I)


@dataclass(slots=True)
class PolarVerdict:
    answer: str  # "Yes" | "No"
    sentence: Sentence
    stated: float


def proposition(focus: str) -> str:
    """The main clause of a yes/no question, without a scene-setting subordinate clause."""
    text = focus.strip().rstrip("?").strip()
    text = _FRAME.sub("", text)
    main = _SCENE.sub("", text)
    return main if terms(main) else text


_PARENTHETICAL = re.compile(r"\s*\([^()]{0,80}\)")


def _negated(text: str, stems: set[str]) -> bool | None:
    """Whether the clause of `text` that carries most of `stems` is negated (None: no clause carries any).
    A parenthetical ("Linux (WSL) is not …") does not cut the clause."""
    text = _PARENTHETICAL.sub("", text)
    toks = tokenize(text)
    best: tuple[int, bool] | None = None
    for clause in split_clauses(text, toks):
        carried = sum(1 for t in clause.toks if t.stems & stems)
        if carried == 0:
            continue
        negations = sum(
            1
            for k, t in enumerate(clause.toks)
            if is_negator(t, clause.toks[k + 1] if k + 1 < len(clause.toks) else None)
            or t.low in NEGATIVE_VERBS
        )
        if best is None or carried > best[0]:
            best = (carried, negations % 2 == 1)
    return None if best is None else best[1]


def verdict(
    focus: str, pool: list[Sentence], scorer_terms: dict[str, float], keys: set[str], names: set[str]
) -> PolarVerdict | None:
    """Yes/No from the sentence that best states the proposition, or None. The predicate (the
    proposition's terms that are not names) locates the clause whose negation decides."""
    main = proposition(focus)
    prop = [t for t in dict.fromkeys(terms(main)) if t in scorer_terms]
    if not prop:
        return None
    total = sum(scorer_terms[t] for t in prop)
    predicate = {t for t in prop if t not in names} or set(prop)
    question_negated = _negated(main, predicate) or False
    best: PolarVerdict | None = None
    for s in pool:
        if s.code or s.text.rstrip().endswith("?"):
            continue
        own = set(s.terms) | s.carried
        context = own | s.under | unit_context(s)
        if not keys <= context:
            continue
        stated = sum(scorer_terms[t] for t in prop if t in context) / total
        said = sum(scorer_terms[t] for t in prop if t in own) / total
        if stated < MIN_STATED or said < MIN_OWN:
            continue
        negated = _negated(s.text, predicate)
        if negated is None:
            continue
        answer = "Yes" if negated == question_negated else "No"
        if (
            best is None
            or stated > best.stated
            or (stated == best.stated and len(s.text) < len(best.sentence.text))
        ):
            best = PolarVerdict(answer, s, stated)
    return best


def term_weights(scorer: Scorer) -> dict[str, float]:
    """term -> weight of the scorer's question terms (a multi-word name's parts each carry its weight)."""
    out: dict[str, float] = {}
    for parts, weight, _present in scorer.groups:
        for t in parts:
            out[t] = weight
    return out
