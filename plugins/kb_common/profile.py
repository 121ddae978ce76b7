"""The goal profile of one intent (DS023 step 1): what to look for, which roles serve it, how broad it is.

Generic English only: the meta vocabulary below is the language of questions and instructions ("answer in
one word", "explain", "list"), never the vocabulary of any particular document.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.answer_types import expected_type, option_kinds
from mrpvm.plugins.sdk.text import terms, words
from mrpvm.protocol.document import IntentGroup
from mrpvm.protocol.vocab import ACTS, ROLES_FOR_ACT

from .fields import LEVELS

# Words that ask for a summary: they shape the answer (meta) and ask about the whole (broad).
_SUMMARY_WORDS = ["overview", "summary", "summarize", "summarise", "overall", "gist", "outline", "recap"]
# Words that shape a question or its answer rather than name its subject: low query weight, no coverage.
_META_WORDS = [
    "answer",
    "answers",
    "question",
    "questions",
    "explain",
    "explanation",
    "describe",
    "description",
    "tell",
    "give",
    "list",
    "name",
    "show",
    "word",
    "words",
    "single",
    "sentence",
    "sentences",
    "brief",
    "briefly",
    "short",
    "detail",
    "details",
    "detailed",
    "please",
    "yes",
    "reply",
    "respond",
    "response",
    "format",
    "exactly",
    "simply",
    "mention",
    "compare",
    "comparison",
    "define",
    "definition",
    "meaning",
    "mean",
    "identify",
    "evaluate",
    "verify",
    "recommend",
    "diagnose",
    "implement",
    "way",
    "ways",
    "steps",
    "step",
    "whether",
    "decide",
    *_SUMMARY_WORDS,
]
META_TERMS: frozenset[str] = frozenset(terms(" ".join(_META_WORDS)))

# Words that ask about a whole source or topic.
_BROAD_WORDS = frozenset([*_SUMMARY_WORDS, "entire", "whole", "general", "themes", "theme"])
_CONSTRAINED = re.compile(
    r"\b(yes|no|one|single|number|count|name|date|year|true|false|boolean)\b", re.IGNORECASE
)

# Query-term weights by where the term appears in the intent group.
WEIGHT_INTENT = 1.0
WEIGHT_SUPPORT = 0.5  # the Context line
WEIGHT_META = 0.25
WEIGHT_CRITERION = 0.05

# Words that name the source itself ("summarize the document"): a question about the whole source.
SOURCE_TERMS: frozenset[str] = frozenset(
    terms("document documents text story article passage source book chapter report paper essay page")
)

BREADTH_LEVEL: dict[str, str] = {"broad": "aggregate", "moderate": "composite", "specific": "atomic"}
_SPECIFIC_ACTS = frozenset({"define", "identify", "evaluate", "verify", "implement"})
# Answer types of a question answered by one fact: the passage that states it, not a section summary.
_SPECIFIC_TYPES = frozenset(
    {
        "person",
        "number",
        "version",
        "date",
        "duration",
        "location",
        "option",
        "command",
        "yes-no",
        "entity",
        "definition",
        "comparison",  # what each side's own passage says, not a section digest
    }
)


class GoalProfile(msgspec.Struct, kw_only=True):
    """What one intent needs from retrieval."""

    index: int  # the intent's number (Resolved Intent N)
    act: str
    text: str  # the intent sentence
    weights: dict[str, float]  # query term -> weight
    content: list[str]  # the intent's own subject terms (coverage is measured over these)
    subject: list[str] = []  # content plus the Context line's terms (what evidence must be about)
    roles: tuple[str, ...]  # preferred roles, most useful first (DS004)
    breadth: str  # broad | moderate | specific
    level: str  # preferred KU level: aggregate | composite | atomic
    purpose: str = "task-evidence"
    whole: bool = False  # a broad question about the source as a whole: answered by source summaries
    answer_type: str = ""  # the intent's AnswerType (or the one its question asks for)

    @property
    def level_rank(self) -> int:
        return LEVELS.index(self.level)


def guess_act(text: str) -> str:
    """A DS004 act for a bare prompt (requests without intents): a small, general cue table."""
    low = text.strip().lower()
    first = words(low[:80])[:3]
    head = first[0] if first else ""
    if re.search(r"\b(compare|difference|differences|versus|vs\.?)\b", low):
        return "compare"
    if re.match(r"how (do|can|should|to|would)\b", low) or head in ("install", "configure", "set", "build"):
        return "implement"
    if head == "why" or low.startswith("explain"):
        return "explain"
    if re.match(r"what (is|are) (a|an|the)?\s*\w+( \w+)?\??$", low) or head in ("define", "definition"):
        return "define"
    if head in ("which", "who", "name", "where", "when"):
        return "identify"
    if head in ("should", "recommend"):
        return "recommend"
    if head in (
        "is",
        "are",
        "does",
        "do",
        "can",
        "could",
        "would",
        "will",
        "was",
        "were",
        "did",
        "has",
        "have",
    ):
        return "evaluate"
    return "describe"


def _breadth(intent: IntentGroup, content: list[str], answer_type: str) -> str:
    raw = set(words(intent.intent))
    lowered = intent.intent.strip().lower().rstrip("?. ")
    if raw & _BROAD_WORDS or (lowered.startswith("what") and lowered.endswith(" about")):
        return "broad"
    constrained = bool(_CONSTRAINED.search(intent.output or ""))
    if constrained or intent.act in _SPECIFIC_ACTS or answer_type in _SPECIFIC_TYPES:
        return "specific"
    if intent.act == "describe" and len(set(content)) <= 2:
        return "broad"
    return "moderate"


def _named_kinds(text: str) -> frozenset[str]:
    """Terms of the nouns that say what kind of thing an option the question writes out is: low weight."""
    return frozenset(t for noun in option_kinds(text) for t in terms(noun))


def build_profile(intent: IntentGroup, purpose: str = "task-evidence") -> GoalProfile:
    """Query terms (intent 1.0, context 0.5, criterion and meta words 0.25), roles, breadth and level."""
    act = intent.act if intent.act in ACTS else guess_act(intent.intent)
    weights: dict[str, float] = {}
    content: list[str] = []
    kinds = _named_kinds(intent.intent)
    for term in terms(intent.intent):
        meta = term in META_TERMS or term in kinds
        weights[term] = max(weights.get(term, 0.0), WEIGHT_META if meta else WEIGHT_INTENT)
        if not meta and term not in content:
            content.append(term)
    subject = list(content)
    for term in terms(intent.context or ""):  # key phrases, often with the referents of "it", "their"
        w = WEIGHT_META if term in META_TERMS else WEIGHT_SUPPORT
        weights[term] = max(weights.get(term, 0.0), w)
        if w == WEIGHT_SUPPORT and term not in subject:
            subject.append(term)
    for term in terms(intent.criterion or ""):  # how the answer is judged, not its subject: a faint weight
        weights[term] = max(weights.get(term, 0.0), WEIGHT_CRITERION)
    if not content:  # a question made only of meta words still has to be matched on something
        content = [t for t in weights if weights[t] >= WEIGHT_SUPPORT] or list(weights)
    subject += [t for t in content if t not in subject]
    answer_type = intent.answerType or expected_type(intent.intent.split("? ")[-1])
    breadth = _breadth(msgspec.structs.replace(intent, act=act), content, answer_type)
    whole = breadth == "broad" and all(t in SOURCE_TERMS or t in META_TERMS for t in content)
    return GoalProfile(
        index=intent.index,
        act=act,
        text=intent.intent,
        weights=weights,
        content=content,
        subject=subject,
        roles=ROLES_FOR_ACT.get(act, ()),
        breadth=breadth,
        level=BREADTH_LEVEL[breadth],
        purpose=purpose,
        whole=whole,
        answer_type=answer_type,
    )


def bare_intent(prompt: str) -> IntentGroup:
    """The one intent of a request that carries none: the prompt itself."""
    return IntentGroup(index=1, act=guess_act(prompt), intent=prompt.strip() or "(empty)", output="answer")


def with_variants(profile: GoalProfile, variants: dict[str, str]) -> GoalProfile:
    """The profile with each asked term the collection never holds replaced by the collection's spelling of
    it (protocol/variants.py): "licence" is searched, weighed and covered as the documents' "license"."""
    if not variants:
        return profile
    weights: dict[str, float] = {}
    for term, weight in profile.weights.items():
        held = variants.get(term, term)
        weights[held] = max(weight, weights.get(held, 0.0))

    def held(terms: list[str]) -> list[str]:
        return list(dict.fromkeys(variants.get(t, t) for t in terms))

    return msgspec.structs.replace(
        profile, weights=weights, content=held(profile.content), subject=held(profile.subject)
    )
