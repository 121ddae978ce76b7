"""Yes/No read from the sentence that states the asked proposition in other words, when neither the words
(polarity.verdict) nor a close paraphrase (polar_meaning.closest_verdict) answer: weak evidence.

The sentence must mean nearly what the question asks (a MiniLM cosine of at least READ_MEANING) and state
most of its weighted words (READ_STATED, with its heading and context) and some of what the question
says of its subject itself (MIN_PREDICATE), its words compared by lemma: an
irregular plural is its singular ("children" states "child"). Its stating clause is the one that carries
the question's key terms, then most of its weight, never the condition itself; the answer is that clause's
polarity against the question's, each counted over the whole clause:

- a negation ("won't", "do *not*") or a negative verb ("discourage … from", "refuse", "lack") turns it; in
  a question, "refuse X that has no Y" is two turns, asking whether Y is required;
- a hedged clause ("may lack") answers "Possibly" / "Possibly not", and only when no plain one answers;
- a clause a condition governs answers with the condition quoted ("No, if the pump overheats"): the
  condition is what the answer holds under, not a reason to skip the sentence;
- a "Should …?" question is answered only by a recommendation or a command (qualifiers.another_proposition).

Two equally close sentences (within POLAR_TIE) of the other polarity: no answer.
"""

from __future__ import annotations

import msgspec
from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .clauses import Clause, Tok, clause_subjects, conditioned, is_negator, split_clauses, tokenize
from .context_terms import unit_context
from .evidence import Sentence
from .lexicon import NEGATIVE_VERBS, POSSIBILITY
from .meaning import Meaning
from .polar_meaning import POLAR_TIE
from .polarity import (
    _HEDGES,
    HEDGED,
    MIN_STATED,
    PolarVerdict,
    proposition,
    proposition_terms,
)
from .propositions import read_question
from .qualifiers import another_proposition

# the cosine a sentence needs to be read for the question's proposition: below closest_verdict's 0.7 bar, so
# the sentence must also state READ_STATED of the question's weighted words (calibrated on dev01-21 and
# real01-10: answering sentences 0.52-0.79 close and 0.6-0.9 stated; the closest sentences to unanswerable
# questions there state less than 0.5)
READ_MEANING = 0.5
READ_STATED = 0.6
MIN_PREDICATE = 0.35  # weighted share of the predicate (the proposition after its subject) the sentence says
MAX_CONDITION = 90  # characters of a condition quoted in the answer

# English nouns whose plural the stemmer keeps apart from the singular (morphology, not any document's words)
_IRREGULAR = {
    "children": "child",
    "men": "man",
    "women": "woman",
    "people": "person",
    "mice": "mouse",
    "feet": "foot",
    "teeth": "tooth",
    "geese": "goose",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "analyses": "analysis",
    "leaves": "leaf",
    "lives": "life",
    "halves": "half",
    "knives": "knife",
}
_LEMMA = {terms(p)[0]: terms(s)[0] for p, s in _IRREGULAR.items() if terms(p) and terms(s)}
# verbs that deny what follows them ("refuse a file", "reject the request"), besides lexicon.NEGATIVE_VERBS
_REFUSALS = word_set(
    "refuse refuses refused refusing reject rejects rejected rejecting deny denies denied denying "
    "disallow disallows disallowed"
)


# emphasis, code and link marks ("do *not*", "`Wants=`", "[text](#target)") are not clause boundaries
_MARKUP = lazy_pattern(r"\]\([^)\s]*\)|[*`\[\]]+")
# a connective standing alone before a clause ("However, if …", "So if …") opens no clause of its own
_CONNECTIVES = [[w] for w in ("so", "however", "then", "thus", "therefore", "also", "but", "and")]


def lemmas(stems: set[str] | frozenset[str]) -> set[str]:
    """Stems with an irregular plural's stem replaced by its singular's."""
    return {_LEMMA.get(t, t) for t in stems}


class _Reading(msgspec.Struct):
    negated: bool
    hedged: bool
    condition: str  # the condition governing the stating clause, as written; "" when none
    imperative: bool
    subject: set[str] = msgspec.field(default_factory=set)  # lemmas of the clause's own subject
    rest: set[str] = msgspec.field(default_factory=set)  # lemmas of the clause after its subject
    before: set[str] = msgspec.field(
        default_factory=set
    )  # lemmas of the sentence up to the stating clause's end


def _turns(toks: list[Tok]) -> int:
    return sum(
        1
        for k, t in enumerate(toks)
        if is_negator(t, toks[k + 1] if k + 1 < len(toks) else None)
        or t.low in NEGATIVE_VERBS
        or t.low in _REFUSALS
    )


def _stems(toks: list[Tok]) -> set[str]:
    out: set[str] = set()
    for t in toks:
        out |= t.stems
    return lemmas(out)


def read_clause(text: str, weights: dict[str, float], keys: set[str]) -> _Reading | None:
    """The clause of `text` stating the proposition (`weights`: its lemmatised terms): the one with the
    most key terms, then the most weight, never a condition; its polarity, hedge and governing condition."""
    text = _MARKUP.sub("", text.replace("\u2019", "'"))
    toks = tokenize(text)
    clauses = [c for c in split_clauses(text, toks) if [t.low for t in c.toks] not in _CONNECTIVES]
    best: tuple[int, float, int] | None = None
    for n, clause in enumerate(clauses):
        if clause.conditional:
            continue
        said = _stems(clause.toks)
        weight = sum(w for t, w in weights.items() if t in said)
        if weight > 0 and (best is None or (len(keys & said), weight) > best[:2]):
            best = (len(keys & said), weight, n)
    if best is None:
        return None
    n = best[2]
    ct = clauses[n].toks
    subjects = clause_subjects(text, toks, clauses, None, frozenset())
    governed = conditioned(clauses, n) or (n > 0 and clauses[n - 1].conditional)  # "if A, B"
    condition = _condition(text, clauses, n) if governed else ""
    sub = subjects[n]
    own = set() if sub.imperative else _stems(sub.toks)
    return _Reading(
        _turns(ct) % 2 == 1,
        any(t.low in _HEDGES for t in ct),
        condition,
        sub.imperative,
        own,
        _stems([t for t in ct if t not in sub.toks]),
        _stems([t for c in clauses[: n + 1] for t in c.toks]),
    )


