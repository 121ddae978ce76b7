"""Rank the candidates of one stage: priors, plannerHints, relevance, symbolic cues, learned utility.

score = w_cost   * cost term   (cheap-first: 1 - cost; heavy-first: cost)
      + w_acts   * fraction of the task's acts the plugin declares (supportedActs)
      + w_rel    * overlap of the task's terms with the plugin's description and tags
      + w_cue    * symbolic cue fit (multi-hop, or a relational question over knowledge rich in symbolic
                   facts -> deep/relational plugins, comparison or explanation ->
                   balanced/hybrid plugins, short factual -> shallow plugins, multi-part -> complex plugins)
      + w_util   * learned EWMA utility relative to the stage prior, weighted by the evidence behind it
      + w_conf   * (confidenceWhenMatched - 0.5) x act fit: how sure a plugin says it is when it fits the task
      - FAILED   when the plugin already failed in this frame (failure memory: demoted, still listed)

A plugin whose plannerHints.fallbackRole is "helper" never leads a stage: it comes after every plugin that
is not a helper (a legacy wrapper or an example helps when the others have failed, it does not serve first).

The learned term is centred on the stage prior: the utility an untried plugin is assumed to have (the
sample-weighted mean of the tried candidates on this task, never below neutral). An untried plugin is
"unknown", not worse than the plugins that were tried; a plugin that keeps failing falls below it, and one
that keeps serving better than its peers rises above them. Evidence from other acts than the task's (the
overall record standing in) counts at TRANSFER weight, so a small lead learned on other kinds of questions
does not outweigh a strong task cue (a relational question over symbolic facts).

Plugins whose maxLLMCalls exceed the calls left come after every affordable one (still listed: the engine
records them as skipped-budget). Ties break by plugin id, so the order is deterministic.
"""

from __future__ import annotations

import math
import re

import msgspec
from mrpvm.plugins.sdk.text import terms, words
from mrpvm.protocol.envelope import Descriptor, PluginStats

from .signals import TaskSignals
from .utility import UtilityTable

COST_CLASS = {"cheap": 0.0, "moderate": 0.5, "expensive": 1.0}
MAX_LATENCY_MS = 60_000.0
FAILED_PENALTY = 5.0
# Weight of learned evidence that comes from other acts than the task's (the overall record standing in).
TRANSFER = 0.5
DEEP_TRAITS = frozenset(
    {"multi-hop", "relations", "relation", "proof", "symbolic", "closure", "relation-sensitive"}
)
BALANCED_TRAITS = frozenset({"hybrid", "associative", "diversity", "diversity-aware", "balanced"})
SHALLOW_TRAITS = frozenset({"focused", "factual", "lexical"})
COMPLEX_TRAITS = frozenset({"complex", "multi-part", "nuanced", "ambiguous"})


class Weights(msgspec.Struct, kw_only=True, frozen=True):
    cost: float = 1.0
    acts: float = 0.8
    relevance: float = 0.3
    cue: float = 0.9
    utility: float = 2.0
    confidence: float = 0.4
    heavy_first: bool = False


class Ranked(msgspec.Struct, kw_only=True):
    id: str
    score: float
    affordable: bool
    failed: bool
    why: str
    helper: bool = False  # plannerHints.fallbackRole == "helper": never first


HELPER_ROLE = "helper"


class _Facts:
    """What ranking reads from a descriptor alone (cost, traits, description terms), computed once per
    distinct descriptor: every buildPlan carries the same descriptors."""

    __slots__ = ("cost", "declared", "described", "terms")

    def __init__(self, d: Descriptor):
        hints = d.plannerHints
        relative = hints.relativeCost if hints else COST_CLASS.get(d.costClass, 0.5)
        latency = hints.expectedLatencyMs if hints else 1000
        latency_norm = min(1.0, math.log10(1 + max(0, latency)) / math.log10(1 + MAX_LATENCY_MS))
        self.cost = (
            0.5 * min(1.0, max(0.0, relative)) + 0.3 * COST_CLASS.get(d.costClass, 0.5) + 0.2 * latency_norm
        )
        declared = {t.lower() for t in d.tags}
        if hints:
            declared |= {t.lower() for t in hints.topicTags} | {e.lower() for e in hints.evidenceStyle}
            declared.add(f"depth:{hints.preferredDepth}")
        self.declared: frozenset[str] = frozenset(declared)
        self.described: frozenset[str] = frozenset(words(d.description))
        text = " ".join(
            [
                d.description,
                *d.tags,
                *(hints.topicTags if hints else []),
                *(hints.evidenceStyle if hints else []),
            ]
        )
        self.terms: frozenset[str] = frozenset(terms(text))


_facts_cache: dict[bytes, _Facts] = {}
_facts_key = msgspec.json.Encoder()
MAX_FACTS = 1024


