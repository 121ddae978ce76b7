"""The kb family's request handling: one `Retriever` per plugin, specialised by overriding a few hooks.

    class MyRetriever(Retriever):
        def rescore(self, call, views, profile, pool): ...    # add associative/symbolic evidence
    plugin = Plugin("kb-x", "kb-plugin", MyRetriever("kb-x", SelectionConfig(...)).handlers())

Per intent: goal profile -> candidates from every memory view (inline units, mounted KB) -> plugin
rescoring -> role/act/level boosts -> evidence/guidance split (units that only pose a question or a task,
"Q3: Explain why ...", are never evidence) -> relative cut -> level resolution ->
redundancy -> plugin diversification -> budget -> the paragraph a selected lead-in continues ->
sufficiency. The output is the DS023 retrieve document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.plugins.sdk import Call, InvalidInput, PluginFailure
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import OnSessionEventPayload, OnSourceTextPayload, RetrievePayload
from mrpvm.protocol.variants import spelling_variants

from .candidates import Candidate, Views
from .fields import is_evidence, is_guidance, is_question_like
from .ingest import fallback_units, handed_units, source_summary
from .lead_context import with_lead_context
from .memindex import memory_index
from .output import IntentResult, build_document
from .profile import GoalProfile, bare_intent, build_profile, with_variants
from .selection import (
    NAMED_SOURCE_SEARCH,
    SelectionConfig,
    TagScores,
    annotate,
    goal_boost,
    named_source_terms,
    relative_cut,
    remove_redundant,
    resolve_levels,
    scope_to_named_sources,
    sufficiency,
    unheld_by_named,
)
from .store_files import store_known
from .text_index import ArtifactError

if TYPE_CHECKING:
    from .store import WriteHook

STRATEGY_PURPOSES = ("strategy-guidance", "mixed")
PREFETCH_FLOOR = 0.5  # KB hits under relative_cut x this of the best lexical score are not fetched


def _restates(unit: KnowledgeUnit, intent: str) -> bool:
    """A unit of the current turn that the intent itself states (its premise, "I ran tar -u …"): what the
    user said, not evidence for the answer (a later turn may use it)."""
    if unit.sourceType != "turn" or not unit.claim:
        return False
    return " ".join(unit.claim.lower().split()).rstrip(".!?") in intent


class Retriever:
    """Shared retrieve / onSourceText / onSessionEvent for a kb plugin. Override the hooks, not `resolve`."""

    evidence_label = "bm25"  # how the Evidence line names the scores

    def __init__(self, plugin_id: str, config: SelectionConfig | None = None):
        self.plugin_id = plugin_id
        self.config = config or SelectionConfig()

    # ------------------------------------------------------------------ hooks

    def prepare(self, call: Call, views: Views) -> None:
        """Per-call setup before any intent is resolved (e.g. encode the inline units)."""

    def generate(self, call: Call, views: Views, profile: GoalProfile) -> dict[str, Candidate]:
        """Candidates for one intent: the lexical top of each view. Subclasses may add more."""
        pool: dict[str, Candidate] = {}
        # goal boosts move a score by at most ~2x, so KB hits below a fraction of the cut stay unread
        floor = self.config.relative_cut * min(self.config.cut_factor.values(), default=1.0) * PREFETCH_FLOOR
        for entry, score in views.search(profile.weights, self.config.pool, floor):
            pool[entry.unit.id] = Candidate(entry, score)
        return pool

    def rescore(self, call: Call, views: Views, profile: GoalProfile, pool: dict[str, Candidate]) -> None:
        """Change `score` (and set `assoc`) of candidates, add candidates. Default: lexical score only."""

    def diversify(
        self, call: Call, views: Views, profile: GoalProfile, ranked: list[Candidate], budget: int
    ) -> list[Candidate]:
        """Order the evidence for the budget cut. Default: keep the ranking (redundancy already removed)."""
        return ranked

    def admit(self, c: Candidate) -> bool:
        """Whether a candidate may be evidence at all: it must contain one of the intent's subject terms
        (intent or Context line); a unit matching only criterion or question words is not about it."""
        return bool(c.related)

    def store_hook(self) -> WriteHook | None:
        """Runs inside each KB write transaction (e.g. to maintain a plugin-private cache table)."""
        return None

    def notes(self, views: Views, profile: GoalProfile, result: IntentResult) -> list[str]:
        """Extra retrieval-trace notes for one intent."""
        return []

    # ------------------------------------------------------------------ one intent

    def resolve(
        self, call: Call, views: Views, profile: GoalProfile, phase: str, max_units: int
    ) -> IntentResult:
        cfg = self.config
        # an asked term the collection never holds, spelt as it spells it ("licence": "license")
        variants = spelling_variants(profile.subject, views.df)
        profile = with_variants(profile, variants)
        naming = named_source_terms(views, profile.weights)
        searched = profile
        if naming:
            weights = {t: w * NAMED_SOURCE_SEARCH if t in naming else w for t, w in profile.weights.items()}
            searched = msgspec.structs.replace(profile, weights=weights)
        pool = self.generate(call, views, searched)
        scope_to_named_sources(views, profile.weights, naming, pool.values())
        if views.inline is not None:
            self._add_inline_guidance(views, phase, pool)
        self.rescore(call, views, profile, pool)
        annotate(pool.values(), profile, views)
        tags: TagScores = {}
        for c in pool.values():
            goal_boost(c, profile, views, cfg, tags)
        guidance_only = [c for c in pool.values() if is_guidance(c.unit, phase) and not is_evidence(c.unit)]
        asking = {c.id for c in pool.values() if is_evidence(c.unit) and is_question_like(c.unit)}
        said = " ".join(profile.text.lower().split())
        evidence = [
            c
            for c in pool.values()
            if is_evidence(c.unit) and c.id not in asking and self.admit(c) and not _restates(c.unit, said)
        ]
        evidence.sort(key=lambda c: -c.score)
        budget = max(1, min(cfg.budget.get(profile.breadth, 4), max_units))
        whole = profile.whole and not evidence  # "summarize the document": the source summaries answer it
        if whole:
            selected = [Candidate(e, 1.0) for e in views.aggregates(budget) if is_evidence(e.unit)]
            for c in selected:
                pool.setdefault(c.id, c)
        else:
            ranked = relative_cut(evidence, cfg, profile.breadth)
            ranked = resolve_levels(ranked, profile, views, pool, cfg)
            ranked = remove_redundant(ranked, profile, views, cfg, limit=3 * budget)
            ranked = self.diversify(call, views, profile, ranked, budget)
            selected = with_lead_context(ranked[:budget], views)
        guidance = self._pick_guidance(guidance_only, profile)
        guidance_ids = [c.id for c in guidance] + [c.id for c in selected if is_guidance(c.unit, phase)]
        suff = sufficiency(selected, profile, views, cfg)
        if whole:
            suff.sufficient = suff.roles_ok = bool(selected)
            suff.coverage = 1.0 if selected else 0.0
        if profile.purpose == "strategy-guidance":
            suff.sufficient = bool(guidance_ids)
        top = max((c.lexical for c in pool.values()), default=0.0)
        # a term the documents the question names never hold is unknown within its scope
        unheld = unheld_by_named(views, profile, naming)
        result = IntentResult(
            profile=profile,
            evidence=selected,
            guidance=guidance,
            guidance_ids=guidance_ids,
            considered=len(pool),
            sufficiency=suff,
            top_lexical=top,
            # 0 marks a term no unit of the collection holds (a solver cannot find it in any passage)
            term_weights={
                t: round(views.idf(t), 3) if views.known(t) and t not in unheld else 0.0
                for t in profile.weights
            },
            term_variants=variants,
        )
        trace = [f"skipped {len(asking)} question units"] if asking else []
        if whole:
            trace.append("whole-source question: source summaries")
        result.notes = trace + self.notes(views, profile, result)
        return result

    def _add_inline_guidance(self, views: Views, phase: str, pool: dict[str, Candidate]) -> None:
        """DS023: current-turn output instructions and planning hints survive lexical filtering."""
        inline = views.inline
        assert inline is not None
        added = 0
        for pos, unit in enumerate(inline.units):
            if unit.id in pool or not is_guidance(unit, phase) or is_evidence(unit):
                continue
            pool[unit.id] = Candidate(views.inline_entry(pos), 0.0)
            added += 1
            if added >= self.config.inline_guidance:
                break

    def _pick_guidance(self, guidance_only: list[Candidate], profile: GoalProfile) -> list[Candidate]:
        inline = [c for c in guidance_only if c.origin == "inline"]
        stored = sorted(
            (c for c in guidance_only if c.origin != "inline" and c.match > 0), key=lambda c: -c.score
        )
        limit = self.config.kb_guidance * (3 if profile.purpose in STRATEGY_PURPOSES else 1)
        if stored:
            floor = stored[0].score * self.config.relative_cut
            stored = [c for c in stored if c.score >= floor][:limit]
        inline.sort(key=lambda c: -c.score)
        return inline[: self.config.inline_guidance] + stored

    # ------------------------------------------------------------------ handlers

    def retrieve(self, call: Call) -> CnlDocument:
        payload: RetrievePayload = call.payload
        intents = payload.intents or [bare_intent(call.prompt)]
        units = payload.units or call.context_units()
        views = self.views(call, units, payload.kbId)
        self.prepare(call, views)
        results = [
            self.resolve(
                call,
                views,
                build_profile(intent, payload.purpose),
                payload.phase or "gs-plugin",
                payload.maxUnits,
            )
            for intent in intents
        ]
        return build_document(self.plugin_id, results, self.evidence_label)

    def views(self, call: Call, units: list[KnowledgeUnit], kb_id: str | None = None) -> Views:
        inline = memory_index(call.state, units) if units else None
        raw = call.request.paths.artifacts  # a retrieve never creates the folder (Call.artifacts() would)
        if not raw or not store_known(call.state, raw):
            return Views(inline, None)  # inline units only: the store module is never loaded (store_files.py)
        from pathlib import Path

        from .store import open_store

        try:
            store = open_store(call.state, Path(raw), create=False)
        except ArtifactError as err:
            raise PluginFailure("ARTIFACT_ERROR", str(err)) from None
        return Views(inline, store)

    def on_source_text(self, call: Call) -> CnlDocument:
        payload: OnSourceTextPayload = call.payload
        if not payload.sourceId:
            raise InvalidInput("SCHEMA_VIOLATION", "onSourceText needs payload.sourceId")
        root = call.artifacts()
        if root is None:
            return call.reply("skipped", result=f"{self.plugin_id} got no artifact folder; nothing indexed")
        from .store import open_store

        try:
            store = open_store(call.state, root)
            assert store is not None
            if payload.action == "remove":
                removed = store.remove(payload.sourceId, self.store_hook())
                return call.reply("success", "high", result=f"removed {removed} units of {payload.sourceId}")
            text, units, analysis = handed_units(payload)
            units = units or fallback_units(payload.sourceId, payload.sourceName, text)
            removed, added = store.upsert(
                payload.sourceId,
                payload.sourceName,
                units,
                self.store_hook(),
                summary=source_summary(text, units),
                analysis=analysis if analysis and len(analysis) == len(units) else None,
            )
        except ArtifactError as err:
            raise PluginFailure("ARTIFACT_ERROR", str(err)) from None
        replaced = f" (replaced {removed})" if removed else ""
        return call.reply(
            "success",
            "high",
            result=f"indexed {added} units of {payload.sourceId}{replaced}",
            evidence=f"KB size {store.size}",
        )

    def on_session_event(self, call: Call) -> CnlDocument:
        payload: OnSessionEventPayload = call.payload
        if not payload.units or payload.event in ("session-kus-discarded", "session-deleted"):
            return call.reply(
                "skipped", result=f"{self.plugin_id} keeps no session state for {payload.event}"
            )
        memory_index(call.state, payload.units)
        self.prepare(call, Views(memory_index(call.state, payload.units), None))
        return call.reply("success", "high", result=f"cached {len(payload.units)} {payload.scope} units")

    def handlers(self) -> dict[str, Any]:
        return {
            "retrieve": self.retrieve,
            "onSourceText": self.on_source_text,
            "onSessionEvent": self.on_session_event,
        }
