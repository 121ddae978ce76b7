"""Yes/No from explicit statements: the question's proposition (subject + predicate) found in a clause.

A polar question is read as the statement it asks about: "Does the Southgate X9 require a cloud account?"
→ subject "Southgate X9", predicate stems {requir, cloud, account}. A clause states it when
- its subject (a pronoun resolved to the subject before it; a command's subject is the generic "you")
  names the question's subject: a model code ("X9") or any part of a name, else the head noun, with no
  other name or noun heading the phrase ("Its firmware" is not "the R5"; "the boiler seals" is not
  "the boiler");
- every predicate stem occurs in the clause, in any order, with modifiers in between ("descale the K2
  with vinegar" ↔ "use vinegar to descale the K2"); irregular past forms count as their verb;
- no hedge (may, might, probably …) and no condition ("if …" anywhere in the sentence) qualifies it.
The clause's negation (not, never, no, cannot, neither, lack, without + the predicate's object) decides No;
so do a past-only state and an exception naming the question's term (qualifiers.py).

Hypothetical questions ("If …, would …?", "Were … to …", "Had … been …", "Would X …?") are answered only
from a sentence that states that conditional: a conditional clause holding the question's condition, and
the same modal ("would"/"will", "could"/"can", "might"/"may") in the clause that states the predicate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .clauses import (
    Clause,
    Subject,
    Tok,
    clause_subjects,
    content_stems,
    is_negator,
    split_clauses,
    subject_span,
    tokenize,
)
from .lexicon import (
    ADVERBS,
    AUX,
    CONNECTIVES,
    COORDINATORS,
    DETERMINERS,
    EMPTY_ADVERBS,
    GENERIC_PERSONS,
    HEDGES,
    HYPOTHETICAL_MODALS,
    HYPOTHETICAL_WORDS,
    NEGATIVE_VERBS,
    NEGATORS,
    PREPOSITIONS,
    PRONOUNS,
)
from .qualifiers import asks_past, turns

_IF_FIRST = re.compile(
    r"^\s*(?P<w>if|unless|suppose|supposing|assuming|provided(?:\s+that)?|in\s+case)\s+(?P<c>.+?),\s*(?P<m>.+)$",
    re.I | re.S,
)
_INVERTED = re.compile(r"^\s*(?:had|were|should)\s+(?P<c>.+?),\s*(?P<m>.+)$", re.I | re.S)
_IF_LAST = re.compile(r"\s+(?P<w>if|unless|in\s+case|provided(?:\s+that)?)\s+(?P<c>.+)$", re.I | re.S)
_TRUE_THAT = re.compile(r"^(?:it\s+)?(?:true|correct|right|the\s+case|so)\s+that\s+", re.I)
_MAX_WINDOW = 4  # tokens after "without" within which the predicate's object must follow


@dataclass(slots=True)
class Claim:
    """One reading of a polar question as a statement."""

    subject: list[Tok] = field(default_factory=list)  # the subject phrase (determiners dropped)
    generic: bool = False  # "Can I …", "Should we …": a command or a generic person states it
    existential: bool = False  # "Is there …"
    pronoun: bool = False  # "Does it …": needs the intent's context to know what "it" is
    modifiers: set[str] = field(
        default_factory=set
    )  # stems the sentence must hold ("of …", a leading phrase)
    predicate: set[str] = field(default_factory=set)  # stems the clause must hold
    modal: str | None = None  # would / could / might
    condition: set[str] | None = None  # stems of the question's condition
    condition_negated: bool = False
    without: bool = False  # the predicate itself says "without"
    past: bool = False  # the question asks about the past ("Was it …"): a past-only state answers Yes

    @property
    def subject_stems(self) -> set[str]:
        return content_stems(self.subject) | self.modifiers

    @property
    def common_words(self) -> set[str]:
        """Stems of the subject's lower-case words other than its key: with a long reading of the
        subject ("the X9 require") they must still occur in the statement."""
        lower = [t for t in self.subject if not (t.code or t.text[:1].isupper()) and t.stems]
        return content_stems(lower) - self.keys

    @property
    def keys(self) -> set[str]:
        """Stems one of which the statement's subject must contain."""
        codes = {s for t in self.subject if t.code for s in t.stems}
        if codes:
            return codes
        names = {s for t in self.subject if t.text[:1].isupper() for s in t.stems}
        if names:
            return names
        heads = [t for t in self.subject if t.stems]
        return set(heads[-1].stems) if heads else set()


# --------------------------------------------------------------------------- reading the question