def _facts(d: Descriptor) -> _Facts:
    key = _facts_key.encode(d)  # every field: a changed descriptor is a new entry
    facts = _facts_cache.get(key)
    if facts is None:
        if len(_facts_cache) >= MAX_FACTS:
            _facts_cache.clear()
        facts = _facts_cache[key] = _Facts(d)
    return facts


def cost_of(d: Descriptor) -> float:
    """0 (cheapest) .. 1 (most expensive) from costClass, relativeCost and expected latency."""
    return _facts(d).cost


def cue_fit(d: Descriptor, signals: TaskSignals) -> tuple[float, list[str]]:
    """In [-1, 1]: how well the plugin's declared traits match the turn's symbolic cues.

    Retrieval cues (multi-hop, comparison/explanation, short factual) apply to kb-plugins; the
    multi-part cue applies to every stage (it favours plugins declared for complex input).
    """
    facts = _facts(d)
    declared = facts.declared
    traits = declared | facts.described
    deep = "depth:deep" in declared or bool(traits & DEEP_TRAITS)
    balanced = not deep and (bool(traits & BALANCED_TRAITS) or "depth:medium" in declared)
    shallow = not deep and not balanced and ("depth:shallow" in declared or bool(declared & SHALLOW_TRAITS))
    complex_ = bool(traits & COMPLEX_TRAITS)
    fit, why = 0.0, []
    retrieval = d.type == "kb-plugin"
    if retrieval and (signals.multi_hop or signals.relational):
        if deep:
            fit += 1.0
            why.append("multi-hop" if signals.multi_hop else "relational over symbolic facts")
        elif shallow:
            fit -= 0.6
        elif balanced:
            fit -= 0.3
    elif retrieval and (signals.comparative or signals.explanatory) and balanced:
        fit += 0.6
        why.append("comparison/explanation")
    if retrieval and signals.short_factual:
        if shallow:
            fit += 0.6
            why.append("short factual")
        elif deep:
            fit -= 0.3
    if signals.multi_part and complex_:
        fit += 0.4
        why.append("multi-part")
    return max(-1.0, min(1.0, fit)), why


def act_fit(d: Descriptor, signals: TaskSignals) -> float:
    supported = set(d.plannerHints.supportedActs) if d.plannerHints else set()
    if not signals.acts or not supported:
        return 0.5
    return sum(1 for a in signals.acts if a in supported) / len(signals.acts)


def relevance(d: Descriptor, task_terms: set[str]) -> float:
    """Set cosine of the task's terms and the plugin's description + tags terms."""
    plugin_terms = _facts(d).terms
    if not plugin_terms or not task_terms:
        return 0.0
    return len(plugin_terms & task_terms) / math.sqrt(len(plugin_terms) * len(task_terms))


def act_filter(candidates: list[Descriptor], acts: list[str]) -> tuple[list[Descriptor], list[str]]:
    """Relevance filtering of goal solvers by declared acts: a solver whose declared supportedActs miss one
    of the turn's acts cannot shape that answer (an extractive keyword solver cannot give a yes/no
    verdict), and the plan's solver order serves every seed of the frame, so it is left out. Solvers
    declaring no acts, and the whole list when every solver would be dropped, are kept.
    Returns (kept, dropped ids)."""
    if not acts:
        return candidates, []
    wanted = set(acts)
    kept = [
        d
        for d in candidates
        if not (d.plannerHints and d.plannerHints.supportedActs)
        or wanted <= set(d.plannerHints.supportedActs)
    ]
    if not kept:
        return candidates, []
    ids = {d.id for d in kept}
    return kept, [d.id for d in candidates if d.id not in ids]


# Output formats that only an explicit verdict or a single item satisfies (read from the intent's Output).
CONSTRAINED_OUTPUT = re.compile(
    r"\byes\s*(?:/|or)\s*no\b|\btrue\s*(?:/|or)\s*false\b|\b(?:single|one)[\s-]word\b|\ba\s+number\b"
    r"|\bnumeric\b",
    re.IGNORECASE,
)
# evidenceStyle values that declare a solver able to honour a constrained format.
FORMAT_STYLES = frozenset({"constrained", "generative"})


def constrained(outputs: list[str]) -> bool:
    """Every intent asks for a constrained format (yes/no, one word, a number)."""
    return bool(outputs) and all(CONSTRAINED_OUTPUT.search(o or "") for o in outputs)


