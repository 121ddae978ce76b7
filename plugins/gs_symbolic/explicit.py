"""Constrained answers (Yes/No, one word) only from statements that say the answer explicitly.

Yes/No: the question is read as a proposition (subject + predicate, propositions.py) and one evidence
clause, or one proved conclusion, must state it; the clause's negation gives No. Conflicting statements,
hedged statements, unstated conditions or hypotheticals, or no such statement give no answer at all
(never a guess).

Which/who/what: the question's predicate must occur in order in a sentence, and the words of that
sentence's remaining slot (the clause's subject, a pronoun resolved to the subject before it, or the
object after the predicate) must name one entity.
"""

from __future__ import annotations

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, WORD_PATTERN, stems, terms

from .clauses import Subject, is_negator, sentence_subject, tokenize
from .evidence import Sentence, is_subsequence
from .propositions import Claim, read_question
from .question import Question, name_runs
from .statements import Parsed, parse, polarity

_PRONOUNS = frozenset(
    ["he", "she", "it", "they", "this", "that", "these", "those", "him", "her", "them", "we", "you", "i", "his", "its", "their"]
)  # fmt: skip
_AUX = frozenset(
    ["do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "can", "will", "shall"]
)
_DETERMINERS = frozenset(["the", "a", "an", "single", "one", "only"])
_RELATIVE = frozenset(["that", "who", "whose", "which", "whom"])
_CLAUSE_BREAK = lazy_pattern(r"[,;:()—–]|\s-\s")
_LEVEL_ATOMIC = "atomic"


class Verdict(msgspec.Struct):
    answer: str
    sentences: list[Sentence]  # the statements that give it
    derived: bool = False


def parsed_pool(pool: list[Sentence]) -> list[Parsed]:
    """Every sentence tokenised once, with the subject a leading pronoun refers to.

    Inside an atomic unit the antecedent is the previous sentence's subject; the first sentence of a unit
    takes the last subject of the unit just before it in the same chunk (when that unit is in the pool),
    else the unit's own Subject field or a name-like Topic the sentence does not itself mention. Summary
    units (composites, aggregates) hold non-adjacent sentences: no antecedent there.
    """
    by_unit: dict[str, list[int]] = {}
    for n, s in enumerate(pool):
        by_unit.setdefault(s.unit.id, []).append(n)
    position = {(u.chunkId, u.unitIndex): uid for uid, idx in by_unit.items() for u in [pool[idx[0]].unit]}
    done: dict[int, Parsed] = {}
    last_subject: dict[str, Subject | None] = {}

    def unit_last_subject(uid: str, depth: int) -> Subject | None:
        if uid not in last_subject:
            last_subject[uid] = None
            subject = None
            for n in by_unit[uid]:
                p = parse_one(n, depth + 1)
                subject = sentence_subject(p.text, p.antecedent) or subject
            last_subject[uid] = subject
        return last_subject[uid]

    def first_antecedent(s: Sentence, depth: int) -> Subject | None:
        unit = s.unit
        if unit.kuType not in (None, _LEVEL_ATOMIC):
            return None
        if unit.unitIndex is not None and depth < 8:
            prev = position.get((unit.chunkId, unit.unitIndex - 1))
            if prev is not None:
                found = unit_last_subject(prev, depth)
                if found is not None:
                    return found
        for name in (unit.subject, unit.topic):
            if name and any(c.isupper() or c.isdigit() for c in name) and name.lower() not in s.text.lower():
                toks = tokenize(name)
                return Subject(toks, text=name) if toks else None
        return None

    def parse_one(n: int, depth: int = 0) -> Parsed:
        if n in done:
            return done[n]
        s = pool[n]
        siblings = by_unit[s.unit.id]
        k = siblings.index(n)
        if k == 0:
            antecedent = first_antecedent(s, depth)
        elif s.unit.kuType in (None, _LEVEL_ATOMIC):
            before = parse_one(siblings[k - 1], depth)
            antecedent = sentence_subject(before.text, before.antecedent) or before.antecedent
        else:
            antecedent = None
        done[n] = parse(s.text, antecedent)
        return done[n]

    return [parse_one(n) for n in range(len(pool))]


def yes_no(q: Question, pool: list[Sentence], conclusions: list[Sentence]) -> Verdict | None:
    """Yes or No when a statement asserts or denies the question's proposition; else None."""
    if not q.polar:
        return None
    claims = read_question(q.focus)
    if not claims:
        return None
    claims = _with_context_subject(claims, q)
    parsed = parsed_pool(pool)
    proved = [parse(s.text, None) for s in conclusions]
    for claim in claims:
        found: dict[str, list[Sentence]] = {"Yes": [], "No": []}
        derived = False
        for s, p in zip(pool, parsed, strict=True):
            word = polarity(claim, p)
            if word is not None:
                found[word].append(s)
        if not found["Yes"] and not found["No"] and claim.condition is None:
            for s, p in zip(conclusions, proved, strict=True):
                if polarity(claim, p) == "Yes":
                    found["Yes"].append(s)
                    derived = True
        if found["Yes"] and found["No"]:
            return None  # the evidence contradicts itself: do not pick a side
        # "Isn't X Y?" is answered like "Is X Y?": the answer follows the statement's polarity.
        for word in ("Yes", "No"):
            if found[word]:
                return Verdict(word, found[word], derived)
    return None


def _with_context_subject(claims: list[Claim], q: Question) -> list[Claim]:
    """'Does it …?': the intent's Context names what "it" is (the seed detector resolved it)."""
    out: list[Claim] = []
    for c in claims:
        if not c.pronoun:
            out.append(c)
            continue
        for run in name_runs(q.context.replace(";", ",")):
            toks = tokenize(run)
            if toks:
                out.append(
                    Claim(toks, predicate=c.predicate, modal=c.modal, condition=c.condition,
                          condition_negated=c.condition_negated, without=c.without)
                )  # fmt: skip
                break
    return out


# --------------------------------------------------------------------------- which / who / what


def proposition(text: str) -> list[str]:
    """A statement's content stems in order: every content word counts (no framing words dropped)."""
    return [t for t in terms(text) if "-" not in t]


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in WORD_PATTERN.finditer(text)]


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
    elif head in ("which", "what", "whose") and i < len(toks) and toks[i] == "of":
        i += 1  # "which of the two routers has …": the answer is the subject, unless "… does X use"
        while i < len(toks) and toks[i] not in _AUX and i < 7:
            i += 1
        if i < len(toks) and toks[i] in ("do", "does", "did"):
            return _object_predicate(toks[i:])
        return _subject_predicate(toks[i:])
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
    """The one entity a sentence supplies for the question's predicate; None when absent or ambiguous.

    The subject slot reads the clause's subject, a pronoun resolved to the subject before it ("…, so it
    requires X" names what "it" is); a clause that denies the predicate ("X does not …") supplies nothing.
    """
    if q.hypothetical or not q.wh:
        return None
    parsed_q = _predicate(q.focus)
    if parsed_q is None:
        return None
    pred, slot = parsed_q
    answers: dict[str, tuple[str, list[Sentence]]] = {}
    parsed = parsed_pool(pool) if slot == "subject" else []
    for n, s in enumerate(pool):
        toks, aligned = _aligned(s.text)
        hit = is_subsequence(pred, [st for st, _ in aligned])
        if hit is None:
            continue
        first_tok, last_tok = aligned[hit[0]][1], aligned[hit[1]][1]
        if slot == "subject":
            phrase = _subject_answer(parsed[n], toks[first_tok][1], frozenset(pred))
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
            phrase = None if _denied_before(s.text, toks[first_tok][1]) else _entity_phrase(s.text, span)
        if not phrase or set(terms(phrase)) & set(pred):
            continue
        key = phrase.lower()
        answers.setdefault(key, (phrase, []))[1].append(s)
    if len(answers) != 1:
        return None
    phrase, sents = next(iter(answers.values()))
    return Verdict(phrase, sents)


