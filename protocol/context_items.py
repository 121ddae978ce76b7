"""A knowledge unit flattened into a context item (SPEC.md §5: a request's `context`, DS016) and read back:
the readable `Role/Topic/Claim` text every plugin can use, and the unit a bare DS016 request's items
stand for."""

from __future__ import annotations

from .document import KnowledgeUnit
from .envelope import ContextItem
from .vocab import ROLES


def unit_text(unit: KnowledgeUnit) -> str:
    """The readable `Role/Topic/Claim` text of a context item."""
    body = f"Claim: {unit.claim}" if unit.claim is not None else f"Procedure: {unit.procedure or ''}"
    return f"Role: {unit.role}\nTopic: {unit.topic}\n{body}"


def unit_to_context_item(unit: KnowledgeUnit) -> ContextItem:
    return ContextItem(title=unit.id, sourceLink=unit.sourceName or unit.sourceId, text=unit_text(unit))


def context_item_to_unit(item: ContextItem, index: int = 0) -> KnowledgeUnit:
    """Read a flattened context item back as a unit (for bare DS016 requests)."""
    fields: dict[str, str] = {}
    loose: list[str] = []
    last = ""
    for line in item.text.split("\n"):
        name, sep, value = line.partition(":")
        if sep and name.strip() in ("Role", "Topic", "Claim", "Procedure", "Condition", "Title"):
            last = name.strip().lower()
            fields[last] = value.strip()
        elif last in ("claim", "procedure"):  # a multi-line body (procedure steps) continues
            fields[last] = f"{fields[last]}\n{line.strip()}".strip("\n")
        elif line.strip():
            loose.append(line.strip())
    role = fields.get("role", "Description")
    if role not in ROLES:
        role = "Description"
    body = fields.get("claim") or fields.get("procedure") or " ".join(loose) or item.title
    source = item.sourceLink or "context"
    ident = item.title or f"context::chunk-000::unit-{index:03d}"
    is_proc = role == "Procedure"
    return KnowledgeUnit(
        id=ident,
        sourceId=source,
        chunkId=f"{source}::chunk-000",
        kuType="atomic",
        role=role,
        topic=fields.get("topic") or item.title or body[:60],
        claim=None if is_proc else body,
        procedure=body if is_proc else None,
        title=fields.get("title"),
        condition=fields.get("condition"),
        sourceName=item.sourceLink or None,
    )
