"""What a sentence tells besides its facts: an instruction to follow ("Run …", "To create X, create …") and
the condition it states with its polarity ("If false, …", "unless X is disabled")."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from mrpvm.plugins.sdk.answer_shapes import mentions_type
from mrpvm.plugins.sdk.lexicon import IMPERATIVE_VERBS
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .evidence import Sentence

# a clause's first word; a word joined to the next by a hyphen ("and commit-msg hooks") is no verb
_CLAUSE_START = lazy_pattern(r"(?:^|[,;:]\s+|\b(?:then|and|to)\s+)([a-z]+)\b(?!-)", re.I)


# "applications can then use …", "activating it will change X and modify Y": a verb phrase a modal governs
# states what may happen, it does not tell what to do
_MODAL = lazy_pattern(r"\b(?:can|could|may|might|will|would|shall|should|must)\b", re.I)


def is_instruction(text: str) -> bool:
    """A sentence that tells the reader what to do: a clause opening with a command verb ("Run …", "To
    create X, create a copy …", "…, and use it as FILE")."""
    text = text.strip()
    return any(
        m.group(1).lower() in IMPERATIVE_VERBS
        and not (m.group(0)[0].isalpha() and _MODAL.search(text, 0, m.start()))
        for m in _CLAUSE_START.finditer(text)
    )


_CONDITION = lazy_pattern(r"\b(if|unless|when|whenever)\b([^,.;:]*)", re.I)
# a condition's polarity: a negation ("if neither X nor Y is set"), or a setting's negative value ("If false, …",
# "when X is disabled")
# "If omitted", "when the field is missing": a thing's absence (a predicate of absence is the negation of
# presence: "missing" is "not present", "unset" is "not set")
_ABSENT = r"omitted|missing|absent|unset|unspecified"
_NEGATION = lazy_pattern(
    r"\b(?:not|no|never|neither|without|none|false|disabled|off|" + _ABSENT + r")\b|n[’']t\b",
    re.I,
)
# "Otherwise …", "Else, …", "If not, …": the case opposite to the condition of the sentence before
_OTHERWISE = lazy_pattern(r"\s*(?:otherwise|else|if\s+not)\b", re.I)
# a value quoted in a condition's clause: 'wide', "wide", `wide`, ‘wide’, “wide”
_QUOTED_VALUE = lazy_pattern(r"['\"`‘“]([^'\"`’”\s][^'\"`’”]{0,39})['\"`’”]")
# a condition a question sets after what it asks: "Which schema is used when no name is given?"
_TRAILING_CONDITION = lazy_pattern(r"\S\s+(?=(?:if|unless|when|whenever)\s)", re.I)


def tells_what_to_do(sentences: list[Sentence]) -> bool:
    """Something to do for "how do I …": code, an instruction, or a command or option written out ("When
    --no-verify or -n is given, these are bypassed.")."""
    return any(s.code or is_instruction(s.text) or mentions_type(s.text, "command") for s in sentences)


class Condition(NamedTuple):
    """A condition a text states: negated or not, and the terms of its clause (what it is about)."""

    negated: bool
    about: frozenset[str]
    inferred: bool = False  # read from "Otherwise …" against the sentence before it
    values: frozenset[str] = frozenset()  # the quoted values its clause names ("when set to 'wide'": wide)

    def names_other_value(self, asked: Condition) -> bool:
        """Both clauses name values and share none: the condition is another case than the asked one
        ("When set to 'narrow', …" for "… when it is set to 'wide'?")."""
        return bool(self.values) and bool(asked.values) and not self.values & asked.values


def condition_of(text: str) -> Condition | None:
    """The first condition a text states ("if …", "unless …"), with its clause's terms; None without one."""
    m = _CONDITION.search(text)
    if m is None:
        return None
    clause = m.group(2)
    values = frozenset(v.lower() for v in _QUOTED_VALUE.findall(clause))
    return Condition(bool(stated_condition(text)), frozenset(terms(clause)), values=values)


def stated_conditions(texts: list[str], about: frozenset[str]) -> list[Condition | None]:
    """The condition each sentence states (`condition_of`); a sentence opening "Otherwise" states the opposite
    of the one before it ("If a name is given, X. Otherwise Y.": Y holds when none is given) when that one is
    about the asked condition's thing (holds most terms of `about`): "If it is set, … Otherwise …" after a
    sentence on another setting says nothing of the asked one."""
    out: list[Condition | None] = []
    for text in texts:
        own = condition_of(text)
        before = out[-1] if out else None
        if before is not None and _shares_most(before.about, about) and _OTHERWISE.match(text):
            own = Condition(not before.negated, before.about, True, before.values)
        out.append(own)
    return out


def same_thing(stated: Condition, asked: Condition, weight: Callable[[str], float] | None = None) -> bool:
    """The stated condition is about what the asked one is: its clause holds at least half of the asked
    clause's terms ("If a region name is given" for "when no region name is given"; not "If the cache
    doesn't fit … the default template" for "if I don't set the template option"). With `weight` (a term's
    rarity in the evidence) the half is of the clause's weight: a condition sharing only its generic word
    ("… is specified", "… is given") with the asked one is about something else ("when neither a tag nor a
    label is specified" / "If no colour is specified")."""
    if weight is None:
        return _shares_most(stated.about, asked.about)
    shared = stated.about & asked.about
    return bool(shared) and 2 * sum(map(weight, shared)) >= sum(map(weight, asked.about))


def stands_to(
    stated: list[Condition], asked: Condition, strict: bool, weight: Callable[[str], float]
) -> tuple[bool, bool, bool]:
    """How stated conditions stand to the asked one: (one agrees with it, one about the same thing opposes
    it, any states the opposite polarity). `strict` (a condition set after what is asked): only one about
    the same thing agrees; otherwise any stated (not inferred) with the asked polarity does."""
    agrees = any(
        c.negated == asked.negated
        and not c.names_other_value(asked)
        and (same_thing(c, asked, weight) or bool(c.values & asked.values) or (not strict and not c.inferred))
        for c in stated
    )
    opposes = any(
        (c.negated != asked.negated and same_thing(c, asked, weight)) or c.names_other_value(asked)
        for c in stated
    )
    return agrees, opposes, any(c.negated != asked.negated for c in stated)


def _shares_most(stated: frozenset[str], asked: frozenset[str]) -> bool:
    shared = len(stated & asked)
    return shared > 0 and 2 * shared >= len(asked)


def split_at_condition(question: str) -> tuple[str, Condition] | None:
    """(what a question asks, the condition it sets after it): "Can I X if I don't Y?" gives "Can I X" and
    the negated condition about Y; None when it sets none there."""
    m = _TRAILING_CONDITION.search(question)
    return (question[: m.start() + 1], condition_of(question[m.end() :])) if m else None


def trailing_condition(question: str) -> Condition | None:
    """The condition a question sets after what it asks ("In which schema is a sequence created when no schema
    name is given?": negated, about schema, name, given); None when it sets none there."""
    split = split_at_condition(question)
    return split[1] if split else None


# a condition of absence: nothing given ("if I don't set one", "when no name is given", "if omitted"), not a
# value set ("when X is false", "if disabled")
_ABSENCE = lazy_pattern(r"\b(?:not|no|never|neither|without|none|" + _ABSENT + r")\b|n[’']t\b", re.I)


def absence_condition(text: str) -> bool:
    """The text's first condition is one of absence: with nothing set, what holds is the default."""
    m = _CONDITION.search(text)
    return m is not None and bool(stated_condition(text)) and _ABSENCE.search(m.group(2)) is not None


def stated_condition(text: str) -> bool | None:
    """Whether the first condition a text states ("if …", "unless …") is negated; None without one."""
    m = _CONDITION.search(text)
    if m is None:
        return None
    negations = len(_NEGATION.findall(m.group(2))) + (m.group(1).lower() == "unless")
    return negations % 2 == 1
