"""Ingest helpers: the units a request hands over (inline or as a units file), the per-source summary
artifact (DS023) and a fallback when a source comes without units."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk import InvalidInput
from mrpvm.protocol.digests import blake2b
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import OnSourceTextPayload
from mrpvm.protocol.handoff import ANALYSER, HandoffError, UnitAnalysis, read_handoff

_PARAGRAPH = re.compile(r"\n\s*\n")
MAX_FALLBACK_CHARS = 800


def source_summary(text: str, units: list[KnowledgeUnit]) -> dict:
    """Source hash, unit counts by level, role coverage and symbolic-fact count."""
    levels: dict[str, int] = {}
    roles: dict[str, int] = {}
    for u in units:
        levels[u.kuType] = levels.get(u.kuType, 0) + 1
        roles[u.role] = roles.get(u.role, 0) + 1
    return {
        "textHash": blake2b(text.encode(), digest_size=12).hexdigest() if text else None,
        "units": len(units),
        "levels": levels,
        "roles": roles,
        "facts": sum(1 for u in units if u.relation),
    }


def fallback_units(source_id: str, source_name: str, text: str) -> list[KnowledgeUnit]:
    """One Description unit per paragraph (long paragraphs cut) when the kernel sends text but no KU tree."""
    units: list[KnowledgeUnit] = []
    pos = 0
    for piece in _PARAGRAPH.split(text):
        start = text.find(piece, pos)
        pos = start + len(piece)
        body = piece.strip()
        offset = 0
        while body[offset:]:
            chunk = body[offset : offset + MAX_FALLBACK_CHARS]
            if offset + MAX_FALLBACK_CHARS < len(body) and " " in chunk:
                chunk = chunk[: chunk.rfind(" ")]
            n = len(units)
            units.append(
                KnowledgeUnit(
                    id=f"{source_id}::chunk-{n:03d}::unit-000",
                    sourceId=source_id,
                    chunkId=f"{source_id}::chunk-{n:03d}",
                    kuType="atomic",
                    role="Description",
                    topic=" ".join(chunk.split()[:8]),
                    claim=chunk.strip(),
                    sourceName=source_name or None,
                )
            )
            offset += len(chunk)
            while offset < len(body) and body[offset].isspace():
                offset += 1
    return units


def handed_units(payload: OnSourceTextPayload) -> tuple[str, list[KnowledgeUnit], list[UnitAnalysis] | None]:
    """(text, units, the kernel's analysis of them or None) of an upsert: inline, or read from the
    `unitsFile` the kernel bound for this call (protocol/handoff.py). A missing or corrupt file is an
    INVALID_HANDOFF error (exit 2); an analysis by another analyser version is ignored (re-analysed)."""
    if not payload.unitsFile:
        return payload.text, payload.units, None
    try:
        doc = read_handoff(payload.unitsFile, payload.sourceId)
    except HandoffError as err:
        raise InvalidInput("INVALID_HANDOFF", str(err)) from None
    return doc.text, doc.units, doc.analysis if doc.analyser == ANALYSER else None
