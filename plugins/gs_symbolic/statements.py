"""Reading the evidence for a polar question (propositions.py reads the question): a sentence parsed once
into clauses, and whether a clause states the question's claim, denies it, or says nothing (module
docstring of propositions.py: subject match, predicate stems, negation, hedges and conditions)."""

from __future__ import annotations

import msgspec

from .clauses import (
    Clause,
    Subject,
    Tok,
    clause_subjects,
    conditioned,
    content_stems,
    is_negator,
    split_clauses,
    tokenize,
)
from .lexicon import (
    COORDINATORS,
    DETERMINERS,
    GENERIC_PERSONS,
    HEDGES,
    HYPOTHETICAL_MODALS,
    NEGATIVE_VERBS,
    PRONOUNS,
)
from .propositions import Claim, count_negators
from .qualifiers import turns

MAX_WINDOW = 4  # tokens after "without" within which the predicate's object must follow

# --------------------------------------------------------------------------- reading the evidence


class Parsed(msgspec.Struct):
    """One evidence sentence, tokenised and split once."""

    text: str
    toks: list[Tok]
    clauses: list[Clause]
    antecedent: Subject | None

    def subjects(self, stop: frozenset[str]) -> list[Subject]:
        return clause_subjects(self.text, self.toks, self.clauses, self.antecedent, stop)


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
    if claim.condition is not None and not _states_condition(claim, sentence):
        return None
    stop = frozenset(claim.predicate)
    subjects = sentence.subjects(stop)
    for i, clause in enumerate(sentence.clauses):
        if clause.conditional or (claim.condition is None and conditioned(sentence.clauses, i)):
            continue  # "If the tank is empty, the pump stops" does not say the pump stops
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
        negations = _negation_count(ext, sub, first, pos, claim) + turns(
            ext, claim.predicate, claim.past, claim.universal, sentence.toks
        )
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
            window = range(k + 1, min(len(ext), k + 1 + MAX_WINDOW))
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
            negated ^= count_negators(clause.toks) % 2 == 1
            return negated == claim.condition_negated
    return False