def _subject_predicate(rest: list[str]) -> tuple[list[str], str] | None:
    pred = proposition(" ".join(rest))
    return (pred, "subject") if pred else None


def _object_predicate(rest: list[str]) -> tuple[list[str], str] | None:
    pred = proposition(" ".join(rest))
    return (pred, "object") if pred else None


def _subject_answer(p: Parsed, offset: int, pred: frozenset[str]) -> str | None:
    """The entity named by the subject of the clause in which the predicate starts (at `offset`)."""
    index = next((i for i, c in enumerate(p.clauses) if c.toks[0].start <= offset <= c.toks[-1].end), None)
    if index is None:
        return None
    clause = p.clauses[index]
    sub = p.subjects(pred)[index]
    if sub.imperative or not sub.toks:
        return None
    at = next((k for k, t in enumerate(clause.toks) if t.start >= offset), len(clause.toks))
    if at < sub.end:
        return None  # the predicate sits inside the subject phrase: not this clause's statement
    between = clause.toks[sub.end : at]
    if any(is_negator(t, between[k + 1] if k + 1 < len(between) else None) for k, t in enumerate(between)):
        return None
    text = sub.text
    return _entity_phrase(text, _tokens(text))


def _denied_before(text: str, offset: int) -> bool:
    """A negation between the clause start and the predicate ("… does not use X")."""
    start = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, offset):
        start = m.end()
    toks = tokenize(text[start:offset])
    return any(is_negator(t, toks[k + 1] if k + 1 < len(toks) else None) for k, t in enumerate(toks))
