"""Rank the candidates of one stage: priors, plannerHints, relevance, symbolic cues, learned utility.

score = w_cost   * cost term   (cheap-first: 1 - cost; heavy-first: cost)
      + w_acts   * fraction of the task's acts the plugin declares (supportedActs)
      + w_rel    * overlap of the task's terms with the plugin's description and tags
      + w_cue    * symbolic cue fit (multi-hop, or a relational question over knowledge rich in symbolic
                   facts -> deep/relational plugins, comparison or explanation ->
                   balanced/hybrid plugins, short factual -> shallow plugins, multi-part -> complex plugins)
      + w_util   * learned EWMA utility, weighted by how many samples stand behind it
      - FAILED   when the plugin already failed in this frame (failure memory: demoted, still listed)

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
    heavy_first: bool = False


class Ranked(msgspec.Struct, kw_only=True):
    id: str
    score: float
    affordable: bool
    failed: bool
    why: str


def cost_of(d: Descriptor) -> float:
    """0 (cheapest) .. 1 (most expensive) from costClass, relativeCost and expected latency."""
    hints = d.plannerHints
    relative = hints.relativeCost if hints else COST_CLASS.get(d.costClass, 0.5)
    latency = hints.expectedLatencyMs if hints else 1000
    latency_norm = min(1.0, math.log10(1 + max(0, latency)) / math.log10(1 + MAX_LATENCY_MS))
    return 0.5 * min(1.0, max(0.0, relative)) + 0.3 * COST_CLASS.get(d.costClass, 0.5) + 0.2 * latency_norm


def traits_of(d: Descriptor) -> tuple[set[str], set[str]]:
    """(declared hint traits: tags, topicTags, evidenceStyle, depth; words of the description)."""
    hints = d.plannerHints
    declared = {t.lower() for t in d.tags}
    if hints:
        declared |= {t.lower() for t in hints.topicTags} | {e.lower() for e in hints.evidenceStyle}
        declared.add(f"depth:{hints.preferredDepth}")
    return declared, set(words(d.description))


def cue_fit(d: Descriptor, signals: TaskSignals) -> tuple[float, list[str]]:
    """In [-1, 1]: how well the plugin's declared traits match the turn's symbolic cues.

    Retrieval cues (multi-hop, comparison/explanation, short factual) apply to kb-plugins; the
    multi-part cue applies to every stage (it favours plugins declared for complex input).
    """
    declared, described = traits_of(d)
    traits = declared | described
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
    hints = d.plannerHints
    text = " ".join(
        [d.description, *d.tags, *(hints.topicTags if hints else []), *(hints.evidenceStyle if hints else [])]
    )
    plugin_terms = set(terms(text))
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
    out: list[Ranked] = []
    for d in candidates:
        cost = cost_of(d)
        cost_term = cost if weights.heavy_first else 1.0 - cost
        acts = act_fit(d, signals)
        rel = relevance(d, task_terms)
        cue, cue_why = cue_fit(d, signals)
        util, samples = table.utility(d.id, signals.acts, kernel_stats.get(d.id))
        confidence = samples / (samples + 1.0)
        score = (
            weights.cost * cost_term
            + weights.acts * acts
            + weights.relevance * rel
            + weights.cue * cue
            + weights.utility * util * confidence
        )
        is_failed = d.id in failed
        if is_failed:
            score -= FAILED_PENALTY
        affordable = d.maxLLMCalls <= llm_calls_left
        parts = [f"cost {cost:.2f}", f"acts {acts:.2f}"]
        if cue_why:
            parts.append("cue " + "+".join(cue_why))
        if samples:
            parts.append(f"utility {util:+.2f}/{samples}")
        if is_failed:
            parts.append("failed here")
        if not affordable:
            parts.append("over LLM budget")
        out.append(
            Ranked(
                id=d.id, score=round(score, 9), affordable=affordable, failed=is_failed, why=", ".join(parts)
            )
        )
    out.sort(key=order_key)
    return out


def order_key(r: Ranked) -> tuple[bool, bool, float, str]:
    """Affordable before over-budget, not-failed before failed, then by score, ties by id."""
    return (not r.affordable, r.failed, -r.score, r.id)


def apply_pins(order: list[str], pin: str | None, preference: str | None) -> list[str]:
    """An explicit pin collapses the stage to that plugin; a session preference goes first, keeping the rest."""
    if pin:
        return [pin]
    if preference and preference in order:
        return [preference, *[p for p in order if p != preference]]
    return order
