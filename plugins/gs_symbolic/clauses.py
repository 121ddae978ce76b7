"""Sentences as clauses with subjects: the grammar the explicit-statement checks read.

No parser, no tagger: closed-class words (auxiliaries, determiners, prepositions, connectives) and a few
shape cues find clause boundaries and the noun phrase a clause opens with. A clause whose subject is a
pronoun ("so it requires …", "Its firmware …") takes the subject of the clause or sentence before it;
a clause that opens with a command verb ("Never use …", "Do not …") has the generic "you" as subject.
"""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec
from mrpvm.plugins.sdk.lexicon import IRREGULAR
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, stems

from .lexicon import (
    ADVERBS,
    AUX,
    CLAUSE_OPENERS,
    CONDITIONALS,
    CONJUNCTIVE_ADVERBS,
    CONNECTIVES,
    COORDINATORS,
    DETERMINERS,
    IMPERATIVE_VERBS,
    NEGATORS,
    POSSESSIVES,
    PREPOSITIONS,
    PRONOUNS,
)

_WORD = lazy_pattern(r"[^\W_]+(?:[-'’.][^\W_]+)*", re.UNICODE)
_BREAK = lazy_pattern(r"[,;:()\[\]—–]|\s-\s")
_MAX_SUBJECT = 8
# A clause opened by these and lacking a subject of its own shares the previous clause's subject.
_RELATIVES = frozenset(["which", "who", "whom", "whose", "that"])
_SHARES_SUBJECT = COORDINATORS | {"so", "then"} | _RELATIVES


class Tok(msgspec.Struct, frozen=True):  # frozen: tokenize hands out the same tokens for a text again
    text: str
    low: str
    stems: frozenset[str]  # content stems: the word's, plus its parts when hyphenated; empty for stopwords
    start: int
    end: int
    initial: bool = False  # the first word of its sentence (capitalised for that reason alone)

    @property
    def code(self) -> bool:
        """A model or code name mixing letters and digits ("X9", "E4", "K2")."""
        return any(c.isdigit() for c in self.text) and any(c.isalpha() for c in self.text)

    @property
    def name(self) -> bool:
        return self.code or (self.text[:1].isupper() and not self.initial)

    @property
    def number(self) -> bool:
        return self.text[:1].isdigit() and not self.code


def _base(word: str) -> str:
    if word.endswith("'s"):
        word = word[:-2]
    return IRREGULAR.get(word, word)


# texts whose tokens a warm worker keeps: an evidence sentence is read by several checks, in many windows and
# turns (~80 % of the calls on real questions repeat a text)
MEMO_TEXTS = 8192


def tokenize(text: str) -> list[Tok]:
    """Word tokens with their content stems; irregular past forms are stemmed as their base verb."""
    return list(_tokens(text))


@lru_cache(maxsize=MEMO_TEXTS)
def _tokens(text: str) -> tuple[Tok, ...]:
    found = [(m.group(0).rstrip("."), m.start()) for m in _WORD.finditer(text)]
    lows = [w.lower().replace("’", "'") for w, _ in found]
    words: list[list[str]] = []
    flat: list[str] = []
    for low in lows:
        base = _base(low)
        parts = [base.replace("'", "")] if base not in STOPWORDS and len(base) > 1 else []
        if "-" in base:
            parts += [p for p in base.split("-") if len(p) > 1 and p not in STOPWORDS]
        parts = [p.replace(".", "") for p in parts]
        words.append(parts)
        flat.extend(parts)
    stemmed = iter(stems(flat))
    out: list[Tok] = []
    for n, ((word, start), low, parts) in enumerate(zip(found, lows, words, strict=True)):
        st = frozenset(next(stemmed) for _ in parts)
        out.append(Tok(word, low, st, start, start + len(word), initial=n == 0))
    return tuple(out)


def content_stems(toks: list[Tok]) -> set[str]:
    acc: set[str] = set()
    for t in toks:
        acc |= t.stems
    return acc


def is_negator(tok: Tok, nxt: Tok | None) -> bool:
    if tok.low == "not" and nxt is not None and nxt.low == "only":
        return False  # "not only X but also Y" asserts X
    return tok.low in NEGATORS or tok.low.endswith("n't")


# --------------------------------------------------------------------------- clauses


class Clause(msgspec.Struct):
    toks: list[Tok]
    lead: str = ""  # the connective that opens it, lower-case ("so", "because", "if", "and")

    @property
    def conditional(self) -> bool:
        return self.lead in CONDITIONALS


