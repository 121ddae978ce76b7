"""Goal-conditioned scoring and selection over candidates (DS023 steps 4–9).

Pure functions of (candidates, goal profile, memory views, config): role and level boosts, the relative
score cut, abstraction-level resolution (extract children of a unit that is too large or too coarse,
expand to a parent when broader context is wanted), redundancy removal, and the sufficiency check.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from mrpvm.plugins.sdk.answer_shapes import SHAPED_TYPES, mentions_type

from .candidates import Candidate, Entry, Views
from .fields import FIELD_WEIGHTS, LEVELS, analyse, body_text, is_evidence, is_question_like, own_terms
from .profile import GoalProfile
from .scoring import tag_score


class SelectionConfig(msgspec.Struct, kw_only=True):
    """The knobs of one plugin's selection. Budgets are evidence units per intent, by breadth."""

    budget: dict[str, int] = msgspec.field(default_factory=lambda: {"specific": 3, "moderate": 4, "broad": 5})
    relative_cut: float = 0.4  # keep evidence scoring at least this fraction of the best (specific questions)
    # moderate and broad questions want context around the best unit: their cut is this much lower
    cut_factor: dict[str, float] = msgspec.field(
        default_factory=lambda: {"specific": 1.0, "moderate": 0.75, "broad": 0.75}
    )
    pool: int = 40  # lexical candidates per view per intent
    max_chars: int = 1200  # a unit whose text is longer is "too large": use its relevant children
    relevant_fraction: float = (
        0.6  # a composite/aggregate is kept only if this share of its children is relevant
    )
    max_children: int = 3  # children extracted from one too-large unit
    duplicate_jaccard: float = 0.8  # term-set overlap at which two units are near-duplicates
    role_boost: tuple[float, ...] = (1.3, 1.2, 1.12, 1.08)  # by position of the role in ROLES_FOR_ACT[act]
    act_boost: float = 1.08  # the unit lists the intent's act in UtilityActs explicitly
    type_boost: float = (
        1.15  # the unit holds an answer of the shape the question expects (a number, a version)
    )
    level_prior: tuple[float, ...] = (1.0, 0.85, 0.7)  # by distance from the preferred level
    min_evidence: int = 1
    min_coverage: float = 0.5  # idf-weighted share of the intent's content terms the evidence contains
    role_waiver_coverage: float = 0.6  # coverage at which a missing preferred role no longer fails the intent
    kb_guidance: int = 2  # guidance units from the persistent KB per intent (more for strategy purposes)
    inline_guidance: int = 12  # cap on always-kept inline guidance units


# --------------------------------------------------------------------------- scoring


def annotate(cands: Iterable[Candidate], profile: GoalProfile, views: Views) -> None:
    """Set `match` (idf-weighted query terms present), `matched` (content terms) and `related` (subject terms)."""
    content = frozenset(profile.content)
    subject = frozenset(profile.subject or profile.content)
    weighted: dict[str, float] = {}  # a query term's weight x idf, each product computed once
    for c in cands:
        common = c.terms.intersection(profile.weights)
        for t in common:
            if t not in weighted:
                weighted[t] = profile.weights[t] * views.idf(t)
        c.match = sum([weighted[t] for t in common])
        c.matched = c.terms & content
        c.related = c.terms & subject


NAMED_SOURCE_SEARCH = 0.25  # the weight a document-naming term keeps in the lexical search
SCOPE_SEARCH = 100  # units read to tell whether the documents a question names hold a term (unheld_by_named)


def named_source_terms(views: Views, weights: dict[str, float]) -> frozenset[str]:
    """The query terms that name some of the collection's documents but not all ("the -x option of *tar*"
    over the manuals of tar, curl and git). In a one-document collection there are none."""
    titles = views.source_titles()
    if len(titles) < 2:
        return frozenset()
    return frozenset(t for t in weights if 0 < sum(t in title for title in titles.values()) < len(titles))


