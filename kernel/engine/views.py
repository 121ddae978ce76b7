"""Knowledge views (docs/ARCHITECTURE.md §4, step 5): what one kb-plugin's retrieve yields for one intent.

A view holds the evidence, the guidance the kb-plugin returned, its resolved intent and whether it judged
the evidence sufficient. A seed tries gs candidates on a view before it asks for the next one
(`stages.next_view`: kb candidates in order until one is sufficient, else the best insufficient).

**The best insufficient view** (`best_insufficient`) is chosen by one measure the kernel computes the same
way for every kb-plugin (their own scores are not comparable), highest first:

1. `coverage`: how much of the question the view's best unit holds — the idf-weighted share of the
   intent's terms found in one unit (its heading, topic and statement), with the shared analyser
   (protocol/analysis.py) and the query-term weights the kb-plugins report (`TermWeights`: a word every
   unit says weighs 0; without weights every term weighs 1). A solver answers from a unit, so a view
   whose best unit says more of what was asked is the better view, however many units it holds.
   Views within COVERAGE_TIE of the best coverage count as tied (a twentieth of the question is noise).
2. `agreement`: how many of the other views' selections the view holds (a unit several kb-plugins
   select is likelier right than one only a single plugin found).
3. the number of units, then the plugin's confidence; a tie keeps the earlier view (plan order).

The kept view's retrieve node says so in the trace (`keptAsBestInsufficient`, `keptBecause`), and every
insufficient view's node carries its `viewMeasure`.

Example (invented): for "How long may a ferry ticket be refunded?" a view of six units about ferries and
timetables loses to a view of three whose first unit reads "Ferry tickets can be refunded up to 48 hours
before departure": that unit holds "refund" and "ticket", the rare terms, and the six hold neither together.
"""

from __future__ import annotations

import hashlib

import msgspec
from mrpvm.protocol.analysis import terms
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit, ResolvedIntent

from ..trace import TraceNode

CONFIDENCE_RANK = {"high": 3, "medium": 2, "low": 1}
COVERAGE_TIE = 0.05  # views whose best units cover the question within this of the best count as tied


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


class View(msgspec.Struct):
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


def question_weights(question: str, views: list[View]) -> dict[str, float]:
    """The weight of each term of the question: the largest the views' kb-plugins report (they weigh
    the same collection), 1.0 for every term when none reports weights."""
    reported: dict[str, float] = {}
    for view in views:
        for term, weight in (view.resolved.term_weights if view.resolved else {}).items():
            reported[term] = max(weight, reported.get(term, 0.0))
    if reported:
        return {t: w for t, w in reported.items() if w > 0}
    return dict.fromkeys(terms(question), 1.0)


def unit_coverage(unit: KnowledgeUnit, weights: dict[str, float]) -> float:
    """The weighted share of the question's terms one unit holds (its heading, topic and statement)."""
    total = sum(weights.values())
    if not total:
        return 0.0
    held = set(terms(" ".join(p for p in (unit.heading, unit.topic, unit.body) if p)))
    return sum(w for t, w in weights.items() if t in held) / total


def view_measure(view: View, views: list[View], weights: dict[str, float]) -> dict[str, float]:
    """(coverage of the view's best unit, agreement with the other views) — see the module docstring."""
    others = [{u.id for u in other.evidence} for other in views if other is not view]
    return {
        "coverage": round(max((unit_coverage(u, weights) for u in view.evidence), default=0.0), 2),
        "agreement": float(sum(u.id in ids for u in view.evidence for ids in others)),
        "units": float(len(view.evidence)),
        "confidence": confidence_rank(view.confidence),
    }


def best_insufficient(
    question: str, views: list[View]
) -> tuple[View | None, str, dict[str, dict[str, float]]]:
    """The best of insufficient views (module docstring), why it was kept, and each view's measure by
    plugin id (for the trace). None when there is no view."""
    if not views:
        return None, "", {}
    weights = question_weights(question, views)
    measures = [view_measure(view, views, weights) for view in views]
    by_plugin = {str(v.plugin_id): m for v, m in zip(views, measures, strict=True)}
    top = max(m["coverage"] for m in measures)
    tied = [i for i, m in enumerate(measures) if m["coverage"] >= top - COVERAGE_TIE]
    if len(tied) == 1:
        best = tied[0]
        rest = [m["coverage"] for i, m in enumerate(measures) if i != best]
        why = f"its best unit covers {top} of the question" + (
            f", the others' {max(rest)} at most" if rest else ""
        )
        return views[best], why, by_plugin
    best = max(tied, key=lambda i: (*_rest(measures[i]), -i))  # a full tie keeps the earlier view
    why = f"{len(tied)} views cover the question alike (best unit {measures[best]['coverage']})"
    lower = [i for i in tied if _rest(measures[i]) != _rest(measures[best])]
    if not lower:
        return views[best], f"{why} and alike otherwise; the first in plan order", by_plugin
    runner = max((measures[i] for i in lower), key=_rest)
    name = next(n for n in ("agreement", "units", "confidence") if measures[best][n] != runner[n])
    why += f"; the most {name} ({measures[best][name]:g} against {runner[name]:g})"
    if len(lower) < len(tied) - 1:
        why += "; the first in plan order of the views alike"
    return views[best], why, by_plugin


def _rest(measure: dict[str, float]) -> tuple[float, float, float]:
    return measure["agreement"], measure["units"], measure["confidence"]