def _lead(toks: list[Tok]) -> str:
    lows = [t.low for t in toks[:3]]
    if toks and toks[0].initial and lows[0] in ("had", "were", "should") and len(toks) > 2:
        return "if"  # "Had the letter been lost, …": an inverted condition opening the sentence
    if lows[:2] == ["in", "case"] or lows[:3] == ["as", "long", "as"] or lows[:2] == ["only", "if"]:
        return "if"
    if lows[:2] == ["even", "if"]:
        return "even"
    return lows[0] if lows and lows[0] in CONNECTIVES else ""


def conditioned(clauses: list[Clause], n: int) -> bool:
    """Does a condition govern clause `n`? A condition opening the sentence ("If A, B and C") governs every
    clause after it; one that follows ("B if A") only the clause right before it, so in "X, it is
    sufficient if A" the condition is on "it is sufficient", not on X."""
    if clauses[n].conditional:
        return True
    if clauses[0].conditional and n > 0:
        return True
    return n + 1 < len(clauses) and clauses[n + 1].conditional


def split_clauses(text: str, toks: list[Tok]) -> list[Clause]:
    """Clauses at punctuation and at subordinating or contrasting words ("because", "if", "but")."""
    groups: list[list[Tok]] = []
    prev_end = 0
    for tok in toks:
        gap = text[prev_end : tok.start]
        if not groups or _BREAK.search(gap) or (tok.low in CLAUSE_OPENERS and groups[-1]):
            groups.append([])
        groups[-1].append(tok)
        prev_end = tok.end
    return [Clause(g, _lead(g)) for g in _rejoined(groups) if g]


def _rejoined(groups: list[list[Tok]]) -> list[list[Tok]]:
    """A conjunctive adverb set off by commas before a verb phrase ("The sync port, however, must be …") is a
    parenthetical: the verb phrase continues the clause before it instead of starting a subjectless one."""
    out: list[list[Tok]] = []
    k = 0
    while k < len(groups):
        group = groups[k]
        after = groups[k + 1] if k + 1 < len(groups) else []
        if out and len(group) == 1 and group[0].low in CONJUNCTIVE_ADVERBS and after and after[0].low in AUX:
            out[-1] = out[-1] + group + after
            k += 2
            continue
        out.append(group)
        k += 1
    return out


# --------------------------------------------------------------------------- subjects


class Subject(msgspec.Struct):
    toks: list[Tok] = msgspec.field(default_factory=list)  # resolved: a pronoun replaced by its antecedent
    imperative: bool = False  # a command: the subject is the generic "you"
    start: int = 0  # token span of the subject inside its clause
    end: int = 0
    text: str = ""  # the subject as written in its source (after resolution)
    resolved: bool = False  # a pronoun was replaced
    owner: int = 0  # with a resolved possessive ("Its firmware"), toks[:owner] are the owner's words

    @property
    def empty(self) -> bool:
        return not self.toks and not self.imperative


def _is_verbish(toks: list[Tok], k: int, first: int) -> bool:
    """An -s/-ed word followed by what usually follows a verb ("holds 1.8", "costs 420", "requires a")."""
    tok = toks[k]
    if k == first or tok.name or not tok.low.isalpha():
        return False
    if not (tok.low.endswith("ed") or (tok.low.endswith("s") and not tok.low.endswith(("ss", "us", "is")))):
        return False
    if toks[k - 1].low in DETERMINERS:
        return False
    if k + 1 >= len(toks):
        return True
    nxt = toks[k + 1]
    return (
        nxt.low in DETERMINERS
        or nxt.low in PREPOSITIONS
        or nxt.low in ADVERBS
        or nxt.low in NEGATORS
        or nxt.number
        or nxt.name
    )


def subject_span(toks: list[Tok], stop_stems: frozenset[str] = frozenset()) -> tuple[int, int, bool]:
    """(start, end, imperative): the noun phrase a clause opens with, as token indexes.

    The phrase ends at an auxiliary, adverb, negation, preposition (other than "of"), a new determiner, a
    number, a relative word, an -s/-ed word that looks like the verb, or a word whose stem is in
    `stop_stems` (the predicate being looked for, whose verb then ends the subject).
    """
    n = len(toks)
    i = 0
    while i < n and toks[i].low in CONNECTIVES and toks[i].low not in DETERMINERS:
        i += 1
    skipped = False
    while i < n and (toks[i].low in ADVERBS or toks[i].low in ("do", "don't", "not", "never")):
        if toks[i].low == "do" and not (i + 1 < n and toks[i + 1].low in ("not", "never")):
            break
        skipped = True
        i += 1
    if i < n and _imperative(toks, i, skipped, stop_stems):
        return i, i, True
    k = i
    after_of = False
    while k < n and k - i < _MAX_SUBJECT:
        tok = toks[k]
        low = tok.low
        if k > i:
            if low == "of":
                after_of = True
                k += 1
                continue
            if (
                low in AUX
                or low in NEGATORS
                or low.endswith("n't")
                or low in ADVERBS
                or low in PREPOSITIONS
                or low in CONNECTIVES
                or low in PRONOUNS - POSSESSIVES
                or (low in DETERMINERS and not after_of)
                or tok.number
                or (tok.stems & stop_stems and not after_of)
                or _is_verbish(toks, k, i)
            ):
                break
            after_of = after_of and low in DETERMINERS
        elif low in AUX or low in PREPOSITIONS or tok.number or tok.stems & stop_stems:
            break
        k += 1
    return i, k, False


