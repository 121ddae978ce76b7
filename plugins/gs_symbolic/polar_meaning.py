"""Yes/No read from the sentence closest in meaning to the question (MiniLM cosines, meaning.py), when no
sentence states the proposition in its words (polarity.verdict): weak evidence, a paraphrase's polarity."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .clauses import tokenize
from .context_terms import unit_context
from .evidence import Sentence
from .lexicon import POSSIBILITY
from .meaning import Meaning
from .polarity import (
    _HEDGES,
    HEDGED,
    MIN_STATED,
    PolarVerdict,
    _about_subject,
    _antecedent,
    _contrasts,
    _negated,
    _stating_clause,
    proposition,
    proposition_terms,
)
from .propositions import read_question
from .qualifiers import another_proposition

# the cosine a sentence needs to stand for the question's proposition (calibrated on real01-10)
POLAR_MEANING = 0.7
# sentences whose cosines differ by less than this are equally close: of two such of either polarity, neither
# is read (MiniLM's cosines of paraphrases of one statement spread over a few hundredths)
POLAR_TIE = 0.05


def closest_verdict(
    focus: str, pool: list[Sentence], meaning: Meaning, keys: set[str], weights: dict[str, float]
) -> PolarVerdict | None:
    """Yes/No read from the sentence closest in meaning to the question, when no sentence states the
    proposition in its words (`verdict`). The sentence must carry the question's key terms (with its
    context) and be at least POLAR_MEANING close; one that states the proposition's words about another
    subject ("B depends on A" for "Does A depend on B?") is not read. Its polarity against the question's
    is the answer, said as weakly as the sentence says it ("may" → Possibly); one true only under a condition
    the question does not ask about is not read; another sentence of the other polarity within POLAR_TIE of
    it, or one stating the proposition in its own words: no answer. The caller reports it as weak evidence: a
    paraphrase's polarity is read, not proved."""
    main = proposition(focus)
    prop = proposition_terms(main, weights)
    total = sum(weights[t] for t in prop)
    readings = read_question(main + "?") or []
    subject = readings[-1].subject_stems if readings else set()
    predicate = set(prop)
    words = {t.low for t in tokenize(main)}
    possibility = bool(words & POSSIBILITY)
    asked_negated = clause_negated(main, main)
    main_toks = tokenize(main)
    found: list[tuple[float, Sentence, str]] = []
    for s in pool:
        c = meaning.of(s)
        if c is None or c < POLAR_MEANING or s.code or s.text.rstrip().endswith("?"):
            continue
        context = set(s.terms) | s.carried | s.under | unit_context(s)
        if not keys <= context:
            continue
        stated = sum(weights[t] for t in prop if t in context) / total if total > 0 else 0.0
        clause = _stating_clause(_REPORTED.sub("", s.text), predicate, _antecedent(s), subject)
        if clause is not None and clause.conditional and not possibility and not clause.necessary:
            continue  # true only under a condition the question does not ask about
        if another_proposition(main_toks, tokenize(s.text), clause is not None and clause.subject == {"you"}):
            continue  # "less than" for "more than"; no recommendation for "Should …?"
        if stated >= MIN_STATED and readings and clause is not None:
            around = set(s.under) | set(unit_context(s))
            if not any(_about_subject(r, clause, around) for r in readings):
                continue  # the question's words, said of another subject
        negated = clause_negated(s.text, main) != asked_negated
        if _contrasts(main, s.text):
            negated = not negated
        answer = "No" if negated else "Yes"
        if {t.low for t in tokenize(s.text)} & (_HEDGES - POSSIBILITY) and not words & _HEDGES:
            answer = HEDGED[answer]
        own = sum(weights[t] for t in prop if t in set(s.terms) | s.carried) / total if total > 0 else 0.0
        found.append((c, s, answer, own))
    if not found:
        return None
    found.sort(key=lambda f: (-f[0], len(f[1].text)))
    cosine, best, answer, _ = found[0]
    if any(a != answer and (c >= cosine - POLAR_TIE or own >= MIN_STATED) for c, _, a, own in found[1:]):
        return None  # one about as close, or stating the proposition in its own words, says otherwise
    return PolarVerdict(answer, best, cosine)


# "Note that X …": the reader is told to mind what X states; X is the statement
_REPORTED = lazy_pattern(r"^\s*(?:note|notice|remember|be aware|keep in mind)\s*(?:that\b|:)\s*", re.I)
_QUOTED = lazy_pattern(r"\"[^\"]*\"|`[^`]*`|\u201c[^\u201d]*\u201d")


def clause_negated(text: str, main: str) -> bool:
    """Whether `text` negates: the clause carrying most of the proposition's words when one does, else the
    whole text; a quoted word ("the \"no\" keyword") is mentioned, not said."""
    plain = _QUOTED.sub(" X ", _REPORTED.sub("", text.replace("\u2019", "'")))
    predicate = set(terms(main))
    clause = _stating_clause(plain, predicate, None) if predicate else None
    return clause.negated if clause is not None else _negated(plain)
