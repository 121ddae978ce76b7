"""Proof chains: read kb-thinkingdb's proof notes, or link triple-bearing units into a chain, and render it.

Proof notes (the Resolved Intent's Notes) hold one step per line:

    Proof 1: AchillesIDE relevant_for secure execution
    AchillesIDE uses Ploinky [unit id]
    ⇒ AchillesIDE has_capability sandboxing (uses∘provides)

A chain is rendered as the units' own claim sentences in proof order, then a concluding sentence.
"""

from __future__ import annotations

from collections import deque

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import sentence_spans, stems, words
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.vocab import RELATIONS

SURFACE: dict[str, str] = {
    "uses": "uses",
    "provides": "provides",
    "has_capability": "has the capability of",
    "depends_on": "depends on",
    "part_of": "is part of",
    "instance_of": "is a kind of",
    "relevant_for": "is relevant for",
    "supports": "supports",
    "mentions": "mentions",
    "about": "is about",
    "causes": "causes",
}

_REL = "|".join(sorted(RELATIONS, key=len, reverse=True))
_STATED = lazy_pattern(rf"^(?P<s>.+?) (?P<r>{_REL}) (?P<o>.+?) \[(?P<id>[^\]]+)\]$")
_DERIVED = lazy_pattern(rf"^⇒ (?P<s>.+?) (?P<r>{_REL}) (?P<o>.+?) \((?P<rule>[^)]*)\)$")


class Step(msgspec.Struct):
    subject: str
    relation: str
    object: str
    unit_id: str = ""  # set for stated facts
    rule: str = ""  # set for derived facts


class Chain(msgspec.Struct):
    steps: list[Step] = msgspec.field(default_factory=list)

    @property
    def unit_ids(self) -> list[str]:
        return list(dict.fromkeys(s.unit_id for s in self.steps if s.unit_id))

    @property
    def conclusion(self) -> Step | None:
        derived = [s for s in self.steps if s.rule]
        return derived[-1] if derived else None


def parse_notes(notes: str) -> list[Chain]:
    """The proofs written in a Resolved Intent's notes (lines that are not proof steps are ignored)."""
    chains: list[Chain] = []
    current: Chain | None = None
    for raw in notes.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if line.lower().startswith("proof"):
            current = Chain()
            chains.append(current)
            continue
        m = _STATED.match(line)
        d = None if m else _DERIVED.match(line)
        if not (m or d):
            continue
        if current is None:
            current = Chain()
            chains.append(current)
        if m:
            current.steps.append(Step(m["s"], m["r"], m["o"], unit_id=m["id"].strip()))
        else:
            assert d is not None
            current.steps.append(Step(d["s"], d["r"], d["o"], rule=d["rule"]))
    return [c for c in chains if c.steps]


def statement(step: Step) -> str:
    return f"{step.subject} {SURFACE.get(step.relation, step.relation.replace('_', ' '))} {step.object}"


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def render_chain(chain: Chain, units: dict[str, KnowledgeUnit]) -> tuple[str, list[str]]:
    """The chain as sentences: each stated step's own claim, then 'Therefore, <conclusion>.'"""
    parts: list[str] = []
    used: list[str] = []
    for step in chain.steps:
        if not step.unit_id or step.unit_id in used:
            continue
        unit = units.get(step.unit_id)
        claim = unit.body if unit is not None else ""
        parts.append(_sentence(_claim_sentence(claim, step) if claim else statement(step)))
        used.append(step.unit_id)
    end = chain.conclusion
    if end is not None:
        parts.append("Therefore, " + _sentence(statement(end)))
    return " ".join(parts), used


def _claim_sentence(claim: str, step: Step) -> str:
    """The sentence of a claim that states the step (a unit may hold more than one sentence)."""
    spans = [claim[a:b] for a, b in sentence_spans(claim)]
    if len(spans) <= 1:
        return claim
    want = set(stems(words(f"{step.subject} {step.object}")))
    best = max(spans, key=lambda s: len(want & set(stems(words(s)))))
    return best


_LEADING = frozenset(["the", "a", "an"])


def _key(name: str) -> str:
    """An entity's match key: stemmed words without a leading article."""
    toks = words(name)
    while toks and toks[0] in _LEADING:
        toks = toks[1:]
    return " ".join(stems(toks))


def triple_chain(units: list[KnowledgeUnit], question: str) -> Chain | None:
    """With no proof notes: the shortest path of triple-bearing units from one question entity to another."""
    triples = [u for u in units if u.subject and u.relation and u.object]
    if len(triples) < 2:
        return None
    q = " " + " ".join(stems(words(question))) + " "

    def mentioned(k: str) -> bool:
        return bool(k) and f" {k} " in q

    graph: dict[str, list[KnowledgeUnit]] = {}
    for u in triples:
        graph.setdefault(_key(u.subject or ""), []).append(u)
    starts = [k for k in graph if mentioned(k)]
    targets = {k for k in (_key(u.object or "") for u in triples) if mentioned(k)}
    best: list[KnowledgeUnit] | None = None
    for start in starts:
        path = _bfs(graph, start, targets - {start})
        if path and len(path) >= 2 and (best is None or len(path) < len(best)):
            best = path
    if best is None:
        return None
    return Chain([Step(u.subject or "", u.relation or "", u.object or "", unit_id=u.id) for u in best])


def _bfs(graph: dict[str, list[KnowledgeUnit]], start: str, targets: set[str]) -> list[KnowledgeUnit] | None:
    queue: deque[tuple[str, list[KnowledgeUnit]]] = deque([(start, [])])
    seen = {start}
    while queue:
        node, path = queue.popleft()
        if len(path) >= 6:
            continue
        for u in graph.get(node, ()):
            nxt = _key(u.object or "")
            if nxt in targets:
                return [*path, u]
            if nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, [*path, u]))
    return None
