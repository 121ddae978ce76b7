"""The planner plugin shape both built-in planners share: buildPlan and recordOutcome over one strategy.

A strategy is a set of ranking weights (cheap-first or heavy-first) and its decomposition rules (DS029).
The plan lists every enabled plugin of each stage, best first; pins collapse a stage, session
preferences go first, failed plugins go last, unaffordable LLM plugins after affordable ones.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.plugins.sdk.text import sentences, words
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit, Plan
from mrpvm.protocol.envelope import BuildPlanPayload, RecordOutcomePayload

from . import utility
from .ranking import Ranked, Weights, act_filter, apply_pins, failed_ids, format_filter, order_key, rank
from .signals import TaskSignals, read_signals

# (plugin type, pin/preference field, Plan field)
STAGES = (
    ("sd-plugin", "sd", "seedDetectorOrder"),
    ("kb-plugin", "kb", "kbPluginOrder"),
    ("gs-plugin", "gs", "goalSolverOrder"),
    ("val-plugin", "val", "validatorOrder"),
)
GUIDANCE_WEIGHT = 2.5
NEGATIVE_WORDS = frozenset(
    {"avoid", "never", "not", "don't", "dont", "skip", "disable", "instead", "without"}
)


class Strategy(msgspec.Struct, kw_only=True, frozen=True):
    name: str
    weights: Weights
    # Recovery planners also decompose a multi-part turn at the root once something has failed.
    decompose_after_failure: bool = False


# --------------------------------------------------------------------------- guidance


def guidance_bias(guidance: list[KnowledgeUnit], plugin_ids: list[str]) -> tuple[dict[str, float], list[str]]:
    """Planner-scoped guidance KUs that name a plugin: +1 per recommending sentence, -1 per warning one."""
    bias: dict[str, float] = {}
    used: list[str] = []
    for unit in guidance:
        if "mrp-plan-plugin" not in unit.scopes:
            continue
        text = " ".join(filter(None, [unit.body, unit.condition, unit.utilityNote]))
        hit = False
        for sentence in sentences(text) or [text]:
            lowered = sentence.lower()
            tokens = set(words(sentence))
            for pid in plugin_ids:
                if re.search(rf"(?<![\w-]){re.escape(pid.lower())}(?![\w-])", lowered):
                    bias[pid] = bias.get(pid, 0.0) + (-1.0 if tokens & NEGATIVE_WORDS else 1.0)
                    hit = True
        if hit:
            used.append(unit.id)
    return bias, used


# --------------------------------------------------------------------------- decomposition (DS029)


def decide_decompose(payload: BuildPlanPayload, signals: TaskSignals, strategy: Strategy) -> tuple[bool, str]:
    """Plan-level decomposition applies to every seed of the frame, so it is asked for only when every
    intent is compound (holds questions the seed detector did not split), at the root. A simple question
    is answered directly; a multi-hop or relational one goes to relation-sensitive retrieval (kb order),
    not to a split. A single compound seed among simple ones is left to the goal solver, which answers it
    part by part or returns needs-decomposition. The recovery planner also splits a turn with compound
    intents once something has failed."""
    if payload.phase != "post-seed" or not payload.intents:
        return False, ""
    if payload.depth >= payload.maxDepth:
        return False, f"depth {payload.depth} reached maxDepth {payload.maxDepth}"
    if payload.depth > 0:
        return False, "sub-task of a decomposition (answered directly)"
    several = signals.several_sub_questions
    counts = ", ".join(f"{ref} holds {signals.sub_questions[ref]} questions" for ref in several)
    if signals.compound_intents:
        return True, counts
    if strategy.decompose_after_failure and payload.failures and several:
        return True, f"recovery after failures: {counts}"
    if several:
        return False, f"{counts}; left to the goal solver (other intents are simple)"
    return False, ""


# --------------------------------------------------------------------------- buildPlan


def _stage_note(key: str, ranked: list[Ranked], order: list[str]) -> str:
    if not order:
        return f"{key}: none enabled"
    scores = {r.id: r for r in ranked}
    head = scores.get(order[0])
    first = f"{order[0]} ({head.why})" if head else f"{order[0]} (pinned)"
    rest = " > ".join(f"{pid} {scores[pid].score:.2f}" if pid in scores else pid for pid in order[1:])
    return f"{key}: {first}" + (f" > {rest}" if rest else "")


def build_plan(call: Call, strategy: Strategy) -> CnlDocument:
    payload: BuildPlanPayload = call.payload
    signals = read_signals(call.prompt, payload.intents, payload.knowledge)
    table = utility.UtilityTable.from_learned(payload.learned)
    kernel_stats = {s.pluginId: s for s in payload.stats}
    failed = failed_ids(payload.failures)
    bias, guided_by = guidance_bias(payload.guidance, [d.id for d in payload.descriptors])
    plan = Plan()
    notes: list[str] = []
    for plugin_type, key, field in STAGES:
        candidates = [d for d in payload.descriptors if d.type == plugin_type]
        dropped: list[str] = []
        if plugin_type == "gs-plugin" and payload.phase == "post-seed":
            candidates, dropped = act_filter(candidates, signals.acts)
            candidates, unfit = format_filter(candidates, [i.output for i in payload.intents])
            dropped += unfit
        failing = {
            d.id: why for d in candidates if (why := table.failing(d.id, signals.kinds or signals.acts))
        }
        if failing and len(failing) < len(candidates):  # measured to fail, and another candidate is left
            candidates = [d for d in candidates if d.id not in failing]
            notes.append(f"{key}: left out, measured to fail: {'; '.join(failing.values())}")
        ranked = rank(
            candidates,
            signals,
            weights=strategy.weights,
            table=table,
            kernel_stats=kernel_stats,
            failed=failed,
            llm_calls_left=payload.llmCallsLeft,
        )
        if bias:
            for r in ranked:
                if r.id in bias:
                    r.score = round(r.score + GUIDANCE_WEIGHT * bias[r.id], 9)
                    r.why += f", guidance {bias[r.id]:+.0f}"
            ranked.sort(key=order_key)
        order = apply_pins(ranked, getattr(payload.pins, key), getattr(payload.preferences, key))
        setattr(plan, field, order)
        notes.append(_stage_note(key, ranked, order))
        if dropped:
            notes.append(
                f"{key}: left out (declared acts or formats do not fit the intents): {', '.join(dropped)}"
            )
    decompose, reason = decide_decompose(payload, signals, strategy)
    plan.decompose = decompose
    plan.framePurpose = _purpose(payload, signals)
    if reason:
        notes.append(("decompose: " if decompose else "no decomposition: ") + reason)
    if guided_by:
        notes.append("guidance: " + ", ".join(guided_by))
    plan.notes = "; ".join(notes)
    if not payload.descriptors:
        return call.reply("success", "low", result="no plugin descriptors given: empty plan", plan=plan)
    first_kb = plan.kbPluginOrder[0] if plan.kbPluginOrder else "none"
    return call.reply(
        "success",
        "medium",
        result=f"{strategy.name} plan ({payload.phase}): kb {first_kb} first, decompose {'yes' if decompose else 'no'}",
        evidence=f"cues: {signals.describe()}; acts: {', '.join(signals.acts) or 'unknown'}",
        plan=plan,
    )


def _purpose(payload: BuildPlanPayload, signals: TaskSignals) -> str:
    if payload.phase == "pre-seed":
        return "detect the intents and current-turn knowledge of the turn"
    if payload.depth > 0 and payload.intents:
        return f"sub-task at depth {payload.depth}: {payload.intents[0].intent[:120]}"
    acts = ", ".join(signals.acts) or "unknown acts"
    return f"answer {len(payload.intents)} intent(s) ({acts}); cues: {signals.describe()}"


# --------------------------------------------------------------------------- recordOutcome


def record_outcome(call: Call, strategy: Strategy) -> CnlDocument:
    """Score the outcome's attempts (`## Observation N`); the kernel folds them into the shared records."""
    payload: RecordOutcomePayload = call.payload
    learned = utility.observations(payload)
    for outcome in payload.outcomes:  # a batch: each observation names its outcome
        learned += [
            msgspec.structs.replace(o, index=len(learned) + n, outcome=outcome.requestId)
            for n, o in enumerate(utility.observations(outcome), 1)
        ]
    plugins = len({o.plugin for o in learned})
    return call.reply(
        "success",
        "high",
        result=f"{strategy.name}: {len(learned)} observations of {plugins} plugins",
        observations=learned,
    )


def make_planner(plugin_id: str, strategy: Strategy) -> Plugin:
    return Plugin(
        plugin_id,
        "mrp-plan-plugin",
        {
            "buildPlan": lambda call: build_plan(call, strategy),
            "recordOutcome": lambda call: record_outcome(call, strategy),
        },
    )