def _swapped(text: str, reading: _Reading, subject: set[str], asked: set[str]) -> bool:
    """The stating clause has the question's object for subject and its subject after the verb ("The
    worker depends on the broker" for "Does the broker depend on the worker?"); an agent ("traced by
    Valgrind") is the question's subject in the passive, not a swap."""
    own = reading.subject
    if not subject or not own & (asked - subject) or own & subject or not subject <= reading.rest:
        return False
    toks = tokenize(text)
    return not any(
        t.low == "by" and any(lemmas(x.stems) & subject for x in toks[k + 1 : k + 4])
        for k, t in enumerate(toks)
    )


def _whole(text: str) -> _Reading:
    """The whole sentence read as one clause (no clause carries the proposition's words)."""
    toks = tokenize(_MARKUP.sub("", text.replace("\u2019", "'")))
    return _Reading(_turns(toks) % 2 == 1, any(t.low in _HEDGES for t in toks), "", False)


def _condition(text: str, clauses: list[Clause], n: int) -> str:
    """The conditional clause governing clause `n` (the one after it, else the sentence's opening one)."""
    for m in (n - 1, n + 1, 0):
        if 0 <= m < len(clauses) and clauses[m].conditional and clauses[m].toks:
            toks = clauses[m].toks
            said = text[toks[0].start : toks[-1].end].strip(" ,;:")
            said = said[:1].lower() + said[1:]
            return said if len(said) <= MAX_CONDITION else said[:MAX_CONDITION].rsplit(" ", 1)[0] + " …"
    return "under a condition"


def read_verdict(
    focus: str, pool: list[Sentence], meaning: Meaning, keys: set[str], weights: dict[str, float]
) -> PolarVerdict | None:
    """Yes/No from the sentence that states the proposition in other words (see the module docstring)."""
    main = proposition(focus)
    prop = proposition_terms(main, weights)
    lemma_weights: dict[str, float] = {}
    for t in prop:
        lemma_weights[_LEMMA.get(t, t)] = max(weights[t], lemma_weights.get(_LEMMA.get(t, t), 0.0))
    total = sum(lemma_weights.values())
    if total <= 0:
        return None
    keys = lemmas(keys)
    readings = read_question(main + "?") or []
    subject = lemmas(readings[-1].subject_stems) if readings else set()
    # what is said of the subject: the words after the widest reading of it ("a permanent ban" of "Can a
    # permanent ban be appealed?", not "permanent")
    widest = lemmas(readings[0].subject_stems) if readings else set()
    predicate = {t: w for t, w in lemma_weights.items() if t not in widest} or lemma_weights
    main_toks = tokenize(main)
    asked_negated = _turns(main_toks) % 2 == 1
    asked_words = {t.low for t in main_toks}
    found: list[tuple[int, float, Sentence, str, bool, bool]] = []
    for s in pool:
        c = meaning.of(s)
        if c is None or c < READ_MEANING or s.code or s.text.rstrip().endswith("?"):
            continue
        context = lemmas(set(s.terms) | s.carried | s.under | unit_context(s))
        named = lemmas(set(s.terms) | s.carried | s.under)
        if not keys <= context or any(not lemmas(r.subject_stems) & named for r in readings):
            continue  # about another subject: neither it nor its heading names each reading of the asked one
        stated = sum(w for t, w in lemma_weights.items() if t in context) / total
        if stated < READ_STATED:
            continue
        own = lemmas(set(s.terms) | s.carried)
        said = sum(w for t, w in predicate.items() if t in own) / sum(predicate.values())
        reading = read_clause(s.text, lemma_weights, keys) or _whole(s.text)
        if _swapped(s.text, reading, subject, set(lemma_weights)):
            continue  # "B depends on A" for "Does A depend on B?"
        if reading.imperative and subject and not subject & (reading.before | lemmas(s.under)):
            continue  # "Never clean the kettle with X, because X clouds the glass" says nothing of the glass
        if another_proposition(main_toks, tokenize(s.text), reading.imperative):
            continue
        answer = "No" if reading.negated != asked_negated else "Yes"
        hedged = reading.hedged and not asked_words & _HEDGES
        if hedged and not asked_words & POSSIBILITY:
            answer = HEDGED[answer]
        if reading.condition:
            answer = f"{answer}, {reading.condition}"
        # a sentence that says nothing of the predicate ("A permanent ban from …" for "… be appealed?") is
        # not read, but one about as close of the other polarity still leaves no answer
        whole = sum(w for t, w in lemma_weights.items() if t in own) / total >= MIN_STATED
        found.append((1 if hedged else 0, c, s, answer, said >= MIN_PREDICATE, whole))
    readable = [f for f in found if f[4]]
    if not readable:
        return None
    readable.sort(key=lambda f: (f[0], -f[1], len(f[2].text)))
    _, cosine, best, answer, _, _ = readable[0]
    word = answer.split(",")[0]
    if any(
        r is not best and a.split(",")[0] != word and (c >= cosine - POLAR_TIE or whole)
        for _, c, r, a, _, whole in found
    ):
        return None  # one about as close, or one stating the proposition in its own words, says otherwise
    return PolarVerdict(answer, best, cosine)