def _negations(toks: list[Tok]) -> int:
    return sum(1 for i, t in enumerate(toks) if is_negator(t, toks[i + 1] if i + 1 < len(toks) else None))


def read_question(focus: str) -> list[Claim] | None:
    """Readings of a polar question, most specific subject first; None when it is not one we can read,
    or when it is hypothetical in a way no statement can state ("instead", "imagine")."""
    text = focus.strip().rstrip("?.! ").strip()
    if not text:
        return None
    if {t.low for t in tokenize(text)} & HYPOTHETICAL_WORDS:
        return None
    condition: str | None = None
    negated = False
    main = text
    m = _IF_FIRST.match(text)
    if m:
        condition, main, negated = m["c"], m["m"], m["w"].lower() == "unless"
    else:
        inv = _INVERTED.match(text)
        if inv and tokenize(inv["m"])[:1] and tokenize(inv["m"])[0].low in AUX:
            condition, main = inv["c"], inv["m"]
        else:
            last = _IF_LAST.search(text)
            if last:
                condition, main, negated = last["c"], text[: last.start()], last["w"].lower() == "unless"
    lead = ""
    toks = tokenize(main)
    start = next((i for i, t in enumerate(toks) if t.low in AUX), None)
    if start is None:
        return None
    if start > 0:  # "During the quakes, would …": the leading phrase must hold in the sentence too
        gap = main[toks[start - 1].end : toks[start].start]
        if "," not in gap:
            return None
        lead = main[: toks[start].start]
    claims = _readings(main[toks[start].start :])
    if not claims:
        return None
    cond_stems = None
    if condition is not None:
        ctoks = tokenize(condition)
        cond_stems = content_stems(ctoks)
        negated ^= _negations(ctoks) % 2 == 1
        if not cond_stems:
            return None
    lead_stems = content_stems(tokenize(lead))
    past = asks_past(toks)
    for c in claims:
        c.past = past
        c.modifiers |= lead_stems
        c.condition = cond_stems
        c.condition_negated = negated
    return claims


def _readings(main: str) -> list[Claim]:
    """`main` starts with the auxiliary: "does the Southgate X9 require a cloud account"."""
    toks = tokenize(main)
    aux = toks[0].low
    modal = aux if aux in HYPOTHETICAL_MODALS else None
    rest = [t for t in toks[1:] if t.low not in ("not", "n't")]
    text_rest = main[rest[0].start :] if rest else ""
    tm = _TRUE_THAT.match(text_rest)
    if tm:  # "Is it true that the X9 requires …" reads as "the X9 requires …"
        rest = tokenize(text_rest[tm.end() :])
    while rest and rest[0].low in DETERMINERS:
        rest = rest[1:]
    if not rest:
        return []
    first = rest[0].low
    if first == "there":
        pred = _predicate(rest[1:])
        return [Claim(existential=True, predicate=pred[0], without=pred[1], modal=modal)] if pred[0] else []
    if first in GENERIC_PERSONS and first not in (
        "user",
        "users",
        "customer",
        "customers",
        "owner",
        "owners",
    ):
        pred = _predicate(rest[1:])
        return [Claim(generic=True, predicate=pred[0], without=pred[1], modal=modal)] if pred[0] else []
    if first in PRONOUNS:
        pred = _predicate(rest[1:])
        return [Claim(pronoun=True, predicate=pred[0], without=pred[1], modal=modal)] if pred[0] else []
    run = _subject_run(rest)
    lengths = list(range(len(run), 0, -1))
    lead_name = 0
    while lead_name < len(run) and (run[lead_name].text[:1].isupper() or run[lead_name].code):
        lead_name += 1
    if 0 < lead_name < len(run):  # a name ends the subject first: "the Southgate X9 | require …"
        lengths.remove(lead_name)
        lengths.insert(0, lead_name)
    claims: list[Claim] = []
    for n in lengths:
        subject = run[:n]
        if not any(t.stems for t in subject):
            continue
        if n == len(run):
            splits = _of_phrases(rest, n) or [(set(), rest[n:])]
        else:
            splits = [(set(), run[n:] + rest[len(run) :])]
        for mods, tail in splits:
            pred, without = _predicate(tail)
            if pred:
                claims.append(
                    Claim(subject, modifiers=set(mods), predicate=pred, modal=modal, without=without)
                )
    return claims


