"""Bounded symbolic closure (DS025): facts, composition rules, derivation with provenance, proof extraction.

A fact is a triple (subject, relation, object) over normalised entity keys. Base facts come from
Knowledge Units that carry Subject/Relation/Object; derived facts record every way they were derived
(rule + two premises, capped). Derivation is semi-naive and level by level: a fact's depth is one more
than its deepest premise, nothing deeper than `max_depth` is derived, and derivation stops once
`max_candidates` derived facts exist. Facts are a set, so cycles in the data terminate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mrpvm.plugins.sdk.text import stems, words

# Words dropped at the start of an entity phrase so "the sandbox" and "sandbox" are one entity.
_LEADING = frozenset(
    [
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "its",
        "their",
        "our",
        "his",
        "her",
        "my",
        "your",
        "some",
        "any",
    ]
)


def entity_tokens(text: str) -> list[str]:
    """The stemmed word sequence that identifies an entity: case-insensitive, stem-tolerant."""
    toks = [w[:-2] if w.endswith("'s") else w for w in words(text)]
    toks = [t.replace("'", "") for t in toks if t]
    while toks and toks[0] in _LEADING:
        toks = toks[1:]
    return stems(toks)


def entity_key(text: str) -> str:
    toks = entity_tokens(text)
    return " ".join(toks) if toks else text.strip().lower()


@dataclass(frozen=True, slots=True)
class Rule:
    """premise1 (x r1 y) and premise2 (y r2 z) give (x out z); with `inverse_first`, premise1 is (y r1 x)."""

    r1: str
    r2: str
    out: str
    inverse_first: bool = False

    @property
    def name(self) -> str:
        first = f"{self.r1}⁻¹" if self.inverse_first else self.r1
        return f"{first}∘{self.r2}"


# The rule set. Each is a composition a careful reader would accept from the two stated facts.
RULES: tuple[Rule, ...] = (
    Rule("uses", "provides", "has_capability"),
    Rule("uses", "has_capability", "has_capability"),
    Rule("depends_on", "depends_on", "depends_on"),
    Rule("depends_on", "provides", "has_capability"),
    Rule("depends_on", "has_capability", "has_capability"),
    Rule("part_of", "part_of", "part_of"),
    Rule("part_of", "provides", "has_capability", inverse_first=True),  # a whole has what its parts provide
    Rule("part_of", "has_capability", "has_capability", inverse_first=True),
    Rule("instance_of", "instance_of", "instance_of"),
    Rule("instance_of", "provides", "has_capability"),
    Rule("instance_of", "has_capability", "has_capability"),
    Rule("instance_of", "depends_on", "depends_on"),
    Rule("instance_of", "relevant_for", "relevant_for"),
    Rule("provides", "relevant_for", "relevant_for"),
    Rule("has_capability", "relevant_for", "relevant_for"),
    Rule("provides", "supports", "supports"),
    Rule("has_capability", "supports", "supports"),
    Rule("supports", "supports", "supports"),
    Rule("causes", "causes", "causes"),
)

MAX_DERIVATIONS = 4  # alternative derivations kept per fact
MAX_PROOFS = 4  # proofs enumerated per fact during extraction


@dataclass(slots=True)
class BaseFact:
    """A stated triple and where it was stated."""

    subject: str
    relation: str
    object: str
    unit_id: str = ""
    text: str = ""
    confidence: float = 1.0
    order: int = 0  # position in the source, for tie-breaking proofs toward the reading order
    skey: str = ""  # entity keys, when the fact source already computed them
    okey: str = ""


@dataclass(slots=True)
class Fact:
    subject: str
    relation: str
    object: str
    skey: str
    okey: str
    depth: int
    confidence: float
    unit_id: str = ""
    text: str = ""
    order: int = 0
    derivations: list[tuple[Rule, int, int]] = field(default_factory=list)

    @property
    def is_base(self) -> bool:
        return self.depth == 0

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.skey, self.relation, self.okey)


@dataclass(frozen=True, slots=True)
class Proof:
    """A proof of one fact: its steps in reading order (premises before conclusions)."""

    goal: int
    steps: tuple[tuple[int, Rule | None], ...]  # (fact id, rule) — rule None for a stated fact

    @property
    def base_ids(self) -> list[int]:
        return [fid for fid, rule in self.steps if rule is None]


class Closure:
    """A fact table with bounded forward chaining and proof extraction."""

    def __init__(self, max_depth: int = 4, max_candidates: int = 2000, rules: tuple[Rule, ...] = RULES):
        self.max_depth = max_depth
        self.max_candidates = max_candidates
        self.rules = rules
        self.rules_as_first: dict[str, list[Rule]] = {}
        self.rules_as_second: dict[str, list[Rule]] = {}
        for rule in rules:
            self.rules_as_first.setdefault(rule.r1, []).append(rule)
            self.rules_as_second.setdefault(rule.r2, []).append(rule)
        self.facts: list[Fact] = []
        self.index: dict[tuple[str, str, str], int] = {}
        self.by_subject: dict[tuple[str, str], list[int]] = {}  # (relation, skey) -> ids
        self.by_object: dict[tuple[str, str], list[int]] = {}  # (relation, okey) -> ids
        self.derived = 0
        self.truncated = False
        self.depth_reached = 0

    # ------------------------------------------------------------------ facts

    def add(self, base: BaseFact) -> int | None:
        """Add a stated fact; returns its id (None for a self-loop). A repeated triple keeps its first statement."""
        skey = base.skey or entity_key(base.subject)
        okey = base.okey or entity_key(base.object)
        if skey == okey:
            return None
        key = (skey, base.relation, okey)
        existing = self.index.get(key)
        if existing is not None:
            return existing
        fact = Fact(
            base.subject.strip(),
            base.relation,
            base.object.strip(),
            skey,
            okey,
            0,
            base.confidence,
            base.unit_id,
            base.text,
            base.order,
        )
        return self._insert(fact)

    def _insert(self, fact: Fact) -> int:
        fid = len(self.facts)
        self.facts.append(fact)
        self.index[fact.key] = fid
        self.by_subject.setdefault((fact.relation, fact.skey), []).append(fid)
        self.by_object.setdefault((fact.relation, fact.okey), []).append(fid)
        return fid

    # ------------------------------------------------------------------ derivation

    def run(self) -> Closure:
        """Derive level by level up to max_depth, stopping at max_candidates derived facts."""
        frontier = [fid for fid, f in enumerate(self.facts) if f.depth == 0]
        for level in range(1, self.max_depth + 1):
            if not frontier or self.truncated:
                break
            produced: list[int] = []
            for fid in frontier:
                relation = self.facts[fid].relation
                for rule in self.rules_as_first.get(relation, ()):
                    self._join_first(fid, rule, level, produced)
                for rule in self.rules_as_second.get(relation, ()):
                    self._join_second(fid, rule, level, produced)
                if self.truncated:
                    break
            if produced:
                self.depth_reached = level
            frontier = produced
        return self

    def _join_first(self, fid: int, rule: Rule, level: int, produced: list[int]) -> None:
        """Fact `fid` (from the last level) as premise 1, with any premise 2 older than this level."""
        f = self.facts[fid]
        x, y = (f.okey, f.skey) if rule.inverse_first else (f.skey, f.okey)
        for gid in self.by_subject.get((rule.r2, y), ()):
            g = self.facts[gid]
            if g.depth < level:
                self._derive(rule, fid, gid, x, g.okey, f, g, level, produced)

    def _join_second(self, fid: int, rule: Rule, level: int, produced: list[int]) -> None:
        """Fact `fid` as premise 2; premise 1 strictly older, so a pair of two last-level facts is joined once."""
        f = self.facts[fid]
        bucket = self.by_subject if rule.inverse_first else self.by_object
        for gid in bucket.get((rule.r1, f.skey), ()):
            g = self.facts[gid]
            if g.depth < level - 1:
                x = g.okey if rule.inverse_first else g.skey
                self._derive(rule, gid, fid, x, f.okey, g, f, level, produced)

    def _derive(
        self,
        rule: Rule,
        p1: int,
        p2: int,
        xkey: str,
        zkey: str,
        f1: Fact,
        f2: Fact,
        level: int,
        produced: list[int],
    ) -> None:
        if xkey == zkey:
            return
        key = (xkey, rule.out, zkey)
        existing = self.index.get(key)
        if existing is not None:
            fact = self.facts[existing]
            new_way = (rule, p1, p2) not in fact.derivations and existing not in (p1, p2)
            if new_way and not fact.is_base and len(fact.derivations) < MAX_DERIVATIONS:
                fact.derivations.append((rule, p1, p2))
            return
        if self.derived >= self.max_candidates:
            self.truncated = True
            return
        x_name = f1.object if rule.inverse_first else f1.subject
        fact = Fact(
            x_name,
            rule.out,
            f2.object,
            xkey,
            zkey,
            level,
            round(f1.confidence * f2.confidence, 4),
            order=min(f1.order, f2.order),
            derivations=[(rule, p1, p2)],
        )
        produced.append(self._insert(fact))
        self.derived += 1

    # ------------------------------------------------------------------ queries

    def find(self, subject: str, relation: str, obj: str) -> Fact | None:
        fid = self.index.get((entity_key(subject), relation, entity_key(obj)))
        return None if fid is None else self.facts[fid]

    def fact_id(self, subject: str, relation: str, obj: str) -> int | None:
        return self.index.get((entity_key(subject), relation, entity_key(obj)))

    def proofs(self, fid: int, limit: int = MAX_PROOFS) -> list[Proof]:
        """Up to `limit` proofs of a fact, smallest first (fewest stated facts, then earliest in the text)."""
        found = self._proofs(fid, self.max_depth, frozenset())
        found.sort(key=lambda steps: self._proof_rank(steps))
        return [Proof(fid, steps) for steps in found[:limit]]

    def _proof_rank(self, steps: tuple[tuple[int, Rule | None], ...]) -> tuple[int, int, int]:
        base = [fid for fid, rule in steps if rule is None]
        return (len(base), len(steps), sum(self.facts[b].order for b in base))

    def _proofs(
        self, fid: int, budget: int, visiting: frozenset[int]
    ) -> list[tuple[tuple[int, Rule | None], ...]]:
        fact = self.facts[fid]
        if fact.is_base:
            return [((fid, None),)]
        if budget <= 0:
            return []
        inner = visiting | {fid}
        out: list[tuple[tuple[int, Rule | None], ...]] = []
        for rule, p1, p2 in fact.derivations:
            if p1 in inner or p2 in inner:
                continue
            left = self._proofs(p1, budget - 1, inner)
            if not left:
                continue
            right = self._proofs(p2, budget - 1, inner)
            for a in left:
                for b in right:
                    steps = _merge(a, b) + ((fid, rule),)
                    out.append(steps)
        out.sort(key=self._proof_rank)
        return out[:MAX_PROOFS]

    def proof_lines(self, proof: Proof) -> list[str]:
        """The proof as text, one step per line: stated facts with their unit id, then each conclusion."""
        lines = []
        for fid, rule in proof.steps:
            f = self.facts[fid]
            if rule is None:
                lines.append(f"{f.subject} {f.relation} {f.object} [{f.unit_id}]")
            else:
                lines.append(f"⇒ {f.subject} {f.relation} {f.object} ({rule.name})")
        return lines


def _merge(a: tuple, b: tuple) -> tuple:
    """Concatenate two step lists, dropping steps of `b` already proved in `a` (shared premises)."""
    seen = {fid for fid, _ in a}
    return a + tuple(step for step in b if step[0] not in seen)
