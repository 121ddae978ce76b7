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

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern

from .clauses import (
    Tok,
    content_stems,
    is_negator,
    tokenize,
)
from .lexicon import (
    ADVERBS,
    AUX,
    CONNECTIVES,
    DETERMINERS,
    EMPTY_ADVERBS,
    GENERIC_PERSONS,
    HYPOTHETICAL_MODALS,
    HYPOTHETICAL_WORDS,
    NEGATORS,
    PREPOSITIONS,
    PRONOUNS,
)
from .qualifiers import asks_past, universal

_IF_FIRST = lazy_pattern(
    r"^\s*(?P<w>if|unless|suppose|supposing|assuming|provided(?:\s+that)?|in\s+case)\s+(?P<c>.+?),\s*(?P<m>.+)$",
    re.I | re.S,
)
_INVERTED = lazy_pattern(r"^\s*(?:had|were|should)\s+(?P<c>.+?),\s*(?P<m>.+)$", re.I | re.S)
_IF_LAST = lazy_pattern(r"\s+(?P<w>if|unless|in\s+case|provided(?:\s+that)?)\s+(?P<c>.+)$", re.I | re.S)
_TRUE_THAT = lazy_pattern(r"^(?:it\s+)?(?:true|correct|right|the\s+case|so)\s+that\s+", re.I)


class Claim(msgspec.Struct):
    """One reading of a polar question as a statement."""

    subject: list[Tok] = msgspec.field(default_factory=list)  # the subject phrase (determiners dropped)
    generic: bool = False  # "Can I …", "Should we …": a command or a generic person states it
    gerund: bool = False  # a gerund subject ("disabling caching in the STL"): the verb follows it
    existential: bool = False  # "Is there …"
    pronoun: bool = False  # "Does it …": needs the intent's context to know what "it" is
    modifiers: set[str] = msgspec.field(
        default_factory=set
    )  # stems the sentence must hold ("of …", a leading phrase)
    predicate: set[str] = msgspec.field(default_factory=set)  # stems the clause must hold
    modal: str | None = None  # would / could / might
    condition: set[str] | None = None  # stems of the question's condition
    condition_negated: bool = False
    without: bool = False  # the predicate itself says "without"
    past: bool = False  # the question asks about the past ("Was it …"): a past-only state answers Yes
    universal: str = ""  # its scope over a set ("every UID", "any GID"): a restriction answers No

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


def count_negators(toks: list[Tok]) -> int:
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
        negated ^= count_negators(ctoks) % 2 == 1
        if not cond_stems:
            return None
    lead_stems = content_stems(tokenize(lead))
    past, every = asks_past(toks), universal(toks)
    for c in claims:
        c.past = past
        c.universal = every
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
    determined = bool(rest) and rest[0].low in DETERMINERS  # "the heating plate": a noun, not a gerund
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
    claims: list[Claim] = [] if determined else _gerund_readings(rest, run, modal)
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


def _gerund_readings(rest: list[Tok], run: list[Tok], modal: str | None) -> list[Claim]:
    """A gerund subject (no determiner before it: "the heating plate" is a noun) takes its object's
    prepositional phrase along: "Does [disabling memory caching in the STL] slow down the program?" asks
    whether the disabling slows the program, so the verb the question turns on is "slow", not a word of the
    phrase. A name ends the phrase's noun phrase; a common one may end after any of its first three words."""
    end = len(run)
    if not run or not run[0].low.endswith("ing") or end >= len(rest) or rest[end].low not in PREPOSITIONS:
        return []
    k = end + 1
    while k < len(rest) and rest[k].low in DETERMINERS:
        k += 1
    if k >= len(rest):
        return []
    last = k + 1 if rest[k].text[:1].isupper() or rest[k].code else min(k + 3, len(rest) - 1)
    claims: list[Claim] = []
    for m in range(last, k, -1):
        pred, without = _predicate(rest[m:])
        if pred:
            claims.append(Claim(rest[:m], predicate=pred, modal=modal, without=without, gerund=True))
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


# "Is a password required to …?", "Are logs stored by the server?": the subject undergoes the verb
_NOT_PARTICIPLES = "open|often|even|seven|eleven|red|bed|need|feed|seed|speed"
_PASSIVE = lazy_pattern(
    r"^\s*(?:is|are|was|were|isn't|aren't|wasn't|weren't)\s+(?:\S+\s+){1,4}?"
    rf"(?!\w*ing\b|(?:{_NOT_PARTICIPLES})\b)\w+(?:ed|en|wn)\b"
    r"(?:\s+(?:to|by|for|in|on|at|when|if|before|after)\b|\s*$)",
    re.I,
)

# "Should the issue tracker be used for …?", "Must X be signed?": asks what one should do with X, which a
# command ("Please, don't use the issue tracker for this.") answers
_ADVICE = lazy_pattern(r"^\s*(?:should|must|can|may|could)\s+.+?\b(?:be|been)\s+\w+(?:ed|en|wn|t)\b", re.I)


def asks_advice(main: str) -> bool:
    """Whether a yes/no question asks what one should do with something ("Must X be signed?")."""
    return _ADVICE.match(main) is not None


def asks_passive(main: str) -> bool:
    """Whether a yes/no question is in the passive ("Is a password required to …?")."""
    return _PASSIVE.match(main) is not None