def _subject_run(toks: list[Tok]) -> list[Tok]:
    run: list[Tok] = []
    for t in toks:
        if run and (
            t.low in AUX
            or t.low in PREPOSITIONS
            or t.low in DETERMINERS
            or t.low in ADVERBS
            or t.low in NEGATORS
            or t.low in CONNECTIVES
            or t.number
        ):
            break
        run.append(t)
        if len(run) == 6:
            break
    return run


def _of_phrases(toks: list[Tok], end: int) -> list[tuple[set[str], list[Tok]]]:
    """Readings of '… of <noun phrase>' right after the subject: (stems qualifying the subject, the rest).
    A name ends the phrase ("of the T3 | hot"); a common noun phrase may end after any of its words."""
    if end >= len(toks) or toks[end].low != "of":
        return []
    k = end + 1
    while k < len(toks) and toks[k].low in DETERMINERS:
        k += 1
    inner = _subject_run(toks[k:])
    names = 0
    while names < len(inner) and (inner[names].text[:1].isupper() or inner[names].code):
        names += 1
    sizes = [names] if names else list(range(len(inner), 0, -1))
    return [(content_stems(inner[:n]), toks[k + n :]) for n in sizes]


def _predicate(toks: list[Tok]) -> tuple[set[str], bool]:
    kept = [t for t in toks if t.low not in EMPTY_ADVERBS]
    return content_stems(kept) - {"without"}, any(t.low == "without" for t in kept)


# --------------------------------------------------------------------------- reading the evidence


@dataclass(slots=True)
class Parsed:
    """One evidence sentence, tokenised and split once."""

    text: str
    toks: list[Tok]
    clauses: list[Clause]
    antecedent: Subject | None

    def subjects(self, stop: frozenset[str]) -> list[Subject]:
        return clause_subjects(self.text, self.toks, self.clauses, self.antecedent, stop)

    @property
    def conditional(self) -> bool:
        return any(c.conditional for c in self.clauses)


def parse(text: str, antecedent: Subject | None) -> Parsed:
    toks = tokenize(text)
    return Parsed(text, toks, split_clauses(text, toks), antecedent)


def _extended(clauses: list[Clause], i: int) -> list[Tok]:
    """A clause plus the list items that continue it (", and Y", ", Z")."""
    out = list(clauses[i].toks)
    for c in clauses[i + 1 :]:
        if c.lead in ("and", "or", "nor", "plus") or (not c.lead and len(c.toks) <= 3):
            out.extend(c.toks)
        else:
            break
    return out


def _is_name(tok: Tok) -> bool:
    return tok.code or (tok.text[:1].isupper() and tok.low not in DETERMINERS and tok.low not in PRONOUNS)


def _subject_matches(claim: Claim, sub: Subject) -> bool:
    """Does the clause's (resolved) subject name the claim's subject?

    A model code in the question must be in the subject, and the subject may hold no other code ("R7" is
    not "R5"); proper names must nest (either side's name words within the other's: "Elara" ↔ "Dr. Elara
    Vance", not "Jane Smith" ↔ "John Smith"); a common noun subject needs its head noun. Words after the
    matched word must belong to the question's subject too, so "Its firmware" is not "the R5" and "the
    boiler seals" is not "the boiler"; "the seals of the boiler" is not "the boiler" either.
    """
    if claim.existential:
        return True
    if claim.generic:
        if sub.imperative:
            return True
        lows = [t.low for t in sub.toks if t.low not in DETERMINERS]
        return bool(lows) and all(w in GENERIC_PERSONS for w in lows)
    if sub.imperative or not sub.toks:
        return False
    owner = [t for t in sub.toks[: sub.owner] if t.low not in DETERMINERS]
    own = [t for t in sub.toks[sub.owner :] if t.low not in DETERMINERS]
    toks = owner + own
    keys = claim.keys
    allowed = claim.subject_stems
    hit = [i for i, t in enumerate(toks) if t.stems & keys]
    if not hit:
        return False
    codes_q = {s for t in claim.subject if t.code for s in t.stems}
    names_q = {s for t in claim.subject if _is_name(t) and not t.code for s in t.stems}
    if codes_q:
        if any(t.code and not (t.stems & codes_q) for t in toks):
            return False
    elif names_q:
        names_s = {s for t in toks if _is_name(t) and not t.code for s in t.stems}
        if names_s and not (names_q <= names_s or names_s <= names_q):
            return False
    of = next((i for i, t in enumerate(toks) if t.low == "of"), None)
    if of is not None and hit[0] > of and not claim.modifiers:
        return False  # "the seals of the boiler" is not "the boiler"
    end = of if of is not None else len(toks)
    after = range(max(hit[-1] + 1, len(owner)), end)
    return all(not toks[i].stems or toks[i].stems & allowed or _is_name(toks[i]) for i in after)


