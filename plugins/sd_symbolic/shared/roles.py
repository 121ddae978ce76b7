"""Choose a KU Role (DS005) from surface cues in the text, and recognise imperative (procedural) sentences.

Cues are generic English markers of discourse function (definitions, comparisons, constraints, causal
explanations, diagnostics, evaluations, past-tense narration); nothing here is tied to a domain.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.lexicon import IMPERATIVE_VERBS, word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, words

_I = re.IGNORECASE

# "X is a/an/the Y", "X are Y that ..." with a short, non-pronoun subject at the start.
_DEFINITION_HEAD = lazy_pattern(
    r"^(?!(?:it|this|that|there|these|those|he|she|they|we|you|i|here|what|which|who)\b)"
    r"[\w\"'“”‘’()\-/. ]{1,60}?\s+(?:is|are)\s+(?:an?|the)\s+(?!(?:same|only|first|last|best|most)\b)\w+",
    _I,
)
# the hedges are looked behind once "means" is found, not at every position of the sentence (same matches)
_DEFINITION_CUE = lazy_pattern(
    r"\bmeans\b(?<!usually means)(?<!often means)(?<!typically means)(?<!probably means)(?<!likely means)"
    r"(?<!generally means)(?<!also means)"
    r"|\b(?:is defined as|are defined as|refers to|refer to|is called|are called|is known as|are known as"
    r"|stands for|is the term for|denotes|is a (?:kind|type|form|sort) of|are (?:kinds|types|forms) of)\b",
    _I,
)
_COMPARISON = lazy_pattern(
    r"\b(?:unlike|whereas|compared (?:to|with)|in contrast|by contrast|versus|vs\.?|rather than|as opposed to"
    r"|differs? from|different from|differences? between|similar to|similarly|on the other hand|the same as"
    r"|more \w+ than|less \w+ than|fewer \w+ than|(?!other\b)\w{2,}er than|better than|worse than|while the other)\b",
    _I,
)
_CONSTRAINT = lazy_pattern(
    r"\b(?:must|mustn't|shall|required|mandatory|prohibited|forbidden|not (?:allowed|permitted)"
    r"|should not|shouldn't|may not|cannot|only if|at least|at most|no more than|no later than|is limited to"
    r"|are limited to|under no circumstances)\b|^(?:never|always|do not|don't|avoid)\b",
    _I,
)
_EXPLANATION = lazy_pattern(
    r"\b(?:because|therefore|so that|thus|hence|consequently|as a result|due to|owing to|in order to"
    r"|which is why|that is why|the reason|causes|caused|cause|leads to|led to|lead to|results in|resulted in"
    r"|thereby|this means|explains?)\b",
    _I,
)
_DIAGNOSTIC_STRONG = lazy_pattern(
    r"\b(?:errors?|symptoms?|troubleshoot\w*|diagnos\w*|exceptions?|crash(?:es|ed|ing)?|workaround|root cause"
    r"|bugs?|stack trace|timed out|time ?outs?|does not work|doesn't work|not working|won't start|fix(?:es)?)\b",
    _I,
)
_DIAGNOSTIC_COND = lazy_pattern(
    r"\b(?:if|when|whenever|once)\b[^.]{0,80}?\b(?:fails?|failing|breaks|stops|hangs)\b", _I
)
_EVALUATION_WORDS = word_set(
    """recommended recommend best worst advantage advantages disadvantage disadvantages drawback drawbacks
    benefit benefits pros cons trade-off trade-offs tradeoff tradeoffs effective ineffective inefficient
    reliable unreliable suitable unsuitable preferable ideal excellent outperform outperforms strength
    strengths weakness weaknesses limitation limitations worth"""
)
_PAST_WORDS = word_set(
    """was were had did went came became began fled found made took gave saw said told knew thought left
    stood ran fell grew brought built held kept lost met paid sent sat spoke spent won wrote rose drove
    dove broke chose struck shook sought taught caught fought felt heard understood woke wore bore hid
    ago"""
)
# Words without which a cue pattern cannot match: the pattern only runs when one is present.
_TRIGGERS = {
    "definition": word_set(
        """means defined refers refer called known stands term denotes kind type form sort kinds types
        forms"""
    ),
    "comparison": word_set(
        """unlike whereas compared contrast versus vs rather opposed differ differs different difference
        differences similar similarly other same than while"""
    ),
    "constraint": word_set(
        """must mustn't shall required mandatory prohibited forbidden allowed permitted should shouldn't
        may cannot only least most more later limited circumstances never always do don't avoid"""
    ),
    "explanation": word_set(
        """because therefore so thus hence consequently result due owing order why reason causes caused
        cause leads led lead results resulted thereby means explains explain"""
    ),
    "diagnostic": word_set(
        """error errors symptom symptoms exception exceptions crash crashes crashed crashing workaround
        root bug bugs stack timed timeout timeouts time work working start fix fixes"""
    ),
    "diagnostic-cond": word_set("if when whenever once"),
}
_DIAGNOSTIC_PREFIX = lazy_pattern(r"troubleshoot|diagnos", _I)
# An -ed verb narrates when it takes an object or ends the clause ("abandoned the fort", "they agreed.");
# followed by a preposition it is usually a participle ("modeled on", "returned by").
_ED = lazy_pattern(
    r"\b(\w+)\s+(\w{3,}ed)\b(?=\s+(?:the|a|an|his|her|their|its|him|them|it|us|me|this|that|these|those|every|all"
    r"|some|several|two|three)\b|\s*[,.;!])",
    _I,
)
# Before these an -ed word is a passive, perfect or adjective ("is used", "the returned value"), not narration.
_NOT_PAST_BEFORE_ED = word_set(
    """is are be been being am get gets has have will would can could should may must not also the a an this
    that these those any each every its their our your his her some no all by of for to in with on as from at
    into if when optionally newly already"""
)

