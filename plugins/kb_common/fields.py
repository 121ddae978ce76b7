"""How a Knowledge Unit is seen by the kb family: its weighted fields (DS009), its terms, its level and hash.

Every kb plugin analyses units and queries with the same function (`unit_fields` / sdk `terms`), so an
index built by one process is read consistently by another.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache

from mrpvm.plugins.sdk.text import plain_text, sentences, terms
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.handoff import (  # noqa: F401 - a unit's fields are analysed as the kernel's handoff does
    UnitAnalysis,
    acts_terms,
    body_text,
    role_terms,
    topic_text,
    unit_fields,
    unit_hash,
)

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


# The kb family's analyser: sdk `terms` (which caches per token; ingest analyses millions of units).
analyse = terms


def content_terms(fields: dict[str, list[str]]) -> frozenset[str]:
    """The terms a unit can contribute to query-term coverage and redundancy checks."""
    out: set[str] = set()
    for name in TEXT_FIELDS:
        out.update(fields.get(name, ()))
    return frozenset(out)


class ShippedFields(Mapping[str, list[str]]):
    """A handed analysis's terms per field, split on first read: an upsert writes the joined strings, and
    only a hook that reads a field's terms (kb-balanced's vectors: topic and body) splits it."""

    __slots__ = ("_analysis",)

    def __init__(self, analysis: UnitAnalysis):
        self._analysis = analysis

    def __getitem__(self, name: str) -> list[str]:
        if name not in _ANALYSED_FIELDS:
            raise KeyError(name)
        found: str = getattr(self._analysis, name)
        return found.split(" ") if found else []

    def __iter__(self) -> Iterator[str]:
        return iter(_ANALYSED_FIELDS)

    def __len__(self) -> int:
        return len(_ANALYSED_FIELDS)


_ANALYSED_FIELDS = ("topic", "heading", "body", "role", "acts", "note", "condition")  # UnitAnalysis's


def written_form(
    unit: KnowledgeUnit, analysis: UnitAnalysis | None
) -> tuple[KnowledgeUnit, str, Mapping, dict, str]:
    """(unit, hash, fields, texts, content terms joined) of a unit a kb store is about to write: from the
    analysis the kernel handed (its joined strings as they are, no split and join again), else analysed
    here. `texts`: each text field's terms joined by single spaces, as the full-text index takes them."""
    if analysis is not None:
        texts = {name: getattr(analysis, name) for name in TEXT_FIELDS}
        content = " ".join(dict.fromkeys(" ".join(texts.values()).split()))
        return unit, analysis.hash, ShippedFields(analysis), texts, content
    fields = unit_fields(unit)
    texts = {name: " ".join(fields.get(name, ())) for name in TEXT_FIELDS}
    return unit, unit_hash(unit), fields, texts, " ".join(content_terms(fields))


def own_terms(unit: KnowledgeUnit) -> frozenset[str]:
    """The terms of the unit's own words (topic and statement), without the heading it inherits: two
    sibling units share every term of their heading, which says nothing of whether they say the same thing
    (the redundancy checks compare these)."""
    return _own_terms(topic_text(unit), body_text(unit))


@lru_cache(maxsize=16384)
def _own_terms(topic: str, body: str) -> frozenset[str]:
    """A pure function of the two texts: a warm worker compares the same units on every call (the
    analysis was a tenth of a retrieve's CPU)."""
    return frozenset(analyse(plain_text(topic))) | frozenset(analyse(plain_text(body)))


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
