"""kb-thinkingdb: lexical retrieval plus bounded symbolic closure (DS025).

Lexical retrieval, the persistent store, level selection and the output come from plugins/kb_common.
This plugin adds a goal-conditioned proof search (goal.py over closure.py): facts from every unit with
Subject/Relation/Object — inline (current-turn and session) units and the mounted KB's fact table —
closed under composition rules up to `MAX_DEPTH` levels and `MAX_CANDIDATES` derived facts. The units on
the chosen proof paths lead the selection, in proof order; the proofs go in the Resolved Intent's Notes,
one step per line; lexical evidence fills the rest of the budget. With no proof the plugin is lexical.
"""

from __future__ import annotations

from mrpvm.plugins.kb_common import Candidate, GoalProfile, IntentResult, Retriever, SelectionConfig, Views
from mrpvm.plugins.kb_common.selection import ancestors
from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.protocol.digests import blake2b
from mrpvm.protocol.document import KnowledgeUnit

from .facts import ChainedFacts, FactSource, MemoryFacts, SqliteFacts, write_facts
from .goal import GoalResult, prove

PLUGIN_ID = "kb-thinkingdb"
MAX_DEPTH = 4
MAX_CANDIDATES = 2000
_FACTS_CACHE = "kb_thinkingdb.memfacts"

CONFIG = SelectionConfig(
    budget={"specific": 6, "moderate": 8, "broad": 8},
    relative_cut=0.4,
    pool=40,
)


def _memory_facts(state: dict, units: list[KnowledgeUnit]) -> MemoryFacts:
    """Facts of the inline units, cached by their ids and hashes (a session's calls repeat them)."""
    digest = blake2b(digest_size=16)
    for u in units:
        digest.update(u.id.encode())
        digest.update((u.subject or "").encode())
        digest.update((u.relation or "").encode())
        digest.update((u.object or "").encode())
    key = digest.hexdigest()
    cache: dict[str, MemoryFacts] = state.setdefault(_FACTS_CACHE, {})
    found = cache.get(key)
    if found is None:
        if len(cache) >= 8:
            cache.pop(next(iter(cache)))
        found = cache[key] = MemoryFacts(units)
    return found


class ThinkingRetriever(Retriever):
    evidence_label = "bm25+closure"

    def __init__(self) -> None:
        super().__init__(PLUGIN_ID, CONFIG)
        self.facts: FactSource | None = None
        self.goals: dict[int, GoalResult] = {}

    def store_hook(self):
        return write_facts

    def prepare(self, call: Call, views: Views) -> None:
        sources: list[FactSource] = []
        if views.inline is not None:
            sources.append(_memory_facts(call.state, views.inline.units))
        if views.store is not None:
            sources.append(SqliteFacts(views.store.db))
        self.facts = ChainedFacts(sources)
        self.goals = {}

    def rescore(self, call: Call, views: Views, profile: GoalProfile, pool: dict[str, Candidate]) -> None:
        if self.facts is None:
            return
        goal = prove(profile.text, self.facts, MAX_DEPTH, MAX_CANDIDATES)
        self.goals[profile.index] = goal
        ids = goal.unit_ids
        if not ids:
            return
        entries = views.lookup(ids)
        top = max((c.score for c in pool.values()), default=1.0) or 1.0
        for rank, uid in enumerate(ids):
            entry = entries.get(uid)
            if entry is None:
                continue
            cand = pool.get(uid) or Candidate(entry)
            cand.assoc = 1.0
            cand.score = max(cand.score, top) * (1.0 + 0.01 * (len(ids) - rank))
            cand.why.append("on proof path")
            pool[uid] = cand

    def resolve(
        self, call: Call, views: Views, profile: GoalProfile, phase: str, max_units: int
    ) -> IntentResult:
        """The family's resolution; a proof linking the intent's entities also counts as sufficient evidence."""
        result = super().resolve(call, views, profile, phase, max_units)
        goal = self.goals.get(profile.index)
        chosen = {c.id for c in result.evidence}
        if goal and goal.proofs and not result.sufficiency.sufficient and set(goal.unit_ids) <= chosen:
            result.sufficiency.sufficient = True
            result.notes.insert(0, "sufficient: a proof links the intent's entities")
        return result

    def admit(self, c: Candidate) -> bool:
        return c.match > 0 or c.assoc > 0

    def diversify(
        self, call: Call, views: Views, profile: GoalProfile, ranked: list[Candidate], budget: int
    ) -> list[Candidate]:
        """Proof units first, in proof order (re-added if level selection merged them away), then the rest."""
        goal = self.goals.get(profile.index)
        ids = goal.unit_ids if goal else []
        if not ids:
            return ranked
        have = {c.id: c for c in ranked}
        missing = [i for i in ids if i not in have]
        entries = views.lookup(missing) if missing else {}
        lead: list[Candidate] = []
        for uid in ids:
            cand = have.get(uid)
            if cand is None and uid in entries:
                cand = Candidate(entries[uid], 0.0)
                cand.assoc, cand.score = 1.0, ranked[0].score if ranked else 1.0
                cand.why.append("on proof path")
            if cand is not None:
                lead.append(cand)
        lead_ids = {c.id for c in lead}
        covering = ancestors(list(lead_ids), views)  # a section holding the proof units repeats them
        rest = [c for c in ranked if c.id not in lead_ids and c.id not in covering]
        return lead + rest

    def notes(self, views: Views, profile: GoalProfile, result: IntentResult) -> list[str]:
        goal = self.goals.get(profile.index)
        if goal is None:
            return []
        closure = goal.closure
        ents = ", ".join(e.surface for e in goal.entities) or "none"
        if closure is None:
            return [f"closure: entities {ents}; no proof"]
        state = f"derived {closure.derived} (depth {closure.depth_reached}/{closure.max_depth})"
        if closure.truncated:
            state += f", stopped at maxCandidates {closure.max_candidates}"
        summary = (
            f"closure: entities {ents}; facts {goal.facts_considered}; {state}; proofs {len(goal.proofs)}"
        )
        proofs = goal.notes()
        return [summary + ("\n" + proofs if proofs else "")]


retriever = ThinkingRetriever()
plugin = Plugin(PLUGIN_ID, "kb-plugin", retriever.handlers())

if __name__ == "__main__":
    plugin.main()
