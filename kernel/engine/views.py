"""Knowledge views (docs/ARCHITECTURE.md §4, step 5): what one kb-plugin's retrieve yields for one intent.

A view holds the evidence, the guidance the kb-plugin returned, its resolved intent and whether it judged
the evidence sufficient. A seed tries gs candidates on a view before it asks for the next one
(`stages.next_view`: kb candidates in order until one is sufficient, else the best insufficient).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from mrpvm.protocol.document import CnlDocument, KnowledgeUnit, ResolvedIntent

from ..trace import TraceNode

CONFIDENCE_RANK = {"high": 3, "medium": 2, "low": 1}


def units_key(units: list[KnowledgeUnit]) -> str:
    """A short key for a set of units (order-free): what a view's evidence is, for memo keys."""
    digest = hashlib.blake2s("\n".join(sorted(u.id for u in units)).encode(), digest_size=8)
    return digest.hexdigest()


def confidence_rank(value: str | None) -> float:
    if not value:
        return 0.0
    if value in CONFIDENCE_RANK:
        return float(CONFIDENCE_RANK[value])
    try:
        return 3.0 * float(value)
    except ValueError:
        return 0.0


@dataclass(slots=True)
class View:
    """A knowledge view: what one kb-plugin (the first sufficient, or the best insufficient) selected."""

    plugin_id: str | None
    sufficient: bool
    evidence: list[KnowledgeUnit]
    guidance: list[KnowledgeUnit]
    resolved: ResolvedIntent | None
    node: TraceNode | None
    confidence: str | None = None

    @property
    def key(self) -> str:
        return units_key(self.evidence)


def view_from(plugin_id: str, status: str, doc: CnlDocument | None, node: TraceNode | None) -> View | None:
    """The view a retrieve reply (`doc` with `status`) yields, or None when it failed."""
    if doc is None or status not in ("success", "insufficient"):
        return None
    resolved = doc.resolved[0] if doc.resolved else None
    by_id = {u.id: u for u in doc.units}
    if resolved is not None and resolved.selected:
        evidence = [by_id[i] for i in resolved.selected if i in by_id]
    else:
        guidance_ids = set(resolved.guidance) if resolved else set()
        evidence = [u for u in doc.units if u.id not in guidance_ids]
    guidance = [by_id[i] for i in (resolved.guidance if resolved else []) if i in by_id]
    sufficient = status == "success" and (resolved.sufficient if resolved is not None else bool(evidence))
    return View(
        plugin_id=plugin_id,
        sufficient=sufficient,
        evidence=evidence,
        guidance=guidance,
        resolved=resolved,
        node=node,
        confidence=doc.result.confidence,
    )


def empty_view() -> View:
    return View(plugin_id=None, sufficient=False, evidence=[], guidance=[], resolved=None, node=None)