def _imperative(toks: list[Tok], i: int, after_adverb: bool, verbs: frozenset[str]) -> bool:
    """A command: a known command verb, or the predicate's own verb in its bare form, opening the clause."""
    tok = toks[i]
    bare = tok.low.isalpha() and not tok.low.endswith(("ing", "ed", "s"))
    if tok.low not in IMPERATIVE_VERBS and not (bare and tok.stems & verbs):
        return False
    if not (tok.initial or after_adverb or i == 0 or toks[i - 1].low in CONNECTIVES):
        return False
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    # "Pull requests must include …", "Test files should …": a noun compound the auxiliary follows
    after = toks[i + 2].low if i + 2 < len(toks) else ""
    return nxt not in AUX and nxt != "of" and not (after in AUX and toks[i + 1].low.endswith("s"))


def _resolve(sub: list[Tok], antecedent: Subject | None) -> tuple[list[Tok], bool, int]:
    """(tokens, resolved?, owner length): "it" becomes the antecedent; "its firmware" the antecedent's
    words (the owner) followed by "firmware"."""
    if not sub or antecedent is None or not antecedent.toks:
        return sub, False, 0
    head = sub[0].low
    if head in POSSESSIVES and len(sub) > 1:
        return antecedent.toks + sub[1:], True, len(antecedent.toks)
    if head in PRONOUNS or head in POSSESSIVES:
        return antecedent.toks + sub[1:], True, 0
    return sub, False, 0


def clause_subjects(
    text: str,
    toks: list[Tok],
    clauses: list[Clause],
    antecedent: Subject | None,
    stop_stems: frozenset[str] = frozenset(),
) -> list[Subject]:
    """The resolved subject of every clause: a pronoun takes the previous clause's subject (or, in the
    first clause, the sentence's antecedent); a coordinated clause without one ("… and requires X")
    shares the previous clause's subject, and a clause that resumes after a relative one ("The cache,
    which restarts nightly, keeps …") the subject of the clause before the relative one."""
    out: list[Subject] = []
    previous = antecedent
    main = antecedent  # the subject of the last clause that was not a relative clause
    for n, clause in enumerate(clauses):
        ct = clause.toks
        a, b, imperative = subject_span(ct, stop_stems)
        raw = ct[a:b]
        if imperative:
            sub = Subject([], True, a, b, "")
        elif not raw and clause.lead in _SHARES_SUBJECT and previous is not None:
            sub = Subject(previous.toks, previous.imperative, a, b, previous.text, True)
        elif not raw and n > 0 and not clause.lead and main is not None:
            sub = Subject(main.toks, main.imperative, a, b, main.text, True)
        else:
            resolved, did, owner = _resolve(raw, previous)
            if did and previous is not None:
                rest = text[raw[1].start : raw[-1].end] if len(raw) > 1 else ""
                phrase = (previous.text + ("'s " + rest if rest else "")).strip()
            else:
                phrase = text[raw[0].start : raw[-1].end] if raw else ""
            sub = Subject(resolved, False, a, b, phrase, did, owner)
        out.append(sub)
        if sub.toks and not (sub.toks[0].low in PRONOUNS and not sub.resolved):
            previous = sub
            if clause.lead not in _RELATIVES:
                main = sub
    return out


def sentence_subject(text: str, antecedent: Subject | None = None) -> Subject | None:
    """The subject a following sentence's pronoun refers to: the first clause subject that names something."""
    toks = tokenize(text)
    clauses = split_clauses(text, toks)
    for sub in clause_subjects(text, toks, clauses, antecedent):
        if sub.toks and sub.toks[0].low not in PRONOUNS and any(t.stems for t in sub.toks):
            return sub
    return None