def format_filter(candidates: list[Descriptor], outputs: list[str]) -> tuple[list[Descriptor], list[str]]:
    """For turns whose every intent wants a constrained format, keep the goal solvers that declare they can
    produce one (evidenceStyle `constrained`, or `generative`: a model follows the format); a solver that
    only extracts sentences would answer "Yes/No" with a sentence. Solvers with no plannerHints, and the
    whole list when none declares the ability, are kept. Returns (kept, dropped ids)."""
    if not constrained(outputs):
        return candidates, []
    kept = [
        d
        for d in candidates
        if d.plannerHints is None or FORMAT_STYLES & {e.lower() for e in d.plannerHints.evidenceStyle}
    ]
    if not kept:
        return candidates, []
    ids = {d.id for d in kept}
    return kept, [d.id for d in candidates if d.id not in ids]


def failed_ids(failures: list[str]) -> set[str]:
    """Plugin ids named by failure-memory entries (`<pluginId>` or `<pluginId>: reason`)."""
    out = set()
    for entry in failures:
        head = entry.split(":", 1)[0].strip()
        out.add(head.split()[0] if head else head)
    return out


def rank(
    candidates: list[Descriptor],
    signals: TaskSignals,
    *,
    weights: Weights,
    table: UtilityTable,
    kernel_stats: dict[str, PluginStats],
    failed: set[str],
    llm_calls_left: int,
) -> list[Ranked]:
    task_terms = set(signals.terms)
    keys = signals.kinds or signals.acts
    learned = {d.id: table.evidence(d.id, keys, kernel_stats.get(d.id)) for d in candidates}
    prior = stage_prior(list(learned.values()))
    out: list[Ranked] = []
    for d in candidates:
        cost = cost_of(d)
        cost_term = cost if weights.heavy_first else 1.0 - cost
        acts = act_fit(d, signals)
        rel = relevance(d, task_terms)
        cue, cue_why = cue_fit(d, signals)
        util, samples, on_task = learned[d.id]
        confidence = samples / (samples + 1.0) * (1.0 if on_task else TRANSFER)
        hints = d.plannerHints
        matched = (hints.confidenceWhenMatched - 0.5) * acts if hints else 0.0
        score = (
            weights.cost * cost_term
            + weights.acts * acts
            + weights.relevance * rel
            + weights.cue * cue
            + weights.utility * (util - prior) * confidence
            + weights.confidence * matched
        )
        is_failed = d.id in failed
        if is_failed:
            score -= FAILED_PENALTY
        affordable = d.maxLLMCalls <= llm_calls_left
        parts = [f"cost {cost:.2f}", f"acts {acts:.2f}"]
        if cue_why:
            parts.append("cue " + "+".join(cue_why))
        if samples:
            scope = "" if on_task else " other acts"
            parts.append(f"utility {util:+.2f}/{samples}{scope} vs stage {prior:+.2f}")
        if is_failed:
            parts.append("failed here")
        if not affordable:
            parts.append("over LLM budget")
        helper = bool(hints and hints.fallbackRole == HELPER_ROLE)
        if helper:
            parts.append("helper")
        out.append(
            Ranked(
                id=d.id,
                score=round(score, 9),
                affordable=affordable,
                failed=is_failed,
                why=", ".join(parts),
                helper=helper,
            )
        )
    out.sort(key=order_key)
    return out


def stage_prior(learned: list[tuple[float, int, bool]]) -> float:
    """The utility assumed for an untried plugin of a stage: the mean utility of the tried candidates,
    weighted by their evidence, floored at neutral (0) so that plugins which all failed do not drag the
    untried ones down with them."""
    weight = sum(n * (1.0 if on_task else TRANSFER) for _, n, on_task in learned)
    if not weight:
        return 0.0
    mean = sum(u * n * (1.0 if on_task else TRANSFER) for u, n, on_task in learned) / weight
    return max(0.0, mean)


def order_key(r: Ranked) -> tuple[bool, bool, bool, float, str]:
    """Affordable before over-budget, not-failed before failed, helpers after the rest, then by score, ties
    by id."""
    return (not r.affordable, r.failed, r.helper, -r.score, r.id)


PREFERENCE_TIE = 0.05  # a session preference wins only over candidates scoring this close to it


def apply_pins(ranked: list[Ranked], pin: str | None, preference: str | None) -> list[str]:
    """An explicit pin collapses the stage to that plugin. A session preference is a tie-breaker: it moves
    ahead of the candidates it (nearly) ties with, never ahead of a better-ranked one."""
    order = [r.id for r in ranked]
    if pin:
        return [pin]
    chosen = next((r for r in ranked if r.id == preference), None)
    if chosen is None:
        return order
    at = order.index(chosen.id)
    target = at
    while target > 0:
        ahead = ranked[target - 1]
        if order_key(ahead)[:3] != order_key(chosen)[:3] or ahead.score - chosen.score > PREFERENCE_TIE:
            break
        target -= 1
    order.pop(at)
    order.insert(target, chosen.id)
    return order
