"""How a Knowledge Unit is seen by the kb family: its weighted fields (DS009), its terms, its level and hash.

Every kb plugin analyses units and queries with the same function (`unit_fields` / sdk `terms`), so an
index built by one process is read consistently by another.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import msgspec
from mrpvm.plugins.sdk.text import notation_terms, plain_text, sentences, terms
from mrpvm.protocol.document import KnowledgeUnit

# DS009 field weights. `body` is the claim or the procedure steps.
FIELD_WEIGHTS: dict[str, float] = {
    "topic": 1.5,
    "heading": 1.0,  # the heading the unit stands under: shared by its whole section, so it weighs less
    "body": 1.0,
    "role": 0.5,
    "acts": 0.8,
    "note": 0.6,
    "condition": 0.6,
}
# Free-text fields, scored by the lexical backends (BM25 per field, weighted sum).
TEXT_FIELDS: tuple[str, ...] = ("topic", "heading", "body", "note", "condition")
# Tag fields drawn from tiny closed vocabularies (9 roles, 10 acts): scored in Python over the candidate
# pool, because their posting lists cover most of the corpus and would dominate index query time.
TAG_FIELDS: tuple[str, ...] = ("role", "acts")

LEVELS: tuple[str, ...] = ("atomic", "composite", "aggregate")
LEVEL_RANK: dict[str, int] = {level: i for i, level in enumerate(LEVELS)}

# Phases whose KUs are strategy guidance rather than task evidence (DS023 step 3).
GUIDANCE_PHASES: frozenset[str] = frozenset({"mrp-plan-plugin", "frame", "val-plugin", "gs-plugin"})


def body_text(unit: KnowledgeUnit) -> str:
    """The unit's statement, with its TextBody when that adds text the claim does not carry."""
    body = unit.body
    extra = unit.textBody or ""
    if extra and extra.strip() != body.strip():
        return extra if body and body in extra else f"{body}\n{extra}"
    return body


# The kb family's analyser: sdk `terms` (which caches per token; ingest analyses millions of units).
analyse = terms


@lru_cache(maxsize=64)
def role_terms(role: str) -> tuple[str, ...]:
    return tuple(terms(role))


@lru_cache(maxsize=1024)
def acts_terms(acts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(terms(" ".join(acts)))


_ITEMIZED = frozenset({"list", "table"})


def topic_text(unit: KnowledgeUnit) -> str:
    """The topic field: Topic, plus Title when it adds words; for a list or table, also the heading it
    stands under (a list under "Exit Codes" is found by "exit code" although no item says it)."""
    parts = [unit.topic]
    for extra in (unit.title, unit.heading if unit.chunkType in _ITEMIZED else None):
        if extra and not any(extra in p for p in parts):
            parts.append(extra)
    return " ".join(parts)


def unit_fields(unit: KnowledgeUnit) -> dict[str, list[str]]:
    """Analysed terms of each weighted field (stemmed content words, as sdk `terms`)."""
    return {
        "topic": analyse(plain_text(topic_text(unit))),
        # every atomic unit is also found by the heading it stands under (a section's own heading is its
        # topic already)
        "heading": analyse(unit.heading) if unit.kuType == "atomic" else [],
        "body": analyse(plain_text(body_text(unit))) + notation_terms(body_text(unit)),
        "role": list(role_terms(unit.role)),
        "acts": list(acts_terms(tuple(unit.acts))),
        "note": analyse(unit.utilityNote) if unit.utilityNote else [],
        "condition": analyse(unit.condition) if unit.condition else [],
    }


def content_terms(fields: dict[str, list[str]]) -> frozenset[str]:
    """The terms a unit can contribute to query-term coverage and redundancy checks."""
    out: set[str] = set()
    for name in TEXT_FIELDS:
        out.update(fields.get(name, ()))
    return frozenset(out)


def own_terms(unit: KnowledgeUnit) -> frozenset[str]:
    """The terms of the unit's own words (topic and statement), without the heading it inherits: two
    sibling units share every term of their heading, which says nothing of whether they say the same thing
    (the redundancy checks compare these)."""
    return frozenset(analyse(plain_text(topic_text(unit)))) | frozenset(analyse(plain_text(body_text(unit))))


_hash_encoder = msgspec.json.Encoder(order="deterministic")


def unit_hash(unit: KnowledgeUnit) -> str:
    """A content hash: the unit's own Hash when present, else a digest of its fields (score excluded)."""
    if unit.hash:
        return unit.hash
    clean = msgspec.structs.replace(unit, score=None, resolvedFor=[])
    return hashlib.blake2b(_hash_encoder.encode(clean), digest_size=12).hexdigest()


def level_of(unit: KnowledgeUnit) -> int:
    return LEVEL_RANK.get(unit.kuType, 0)


def is_guidance(unit: KnowledgeUnit, phase: str = "gs-plugin") -> bool:
    """Scoped to a planning, framing, validation or the requested phase (DS023 guidance)."""
    scopes = unit.scopes
    return (phase != "kb-plugin" and phase in scopes) or any(s in GUIDANCE_PHASES for s in scopes)


def is_evidence(unit: KnowledgeUnit) -> bool:
    """Retrievable as task evidence: scoped to kb-plugin (the default scope)."""
    return "kb-plugin" in unit.scopes


# A task posed to the reader ("Q3: Explain why ...", "Compare A and B.") asks for evidence; it is none.
_LABEL = re.compile(r"^\s*(?:[-*•]\s*|\(?[A-Za-z]?\d{1,3}[.):]\s*|[A-Z][a-z]*\s*\d{1,3}[.):]\s*)")
_TASK_VERBS = frozenset(
    [
        "explain",
        "describe",
        "compare",
        "name",
        "list",
        "analyze",
        "analyse",
        "construct",
        "identify",
        "evaluate",
        "discuss",
        "summarize",
        "summarise",
        "give",
        "state",
        "define",
        "tell",
        "outline",
        "justify",
        "predict",
        "determine",
        "imagine",
        "consider",
        "assess",
        "contrast",
    ]
)


_ANSWER_LABEL = re.compile(r"^\s*(?:A|Ans|Answer)\s*[:.)-]", re.IGNORECASE)


@lru_cache(maxsize=50_000)
def _question_like(text: str, imperative_counts: bool) -> bool:
    parts = sentences(text) or [text]
    asking = total = 0
    for part in parts:
        if _ANSWER_LABEL.match(part):  # a FAQ entry carries its answer
            return False
        bare = _LABEL.sub("", part, count=1).strip()
        size = len(bare.split())
        total += size
        first = bare.split(None, 1)[0].lower().strip(",:;") if bare else ""
        if bare.endswith("?") or (imperative_counts and first in _TASK_VERBS):
            asking += size
    return total > 0 and asking * 2 > total


def is_question_like(unit: KnowledgeUnit) -> bool:
    """Most of the unit's text (by words) asks (sentences ending with '?') or sets a task (sentences starting
    with a task verb such as "Explain", "Compare", after an optional "Q3:" label). Such a unit restates a
    question; it is not evidence for its answer (a FAQ entry with an "A:" answer is). Procedures are
    imperative by nature, so for them only '?' counts."""
    body = unit.body.strip()
    return bool(body) and _question_like(body, unit.role != "Procedure")