def _first_positions(toks: list[Tok], stems: set[str], start: int) -> dict[str, int] | None:
    pos: dict[str, int] = {}
    for i in range(len(toks)):
        for s in toks[i].stems:
            if s in stems and s not in pos and i >= start:
                pos[s] = i
    for i, t in enumerate(toks):  # a stem only found inside the subject still counts
        for s in t.stems:
            if s in stems and s not in pos:
                pos[s] = i
    return pos if len(pos) == len(stems) else None


def polarity(claim: Claim, sentence: Parsed) -> str | None:
    """'Yes' / 'No' when the sentence states the claim (or its negation) explicitly, else None."""
    sentence_stems = content_stems(sentence.toks)
    if not claim.modifiers <= sentence_stems or not claim.predicate <= sentence_stems:
        return None
    if claim.condition is None and sentence.conditional:
        return None  # "If the tank is empty, the pump stops" does not say the pump stops
    if claim.condition is not None and not _states_condition(claim, sentence):
        return None
    stop = frozenset(claim.predicate)
    subjects = sentence.subjects(stop)
    for i, clause in enumerate(sentence.clauses):
        if clause.conditional:
            continue
        sub = subjects[i]
        if not _subject_matches(claim, sub):
            continue
        ext = _extended(sentence.clauses, i)
        pos = _first_positions(ext, claim.predicate, sub.end)
        if pos is None or not claim.common_words <= content_stems(ext) | content_stems(sub.toks):
            continue
        first, last = min(pos.values()), max(pos.values())
        span = ext[: last + 1]
        allowed = HYPOTHETICAL_MODALS.get(claim.modal or "", set())
        lows = {t.low for t in span}
        if claim.modal and not (lows & allowed or any(t.low.startswith(tuple(allowed)) for t in span)):
            continue  # "Would X …?" needs a statement of what X would (or will) do
        if (lows & HEDGES) - allowed:
            return None  # a hedged statement answers nothing
        negations = _negation_count(ext, sub, first, pos, claim) + turns(ext, claim.predicate, claim.past)
        return "No" if negations % 2 else "Yes"
    return None


_INNER_NEGATORS = frozenset(["no", "never", "not", "none", "nothing"])


def _negation_count(ext: list[Tok], sub: Subject, first: int, pos: dict[str, int], claim: Claim) -> int:
    """Negations whose scope reaches the predicate: before its first word and not cut off by a
    coordinator ("does not need X and supports Y": the "not" is about X), plus "without" before one of
    the predicate's words when the question does not itself say "without"."""
    cut = max((k for k in range(sub.end, first) if ext[k].low in COORDINATORS), default=-1)
    count = 0
    for k in range(first):
        tok = ext[k]
        nxt = ext[k + 1] if k + 1 < len(ext) else None
        if not (is_negator(tok, nxt) or tok.low in NEGATIVE_VERBS):
            continue
        if k > cut or sub.start <= k < sub.end:
            count += 1
    # inside the predicate: "found no new cracks", "has never failed" (unless a coordinator cuts it off)
    targets = sorted(set(pos.values()))
    for k in range(first + 1, targets[-1]):
        if ext[k].low not in _INNER_NEGATORS:
            continue
        nxt = next((j for j in targets if j > k), None)
        if nxt is not None and not any(ext[j].low in COORDINATORS for j in range(k + 1, nxt)):
            count += 1
    if not claim.without:
        targets = set(pos.values())
        for k, tok in enumerate(ext):
            if tok.low != "without":
                continue
            window = range(k + 1, min(len(ext), k + 1 + _MAX_WINDOW))
            for j in window:
                if ext[j].low in COORDINATORS:
                    break
                if j in targets:
                    count += 1
                    break
    return count


def _states_condition(claim: Claim, sentence: Parsed) -> bool:
    assert claim.condition is not None
    for clause in sentence.clauses:
        if not clause.conditional:
            continue
        have = content_stems(clause.toks)
        if claim.condition <= have:
            negated = clause.lead == "unless"
            negated ^= _negations(clause.toks) % 2 == 1
            return negated == claim.condition_negated
    return False


def subject_of(sentence: Parsed, clause_index: int, stop: frozenset[str]) -> Subject:
    return sentence.subjects(stop)[clause_index]


__all__ = ["Claim", "Parsed", "parse", "polarity", "read_question", "subject_of", "subject_span"]