SEQUENCE_OPENERS = lazy_pattern(
    r"^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|then|next|finally|lastly|after that|afterwards|now|also"
    r"|to finish|to start|once done|when done|optionally|please)\s*,?\s+",
    _I,
)

_OBJECT_STARTERS = word_set(
    "the a an your all it them this these that each every any up out on off in into for with some its"
)
_WORD_RE = lazy_pattern(r"[A-Za-z][\w'-]*")


def sentence_role(text: str, wordset: frozenset[str] | set[str] | None = None) -> str | None:
    """The most specific cue role of one sentence, or None when it has no cue.

    `wordset` (the sentence's lower-cased words) lets each pattern run only when a trigger word is present.
    """
    ws = wordset if wordset is not None else set(words(text))
    if (("is" in ws or "are" in ws) and _DEFINITION_HEAD.match(text)) or (
        ws & _TRIGGERS["definition"] and _DEFINITION_CUE.search(text)
    ):
        return "Definition"
    if (ws & _TRIGGERS["diagnostic"] or _diagnostic_prefix(text)) and _DIAGNOSTIC_STRONG.search(text):
        return "Diagnostic"
    if (
        ws & _TRIGGERS["diagnostic-cond"]
        and _may_hold(text, _DIAGNOSTIC_COND_KEYS)
        and _DIAGNOSTIC_COND.search(text)
    ):
        return "Diagnostic"
    if ws & _TRIGGERS["comparison"] and _may_hold(text, _COMPARISON_KEYS) and _COMPARISON.search(text):
        return "Comparison"
    if (
        ws & _TRIGGERS["constraint"]
        and _may_hold(text, _CONSTRAINT_KEYS, _CONSTRAINT_OPENERS)
        and _CONSTRAINT.search(text)
    ):
        return "Constraint"
    if ws & _TRIGGERS["explanation"] and _EXPLANATION.search(text):
        return "Explanation"
    if ws & _EVALUATION_WORDS:
        return "Evaluation"
    return None


# What every match of _COMPARISON / _CONSTRAINT holds (lower-cased): one of these, or (_CONSTRAINT's
# anchored branch) one of the openers at the start
_COMPARISON_KEYS = (
    "than", "differ", "similar", "compared", "unlike", "whereas", "contrast", "vs", "versus", "opposed", "same as",
    "other hand", "while the other",
)  # fmt: skip
_CONSTRAINT_KEYS = (
    "must", "should", "cannot", "may not", "shall", "required", "mandatory", "prohibited", "forbidden",
    "not allowed", "not permitted", "only if", "at least", "at most", "no more than", "no later than",
    "limited to", "under no circumstances",
)  # fmt: skip
_CONSTRAINT_OPENERS = ("never", "always", "do not", "don't", "avoid")
_DIAGNOSTIC_COND_KEYS = ("fail", "breaks", "stops", "hangs")  # the verbs every _DIAGNOSTIC_COND match holds


