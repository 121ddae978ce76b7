"""Ingest helpers: the per-source summary artifact (DS023) and a fallback when a source comes without units."""

from __future__ import annotations

import hashlib
import re

from mrpvm.protocol.document import KnowledgeUnit

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
        "textHash": hashlib.blake2b(text.encode(), digest_size=12).hexdigest() if text else None,
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
