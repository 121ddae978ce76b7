"""What a sentence's unit and document state about all its sentences (term, headings, the document's
title), and which of a question's terms the evidence's context makes specific (keys) or says nothing of
(the documents' own subject)."""

from __future__ import annotations

from functools import lru_cache

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import EXTREMES, file_title, terms
from mrpvm.protocol.document import KnowledgeUnit

from .evidence import Sentence

COMMON_SHARE = 0.5  # a name in this share of the evidence units is the subject of all of it
KEY_SHAPE = lazy_pattern(r"\d|^-")

# "5.3. Why …?", "12) Build": the number of an entry or section, not a value it states
_ENUMERATION = lazy_pattern(r"^\s*\d+(?:\.\d+)*[.)]\s+")


def unnumbered(title: str | None) -> str:
    return _ENUMERATION.sub("", title or "", count=1)


def entry_title(unit: KnowledgeUnit) -> str:
    """What a unit's sentences stand under: a definition's term, else its innermost heading."""
    return unnumbered(unit.title) if unit.chunkType == "definition" and unit.title else unit.heading


def unit_text(unit: KnowledgeUnit, *, headings: bool = False) -> str:
    """A unit's title and text (its source text, else its claim or procedure); with `headings`, the heading
    path it stands under first."""
    body = unit.textBody or unit.claim or unit.procedure
    return " ".join(filter(None, (unit.sectionTitle if headings else None, unit.title, body)))


def unit_context(sentence: Sentence) -> frozenset[str]:
    """Terms the unit states about all its sentences: its term or title, topic, subject, heading path."""
    unit = sentence.unit
    return header_terms(unit.title or "", unit.topic or "", unit.subject or "", unit.sectionTitle or "")


def source_title(unit: KnowledgeUnit) -> frozenset[str]:
    """The terms of the unit's document's file name without its extension ("tar.txt" -> tar): the title
    of a document that has no other. Only evidence drawn from several documents is told apart by it."""
    if unit.sourceType == "turn" or not unit.sourceName:
        return frozenset()
    return header_terms(file_title(unit.sourceName))


def titled_sources(pool: list[Sentence]) -> bool:
    """Whether the evidence comes from more than one titled document."""
    return len({s.unit.sourceId for s in pool if source_title(s.unit)}) > 1


@lru_cache(maxsize=4096)  # every window of a unit asks again; a warm worker sees the same units often
def header_terms(*parts: str) -> frozenset[str]:
    return frozenset(terms(" ".join(parts)))


def key_terms(question_terms: list[str], name_terms: set[str], pool: list[Sentence]) -> set[str]:
    """The terms that make a question specific: numbers, options, codes and an extreme asked for
    ("the highest level") always; names unless most units of the evidence name them (the document's own
    subject: "tar" in tar's manual)."""
    common = common_terms(question_terms, pool)
    return {
        t
        for t in question_terms
        if KEY_SHAPE.search(t) or t in EXTREMES or (t in name_terms and t not in common)
    }


def common_terms(question_terms: list[str], pool: list[Sentence]) -> set[str]:
    """The question's terms most units of the evidence state (COMMON_SHARE of 3 or more), or the title of the
    one document all of it comes from states (its file name: source_title): the documents' own subject ("tar"
    in tar's manual; "heron_mirror" over heron_mirror.py, whatever few retrieved units write it), which says
    nothing about what in it is asked. Over several documents a title tells them apart: no subject."""
    units: dict[str, set[str]] = {}
    for s in pool:
        units.setdefault(s.unit.id, set()).update(s.terms, s.under)
    sources = {s.unit.sourceId: s.unit for s in pool}
    titled = source_title(next(iter(sources.values()))) if len(sources) == 1 else frozenset()
    n = len(units)
    if n < 3:
        return set(question_terms) & titled
    share = {t for t in question_terms if sum(1 for ts in units.values() if t in ts) / n >= COMMON_SHARE}
    return share | (set(question_terms) & titled)
