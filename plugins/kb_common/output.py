"""The retrieve output (protocol/SPEC.md §6.3): `## Resolved Intent N` blocks, then each selected unit once."""

from __future__ import annotations

import msgspec
from mrpvm.protocol.document import (
    CnlDocument,
    KnowledgeUnit,
    PluginResult,
    ResolvedIntent,
    format_term_weights,
    intent_ref,
)
from mrpvm.protocol.variants import format_term_variants

from .candidates import Candidate
from .profile import GoalProfile
from .selection import Sufficiency, levels_used


class IntentResult:
    """What one intent got: selected evidence, guidance, and the numbers behind the verdict."""

    __slots__ = (
        "profile",
        "evidence",
        "guidance",
        "guidance_ids",
        "considered",
        "sufficiency",
        "top_lexical",
        "notes",
        "term_weights",
        "term_variants",
    )

    def __init__(
        self,
        profile: GoalProfile,
        evidence: list[Candidate],
        guidance: list[Candidate],
        guidance_ids: list[str],
        considered: int,
        sufficiency: Sufficiency,
        top_lexical: float,
        notes: list[str] | None = None,
        term_weights: dict[str, float] | None = None,
        term_variants: dict[str, str] | None = None,
    ):
        self.profile = profile
        self.evidence = evidence
        self.guidance = guidance
        self.guidance_ids = guidance_ids
        self.considered = considered
        self.sufficiency = sufficiency
        self.top_lexical = top_lexical
        self.notes = notes or []
        self.term_weights = term_weights or {}  # query term -> its idf over the views searched
        self.term_variants = term_variants or {}  # asked term -> the collection's spelling of it

    def resolved(self) -> ResolvedIntent:
        p, s = self.profile, self.sufficiency
        levels = levels_used(self.evidence + self.guidance)
        trace = [
            f"purpose {p.purpose}",
            f"act {p.act}",
            f"breadth {p.breadth} (prefers {p.level})",
            f"levels {', '.join(levels) or 'none'}",
            f"considered {self.considered}",
            f"selected {len(self.evidence)}",
            f"guidance {len(self.guidance_ids)}",
            f"coverage {s.coverage:.2f}",
            f"roles {'ok' if s.roles_ok else 'missing'}",
            *self.notes,
        ]
        return ResolvedIntent(
            index=p.index,
            sufficient=s.sufficient,
            purpose=p.purpose,
            kuLevelsUsed=levels,
            totalKUsConsidered=self.considered,
            selected=[c.id for c in self.evidence],
            guidance=list(dict.fromkeys(self.guidance_ids)),
            notes="; ".join(trace),
            termWeights=format_term_weights(self.term_weights),
            termVariants=format_term_variants(self.term_variants),
        )


def _confidence(results: list[IntentResult]) -> str:
    good = [r.sufficiency.coverage for r in results if r.sufficiency.sufficient]
    if not good:
        return "low"
    return "high" if min(good) >= 0.8 and len(good) == len(results) else "medium"


def build_document(plugin_id: str, results: list[IntentResult], label: str = "bm25") -> CnlDocument:
    """Resolved intents in order; every selected unit once, best score, ResolvedFor naming each intent."""
    chosen: dict[str, tuple[KnowledgeUnit, float, list[str]]] = {}
    for r in results:
        ref = intent_ref(r.profile.index)
        for c in (*r.evidence, *r.guidance):
            prev = chosen.get(c.id)
            score = max(0.0, c.score)
            if prev is None:
                chosen[c.id] = (c.unit, score, [ref])
            else:
                refs = prev[2] if ref in prev[2] else [*prev[2], ref]
                chosen[c.id] = (prev[0], max(prev[1], score), refs)
    units = [
        msgspec.structs.replace(unit, score=round(score, 4), resolvedFor=refs)
        for unit, score, refs in chosen.values()
    ]
    sufficient = sum(r.sufficiency.sufficient for r in results)
    roles = sorted({c.unit.role for r in results for c in r.evidence})
    top = max((r.top_lexical for r in results), default=0.0)
    status = "success" if sufficient else "insufficient"
    block = PluginResult(
        status=status,
        plugin=plugin_id,
        confidence=_confidence(results),
        result=f"{len(units)} KUs selected for {len(results)} intents ({sufficient} sufficient)",
        evidence=f"{label} top score {top:.2f}; roles {', '.join(roles) or 'none'}",
    )
    return CnlDocument(result=block, resolved=[r.resolved() for r in results], units=units)