def scope_to_named_sources(
    views: Views, weights: dict[str, float], naming: frozenset[str], cands: Iterable[Candidate]
) -> None:
    """A document-naming term is stated by every unit of the documents it names, as a title field would
    state it (the search gave the word itself NAMED_SOURCE_SEARCH of its weight: inside tar's manual the
    word "tar" says nothing of which passage is meant)."""
    if not naming:
        return
    titles = views.source_titles()
    for c in cands:
        named = titles.get(c.unit.sourceId, frozenset()) & naming
        if named:
            bonus = sum(weights[t] * views.idf(t) * FIELD_WEIGHTS["heading"] for t in named)
            c.terms = c.terms | named
            c.lexical += bonus
            c.score += bonus


def unheld_by_named(views: Views, profile: GoalProfile, naming: frozenset[str]) -> frozenset[str]:
    """The query terms that no unit of the documents the question names holds ("How do I encrypt a *tar*
    archive?" over tar's, curl's and ssh's manuals: tar's never says "encrypt"): within the scope the
    question sets they are unknown, as a term of no unit of the collection is. A document is named by a
    word of its own ("the *commit*", not the part of "pre-commit"). A term is unheld only when its search
    was exhaustive (fewer hits than SCOPE_SEARCH), so a frequent term is never wrongly unheld."""
    naming = naming & frozenset(analyse(" ".join(w for w in profile.text.split() if "-" not in w.strip("-"))))
    if not naming:
        return frozenset()
    weights = profile.weights
    titles = views.source_titles()
    named = {ident for ident, title in titles.items() if title & naming}
    out = set()
    for term in weights:
        if term in naming or not views.known(term):
            continue
        hits = views.search({term: 1.0}, SCOPE_SEARCH)
        if len(hits) < SCOPE_SEARCH and not any(e.unit.sourceId in named for e, _ in hits):
            out.add(term)
    return frozenset(out)


TagScores = dict[tuple[str, str, tuple[str, ...]], float]


def goal_boost(
    c: Candidate, profile: GoalProfile, views: Views, config: SelectionConfig, tags: TagScores | None = None
) -> None:
    """Add the role/acts field match (DS009) and apply the act's role boost and the level prior.

    `tags`: the tag scores of this profile already computed, by (origin, role, acts) — the score depends
    on nothing else (the views' tag idf is fixed for a call), and a pool's units share a few role/act sets;
    pass one dict per profile and call."""
    if tags is None:
        c.score += tag_score(c.unit, profile.weights, lambda f, t: views.tag_idf(c.origin, f, t))
    else:
        unit = c.unit
        key = (c.origin, unit.role, tuple(unit.acts))
        found = tags.get(key)
        if found is None:
            found = tags[key] = tag_score(unit, profile.weights, lambda f, t: views.tag_idf(c.origin, f, t))
        c.score += found
    if c.unit.role in profile.roles:
        pos = profile.roles.index(c.unit.role)
        c.score *= config.role_boost[min(pos, len(config.role_boost) - 1)]
    if profile.act in c.unit.utilityActs:
        c.score *= config.act_boost
    if profile.answer_type in SHAPED_TYPES and mentions_type(body_text(c.unit), profile.answer_type):
        c.score *= config.type_boost
    distance = abs(c.level - profile.level_rank)
    c.score *= config.level_prior[min(distance, len(config.level_prior) - 1)]


def relative_cut(
    ranked: list[Candidate], config: SelectionConfig, breadth: str = "specific"
) -> list[Candidate]:
    """Candidates scoring at least `relative_cut` (x the breadth's `cut_factor`) of the best one."""
    if not ranked:
        return []
    floor = ranked[0].score * config.relative_cut * config.cut_factor.get(breadth, 1.0)
    return [c for c in ranked if c.score >= floor and c.score > 0]


# --------------------------------------------------------------------------- levels


def _child_candidates(parent: Candidate, profile: GoalProfile, views: Views, pool: dict[str, Candidate]):
    entries = views.lookup(parent.unit.childUnitIds)
    kids: list[Candidate] = []
    for ident in parent.unit.childUnitIds:
        entry = entries.get(ident)
        if entry is None or not is_evidence(entry.unit) or is_question_like(entry.unit):
            continue
        known = pool.get(ident)
        kid = known if known is not None else Candidate(entry)
        if known is None:
            annotate([kid], profile, views)
        kids.append(kid)
    return kids