def _may_hold(text: str, keys: tuple[str, ...], openers: tuple[str, ...] = ()) -> bool:
    """False when a cue pattern cannot match: an ASCII text (lower-casing is then what the pattern's
    IGNORECASE matching does) that holds none of its `keys` and opens with none of its `openers`. A
    non-ASCII text is always tried."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(key in low for key in keys) or (bool(openers) and low.startswith(openers))


def _diagnostic_prefix(text: str) -> bool:
    """`_DIAGNOSTIC_PREFIX.search(text)`; for ASCII text, two substring tests of it lower-cased (what its
    IGNORECASE matching does there) instead of a regex scan at every position."""
    if not text.isascii():
        return _DIAGNOSTIC_PREFIX.search(text) is not None
    low = text.lower()
    return "troubleshoot" in low or "diagnos" in low


def is_past(text: str, wordset: frozenset[str] | set[str] | None = None) -> bool:
    """Past-tense narration: an irregular past form or an -ed verb not used as a passive/participle."""
    ws = wordset if wordset is not None else set(words(text))
    if ws & _PAST_WORDS:
        return True
    if "ed " not in " ".join(ws) + " ":  # _ED needs a word ending in "ed" (it ends a token there); no word
        return False  # holds a space
    for m in _ED.finditer(text):
        if m.group(1).lower() not in _NOT_PAST_BEFORE_ED and not m.group(2).lower().endswith("eed"):
            return True
    return False


_LEAD_ADVERBIAL = lazy_pattern(
    r"^(?:at|in|on|after|before|when|whenever|once|if|for|during|every|each|until|while)\b[^,.;:!?]{1,60},\s+",
    _I,
)


# "Note that …", "Please remember that …": a verb of attention before a that-clause points the reader at a fact
# (an engagement marker of metadiscourse); it asks nothing to be done, so the sentence is no step
_ATTENTION = lazy_pattern(
    r"(?:please\s+)?(?:note|notice|remember|recall|observe|bear\s+in\s+mind|keep\s+in\s+mind)\s+that\b", re.I
)


def is_imperative(text: str) -> bool:
    """A sentence that starts with a command ("Open the file", "Then run make", "At the end of each day,
    remove …": a leading adverbial phrase before the verb does not change the mood); "Note that …" states a
    fact."""
    body = SEQUENCE_OPENERS.sub("", text.lstrip("*_`> "), count=1)
    if _ATTENTION.match(body):
        return False
    lead = _LEAD_ADVERBIAL.match(body)
    if lead and _verb_first(body[lead.end() :]):
        return True
    return _verb_first(body)


_FINITE = frozenset(["is", "are", "was", "were", "has", "have"])


def _verb_first(body: str) -> bool:
    ws = _WORD_RE.findall(body[:80])
    if not ws:
        return False
    first = ws[0].lower()
    second = ws[1].lower() if len(ws) > 1 else None  # the words after the second lowered only when read
    if second in ("for", "of") and not _FINITE.isdisjoint(w.lower() for w in ws[2:12]):
        return False  # "Support for the v1 protocol is disabled": a noun and its phrase, then the verb
    if first in IMPERATIVE_VERBS:
        # "Test results show ..." starts with a verb-looking noun: reject when the next word is a verb form.
        return second not in _FINITE
    if (
        first in STOPWORDS
        or first.endswith(("ed", "ing"))
        or (first.endswith("s") and not first.endswith("ss"))
    ):
        return False
    return second is not None and second in _OBJECT_STARTERS and ws[0][0].isupper()


def group_role(
    texts: list[str], cues: list[str | None] | None = None, pasts: list[bool] | None = None
) -> str:
    """The role of a group of sentences: a cue shared by half of them, else narrative, else any cue."""
    if cues is None:
        cues = [sentence_role(t) for t in texts]
    counted: dict[str, int] = {}  # a plain dict: a Counter's construction cost more than its few cues
    first: dict[str, int] = {}
    for i, c in enumerate(cues):
        if c:
            counted[c] = counted.get(c, 0) + 1
            first.setdefault(c, i)
    n = len(texts)
    best: str | None = None
    if counted:
        best = max(counted, key=lambda r: (counted[r], -first[r]))  # ties: the cue that comes first
        if counted[best] * 2 >= n:
            return best
    if pasts is None:
        pasts = [is_past(t) for t in texts]
    if sum(pasts) * 2 >= n:
        return "Narrative"
    return best or "Description"


_CONDITION = lazy_pattern(r"^(?:if|when|whenever|unless|once|in case)\s+([^,]{3,160}),", _I)


def condition_of(text: str) -> str | None:
    """The leading condition of a sentence ("If the disk is full, ..." -> "the disk is full")."""
    m = _CONDITION.match(text.strip())
    return m.group(1).strip() if m else None
