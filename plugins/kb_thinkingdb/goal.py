"""Goal-conditioned proof search: find the intent's entities, close the facts around them, pick proofs.

1. Entities: every n-gram of the intent, normalised like entity names (case-insensitive, stemmed), that
   is a known subject or object; longest non-overlapping matches win.
2. Neighbourhood: the facts reachable from those entities (forward along any relation, backward along
   relations some rule reads backwards), breadth-first, at most `max_candidates` stated facts.
3. Closure over the neighbourhood, bounded by `max_depth` and `max_candidates` derived facts.
4. Goals: facts linking two intent entities (or, with one entity, derived facts of a relation the
   intent names). Proofs are ranked by how many intent entities they touch, then by the relation the
   intent names, then by size; alternatives with the same coverage through other entities are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mrpvm.plugins.sdk.text import STOPWORDS, stems, words

from .closure import RULES, BaseFact, Closure, Fact, Proof
from .facts import FactSource

MAX_NGRAM = 8
PROOFS_RETURNED = 3
MAX_GOALS = 50  # goal facts whose proofs are enumerated, shallowest first
PATH_HOPS = 3  # each way: paths of up to 2 * PATH_HOPS stated facts between two entities
SINGLE_HOPS = 2
SINGLE_CAP = 300

# Surface stems that name a relation in a question (generic English, not tied to any document).
RELATION_CUES: dict[str, str] = {
    "use": "uses",
    "util": "uses",
    "provid": "provides",
    "offer": "provides",
    "capabl": "has_capability",
    "capabil": "has_capability",
    "benefit": "has_capability",
    "abl": "has_capability",
    "depend": "depends_on",
    "reli": "depends_on",
    "requir": "depends_on",
    "part": "part_of",
    "belong": "part_of",
    "compon": "part_of",
    "instanc": "instance_of",
    "kind": "instance_of",
    "type": "instance_of",
    "relev": "relevant_for",
    "support": "supports",
    "enabl": "supports",
    "caus": "causes",
    "lead": "causes",
    "trigger": "causes",
}

_BACKWARD = frozenset(rule.r1 for rule in RULES if rule.inverse_first)


@dataclass(slots=True)
class Entity:
    key: str
    start: int
    end: int
    surface: str


@dataclass(slots=True)
class GoalResult:
    entities: list[Entity]
    relations: set[str]
    closure: Closure | None
    proofs: list[Proof] = field(default_factory=list)
    facts_considered: int = 0

    @property
    def unit_ids(self) -> list[str]:
        """The units on the proof paths, in proof order, without repeats."""
        if self.closure is None:
            return []
        seen: dict[str, None] = {}
        for proof in self.proofs:
            for fid in proof.base_ids:
                uid = self.closure.facts[fid].unit_id
                if uid:
                    seen.setdefault(uid, None)
        return list(seen)

    def notes(self) -> str:
        """The proofs as text, one step per line, each proof introduced by its goal."""
        if self.closure is None or not self.proofs:
            return ""
        lines: list[str] = []
        for n, proof in enumerate(self.proofs, 1):
            goal = self.closure.facts[proof.goal]
            lines.append(f"Proof {n}: {goal.subject} {goal.relation} {goal.object}")
            lines.extend(self.closure.proof_lines(proof))
        return "\n".join(lines)


def match_entities(text: str, source: FactSource) -> list[Entity]:
    """Known entities mentioned in the text, longest first, non-overlapping, in text order."""
    raw = words(text)
    toks = [w[:-2] if w.endswith("'s") else w for w in raw]
    toks = [t.replace("'", "") for t in toks]
    stemmed = stems(toks)
    grams: dict[str, list[tuple[int, int]]] = {}
    for i in range(len(stemmed)):
        for j in range(i + 1, min(len(stemmed), i + MAX_NGRAM) + 1):
            if all(t in STOPWORDS for t in toks[i:j]):
                continue
            grams.setdefault(" ".join(stemmed[i:j]), []).append((i, j))
    known = source.known_keys(set(grams)) if grams else set()
    spans = sorted(((j - i, i, j, k) for k in known for i, j in grams[k]), key=lambda s: (-s[0], s[1]))
    taken = [False] * len(stemmed)
    chosen: list[Entity] = []
    for _, i, j, key in spans:
        if any(taken[i:j]):
            continue
        for p in range(i, j):
            taken[p] = True
        chosen.append(Entity(key, i, j, " ".join(raw[i:j])))
    chosen.sort(key=lambda e: e.start)
    return chosen


def relation_cues(text: str) -> set[str]:
    return {RELATION_CUES[s] for s in stems(words(text)) if s in RELATION_CUES}


def _walk(
    source: FactSource, keys: list[str], hops: int, cap: int, forward: bool
) -> tuple[list[BaseFact], dict[str, int]]:
    """Breadth-first over stated facts from the keys; returns the facts met and each entity's distance.

    Forward follows subject → object (and part_of backwards, as the part-to-whole rules read it);
    backward follows object → subject (and part_of forwards).
    """
    dist = dict.fromkeys(keys, 0)
    frontier = list(keys)
    facts: list[BaseFact] = []
    seen: set[tuple[str, str, str, str]] = set()
    for hop in range(1, hops + 1):
        if not frontier or len(facts) >= cap:
            break
        if forward:
            found = source.facts_from(frontier)
            for relation in _BACKWARD:
                found.extend(source.facts_into(frontier, relation))
        else:
            found = source.facts_into(frontier)
            for relation in _BACKWARD:
                found.extend(source.facts_from(frontier, relation))
        nxt: list[str] = []
        for fact in found:
            ident = (fact.unit_id, fact.skey, fact.relation, fact.okey)
            if ident in seen:
                continue
            seen.add(ident)
            facts.append(fact)
            for key in (fact.skey, fact.okey):
                if key not in dist:
                    dist[key] = hop
                    nxt.append(key)
        frontier = nxt
    return facts, dist


def neighbourhood(source: FactSource, keys: list[str], max_facts: int) -> list[BaseFact]:
    """The stated facts that can take part in a derivation about the keys.

    With two or more entities: only facts on a path between them (reachable forward from one entity and
    backward from another), so a dense KB costs little. With one entity: its forward neighbourhood.
    """
    if len(keys) == 1:
        facts, _ = _walk(source, keys, SINGLE_HOPS, SINGLE_CAP, forward=True)
        return facts[:max_facts]
    facts, ahead = _walk(source, keys, PATH_HOPS, max_facts, forward=True)
    _, behind = _walk(source, keys, PATH_HOPS, max_facts, forward=False)
    return [f for f in facts if f.okey in behind and f.skey in ahead][:max_facts]


def prove(
    text: str,
    source: FactSource,
    max_depth: int = 4,
    max_candidates: int = 2000,
    entities: list[Entity] | None = None,
) -> GoalResult:
    """Find proofs connecting what the text asks about."""
    ents = entities if entities is not None else match_entities(text, source)
    cues = relation_cues(text)
    result = GoalResult(ents, cues, None)
    keys = list(dict.fromkeys(e.key for e in ents))
    if not keys:
        return result
    base = neighbourhood(source, keys, max_facts=max_candidates)
    result.facts_considered = len(base)
    closure = Closure(max_depth=max_depth, max_candidates=max_candidates)
    for fact in sorted(base, key=lambda f: f.order):
        closure.add(fact)
    closure.run()
    result.closure = closure
    result.proofs = _select(closure, keys, cues)
    return result


def _select(closure: Closure, keys: list[str], cues: set[str]) -> list[Proof]:
    wanted = set(keys)
    position = {k: i for i, k in enumerate(keys)}
    goals: list[int] = [
        fid
        for fid, f in enumerate(closure.facts)
        if f.skey in wanted and f.okey in wanted and f.skey != f.okey
    ]
    if not goals and cues and len(keys) == 1:
        goals = [
            fid
            for fid, f in enumerate(closure.facts)
            if f.skey in wanted and not f.is_base and f.relation in cues
        ]
    goals.sort(key=lambda fid: (closure.facts[fid].depth, closure.facts[fid].order))
    ranked: list[tuple[tuple, Proof, set[str]]] = []
    for fid in goals[:MAX_GOALS]:
        fact = closure.facts[fid]
        for proof in closure.proofs(fid):
            touched = _entities(closure, proof)
            coverage = len(touched & wanted)
            in_order = position.get(fact.skey, 0) <= position.get(fact.okey, len(keys))
            base = proof.base_ids
            rank = (
                -coverage,
                0 if fact.relation in cues else 1,
                0 if in_order else 1,
                len(base),
                len(proof.steps),
                sum(closure.facts[b].order for b in base),
            )
            ranked.append((rank, proof, touched))
    ranked.sort(key=lambda r: r[0])
    if not ranked:
        return []
    best_rank, best, touched = ranked[0]
    chosen = [best]
    covered = set(touched)
    for rank, proof, ents in ranked[1:]:
        if len(chosen) >= PROOFS_RETURNED:
            break
        if rank[0] != best_rank[0] or not (ents - covered):
            continue
        chosen.append(proof)
        covered |= ents
    return chosen


def _entities(closure: Closure, proof: Proof) -> set[str]:
    out: set[str] = set()
    for fid in proof.base_ids:
        f: Fact = closure.facts[fid]
        out.add(f.skey)
        out.add(f.okey)
    return out