def _relevant(kids: list[Candidate], share: float = 0.5) -> list[Candidate]:
    """Children whose query match is at least `share` of the best child's (and names an intent term)."""
    best = max((k.match for k in kids), default=0.0)
    if best <= 0:
        return []
    return [k for k in kids if k.match >= share * best and k.related]


def resolve_levels(
    selected: list[Candidate],
    profile: GoalProfile,
    views: Views,
    pool: dict[str, Candidate],
    config: SelectionConfig,
) -> list[Candidate]:
    """DS023 steps 6–8: extract children of too-large/too-coarse units; expand atomic groups to parents."""
    out: dict[str, Candidate] = {}

    def put(c: Candidate) -> None:
        prev = out.get(c.id)
        if prev is None or prev.score < c.score:
            out[c.id] = c

    for c in selected:
        if c.level == 0 or not c.unit.childUnitIds:
            put(c)
            continue
        kids = _child_candidates(c, profile, views, pool)
        relevant = _relevant(kids)
        too_big = c.size > config.max_chars
        spread = len(relevant) / len(kids) if kids else 1.0
        # the children say all the unit matched: the query is about them, not about the unit as a whole
        wanted = {t for t, w in profile.weights.items() if w >= 0.5}
        told = set().union(*(k.terms for k in relevant)) if relevant else set()
        concentrated = (c.terms & wanted) <= told
        # a summary that dropped what the question asks about: its children say more than it does
        richer = len(set().union(*(k.matched for k in relevant))) > len(c.matched) if relevant else False
        # a specific question about a small section its heading names ("What are the design goals?"):
        # the section's own units say it; its summary is a lossy digest of them
        whole_small = profile.level_rank == 0 and len(kids) <= config.max_children and spread >= 1.0
        if relevant and (
            too_big or whole_small or (concentrated and (spread < config.relevant_fraction or richer))
        ):
            best = max(k.match for k in relevant)
            # extract the best children, including weaker ones that still share the question's terms
            chosen = sorted(_relevant(kids, 0.25), key=lambda k: -k.match)
            for kid in chosen[: config.max_children]:
                derived = c.score * (kid.match / best) * 0.95
                if derived > kid.score:
                    kid.score = derived
                kid.why.append(f"extracted from {c.id}")
                put(kid)
        else:
            put(c)
    if profile.level_rank > 0:
        _expand_to_parents(out, profile, views, pool, config)
    return sorted(out.values(), key=lambda c: -c.score)


def _expand_to_parents(
    out: dict[str, Candidate],
    profile: GoalProfile,
    views: Views,
    pool: dict[str, Candidate],
    config: SelectionConfig,
) -> None:
    groups: dict[str, list[Candidate]] = {}
    for c in out.values():
        if c.level < profile.level_rank and c.unit.parentUnitIds:
            groups.setdefault(c.unit.parentUnitIds[0], []).append(c)
    wanted = [pid for pid, members in groups.items() if len(members) >= 2 and pid not in out]
    if not wanted:
        return
    parents = views.lookup(wanted)
    for pid in wanted:
        entry = parents.get(pid)
        if entry is None or not is_evidence(entry.unit) or len(body_text(entry.unit)) > config.max_chars:
            continue
        parent = pool.get(pid) or Candidate(entry)
        if pid not in pool:
            annotate([parent], profile, views)
        kids = _child_candidates(parent, profile, views, pool)
        relevant = _relevant(kids)
        if kids and len(relevant) / len(kids) < config.relevant_fraction:
            continue
        members = groups[pid]
        parent.score = max(parent.score, max(m.score for m in members))
        parent.why.append(f"expanded from {len(members)} children")
        for m in members:
            out.pop(m.id, None)
        out[pid] = parent


# --------------------------------------------------------------------------- redundancy


def ancestor_map(ids: list[str], views: Views, depth: int = 3) -> dict[str, set[str]]:
    """For each id, the ids of its parents, grandparents, ... (ParentUnitIds), one lookup per level."""
    out: dict[str, set[str]] = {i: set() for i in ids}
    frontier: dict[str, set[str]] = {i: {i} for i in ids}  # unit -> the origins it is an ancestor of
    for _ in range(depth):
        if not frontier:
            break
        found = views.lookup(frontier)
        nxt: dict[str, set[str]] = {}
        for ident, origins in frontier.items():
            entry: Entry | None = found.get(ident)
            if entry is None:
                continue
            for pid in entry.unit.parentUnitIds:
                fresh = {o for o in origins if pid not in out[o]}
                for o in fresh:
                    out[o].add(pid)
                if fresh:
                    nxt.setdefault(pid, set()).update(fresh)
        frontier = nxt
    return out


def ancestors(entry_unit_ids: list[str], views: Views, depth: int = 3) -> set[str]:
    """Ids of the parents, grandparents, ... of units (following ParentUnitIds)."""
    found: set[str] = set()
    for anc in ancestor_map(list(entry_unit_ids), views, depth).values():
        found |= anc
    return found


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def remove_redundant(
    ranked: list[Candidate],
    profile: GoalProfile,
    views: Views,
    config: SelectionConfig,
    limit: int | None = None,
) -> list[Candidate]:
    """Drop a unit whose ancestor or descendant is also selected (keeping the better-scored) and
    near-duplicates (Jaccard of their own terms >= duplicate_jaccard: a shared heading is no evidence of
    saying the same thing), keeping the better-scored; at most `limit`."""
    by_id = {c.id: c for c in ranked}
    lineage = {i: found & by_id.keys() for i, found in ancestor_map(list(by_id), views).items()}
    threshold = config.duplicate_jaccard
    kept: list[Candidate] = []
    kept_ids: set[str] = set()
    kept_words: list[tuple[frozenset[str], int]] = []  # the kept units' own terms and their count
    kept_ancestors: set[str] = set()  # every ancestor of a kept unit (among the ranked)
    for c in sorted(ranked, key=lambda c: -c.score):  # greedy: a better-scored relative already kept wins
        if limit is not None and len(kept) >= limit:
            break
        if c.id in kept_ancestors or lineage[c.id] & kept_ids:
            continue
        words = own_terms(c.unit)
        if _near_duplicate(words, len(words), kept_words, threshold):
            continue
        kept.append(c)
        kept_ids.add(c.id)
        kept_ancestors |= lineage[c.id]
        kept_words.append((words, len(words)))
    return kept


def _near_duplicate(
    words: frozenset[str], n: int, kept: list[tuple[frozenset[str], int]], threshold: float
) -> bool:
    """Jaccard(words, one of `kept`) >= threshold. A pair whose smaller set is under `threshold` of the
    larger is skipped unseen: its Jaccard is at most min/max, and correctly rounded division keeps that
    order, so the skip never changes the answer (the size filter of set-similarity joins)."""
    for other, m in kept:
        if not n or not m:
            if threshold <= 0.0:  # jaccard() of an empty set is 0.0
                return True
            continue
        if (n / m if n < m else m / n) < threshold:
            continue
        common = len(words & other)
        if common / (n + m - common) >= threshold:
            return True
    return False


# --------------------------------------------------------------------------- sufficiency


class Sufficiency(msgspec.Struct, kw_only=True):
    sufficient: bool
    coverage: float
    roles_ok: bool
    evidence: int


def sufficiency(
    evidence: list[Candidate], profile: GoalProfile, views: Views, config: SelectionConfig
) -> Sufficiency:
    """Evidence count >= minimum, idf-weighted content-term coverage >= minimum, and a preferred role
    present (waived when coverage is high: the evidence then states the answer whatever its role)."""
    covered: set[str] = set()
    for c in evidence:
        covered |= c.matched
    total = sum(views.idf(t) for t in profile.content)
    got = sum(views.idf(t) for t in profile.content if t in covered)
    coverage = got / total if total > 0 else 0.0
    roles_ok = any(c.unit.role in profile.roles or profile.act in c.unit.acts for c in evidence)
    # a preferred role is required unless the evidence states nearly every term of the intent anyway
    role_gate = roles_ok or coverage >= config.role_waiver_coverage
    ok = len(evidence) >= config.min_evidence and role_gate and coverage >= config.min_coverage
    return Sufficiency(sufficient=ok, coverage=coverage, roles_ok=roles_ok, evidence=len(evidence))


def levels_used(units: Iterable[Candidate]) -> list[str]:
    present = {c.level for c in units}
    return [LEVELS[i] for i in sorted(present)]
