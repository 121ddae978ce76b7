"""Frames and planner branches (docs/ARCHITECTURE.md §4, steps 1–5 and 7).

A frame runs one branch per planner (ranked: pin > planner-level EWMA, session preference breaks ties) until every
seed is answered, keeping the best answer per seed across branches. A branch plans pre-seed (only when
there is an sd order to choose), detects seeds, stages the turn's units (the kb-plugins are told while the planner plans post-seed), then runs
every seed in parallel (seeds.py). A seed that needs decomposition opens a child frame through
`run_frame`, one level deeper.
"""

from __future__ import annotations

import time

import anyio
import msgspec
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit, Plan

from ..trace import PROMPT_PREVIEW, clip
from .calls import FALLING_BACK
from .concurrency import let_requests_out, run_all
from .early import (
    Early,
    cancel_early,
    remember_sd_first,
    settle_early_seeds,
    settle_early_views,
    start_early_seeds,
    start_early_views,
)
from .frame import ExecutionFrame, FrameOutcome
from .planner_rank import order_planners, planner_base
from .response import SeedOutcome, turn_status
from .scope import Attempt, BranchRun
from .seeds import SeedRun
from .stages import build_plan, detect_seeds, kb_notifications, validators_to_call
from .state import TurnState, intent_key

FALLBACK_ACT = "describe"


def rank_planners(state: TurnState) -> list[str | None]:
    """Explicit pin > planner-level EWMA (pooled with the prior, by a margin); within the margin the
    session's preferred planner comes first, then config order."""
    if state.pins.planner:
        return [state.pins.planner]
    enabled = state.enabled_ids("mrp-plan-plugin")
    base = planner_base(state.ctx.config.plugins.plannerOrder, enabled)
    if not base:
        return [None]
    stats = {s.pluginId: s for s in state.planner_stats()}
    return [*order_planners(base, stats, state.preferences.planner)]


def splits(parent: str, intents: list[IntentGroup]) -> bool:
    """Did decomposition produce a sub-question other than the parent's own question?"""
    own = " ".join(parent.lower().rstrip(" ?.!").split())
    return any(" ".join(i.intent.lower().rstrip(" ?.!").split()) != own for i in intents)


BranchResult = tuple[BranchRun, list[SeedOutcome], str | None]
# A next planner can change an answer only with its plans, the seeds, a retrieve and a solve: fewer
# fallback calls left and it is not tried (its calls would be skipped before it could answer).
NEXT_PLANNER_CALLS = 5


async def run_frame(
    state: TurnState, frame: ExecutionFrame, *, parent: str | None, ref_prefix: str
) -> FrameOutcome:
    """Run a frame: one branch per planner until every seed is answered; keep the best per seed."""
    trace = state.trace
    label = "root frame" if frame.depth == 0 else f"child frame (depth {frame.depth})"
    node = trace.node(
        "frame",
        label,
        parent=parent,
        frameId=frame.frame_id,
        input={
            "depth": frame.depth,
            "maxDepth": frame.max_depth,
            "purpose": frame.purpose,
            "prompt": clip(frame.prompt, PROMPT_PREVIEW),
        },
    )
    frame.node_id = node.id
    idle = state.static.llm_idle
    if idle and frame.depth == 0:  # said once per turn: why the LLM plugins are not in any plan
        trace.node(
            "event",
            f"no LLM endpoint is configured (MRPVM_LLM_BASE_URL): not planned: {', '.join(idle)}",
            parent=node.id,
            frameId=frame.frame_id,
            status="skipped",
        )
    best: dict[str, SeedOutcome] = {}
    results: list[BranchResult] = []
    previous: str | None = None
    for planner_id in rank_planners(state):
        if results and state.budget.expired():
            state.warnings.append("the request deadline passed before every planner was tried")
            break
        if results and state.budget.fallback_calls_left < NEXT_PLANNER_CALLS:
            state.warnings.append(
                f"the fallback budget ({state.budget.fallback_calls_total} calls) left too few calls for "
                "another planner"
            )
            break
        branch_node = trace.node(
            "branch",
            f"planner {planner_id or '(kernel defaults)'}",
            parent=node.id,
            frameId=frame.frame_id,
            pluginId=planner_id,
        )
        trace.edge(previous, branch_node.id, "next-planner")
        previous = branch_node.id
        branch = BranchRun(planner_id, branch_node, frame.frame_id)
        frame.branches.append(branch_node.id)
        state.branches.append(branch)
        t0 = time.perf_counter()
        token = FALLING_BACK.set(True) if len(frame.branches) > 1 else None  # a next planner backtracks
        try:
            outcomes, sd_plugin = await run_branch(state, frame, branch, best, ref_prefix)
        finally:
            if token is not None:
                FALLING_BACK.reset(token)
        branch.duration_ms = (time.perf_counter() - t0) * 1000.0
        branch.status = turn_status(outcomes)
        trace.finish(branch_node, branch.status)
        if outcomes is None:
            continue
        for outcome in outcomes:
            key = intent_key(outcome.intent)
            if key not in best or outcome.rank() > best[key].rank():
                best[key] = outcome
        results.append((branch, outcomes, sd_plugin))
        if branch.status == "success":
            break
    if not results:
        frame.status = "failed"
        trace.finish(node, "failed")
        return FrameOutcome(node_id=node.id, status="failed", outcomes=None)
    return _close_frame(state, frame, node.id, best, results)


def _close_frame(
    state: TurnState,
    frame: ExecutionFrame,
    node_id: str,
    best: dict[str, SeedOutcome],
    results: list[BranchResult],
) -> FrameOutcome:
    """The branch with the best seeds wins; a weak seed takes a better answer another branch found for it."""
    trace = state.trace

    def branch_score(item: BranchResult) -> tuple[float, ...]:
        merged = [best.get(intent_key(o.intent), o) for o in item[1]]
        count = max(1, len(merged))
        own = sum(o.rank()[0] for o in item[1]) / count
        return (sum(o.rank()[0] for o in merged) / count, own, -results.index(item))

    branch, outcomes, sd_plugin = max(results, key=branch_score)
    final = [best.get(intent_key(o.intent), o) for o in outcomes]
    frame.status = turn_status(final)
    frame.partial = {o.ref: o for o in final}
    trace.finish(trace.get(node_id), frame.status, chosenBranch=branch.node.id)
    for outcome in final:
        result = trace.node(
            "result",
            f"{outcome.ref} {outcome.status}",
            parent=node_id,
            frameId=frame.frame_id,
            status=outcome.status,
            output={"answer": clip(outcome.answer, 600), "validation": outcome.validation},
        )
        trace.edge(outcome.node_id, result.id, "produces")
    return FrameOutcome(
        node_id=node_id,
        status=frame.status,
        outcomes=final,
        planner_id=branch.planner_id,
        sd_plugin=sd_plugin,
    )


async def run_branch(
    state: TurnState, frame: ExecutionFrame, branch: BranchRun, best: dict[str, SeedOutcome], ref_prefix: str
) -> tuple[list[SeedOutcome] | None, str | None]:
    """One planner's attempt: plan, seeds, stage, plan again, then every seed (in parallel)."""
    trace = state.trace
    sd_attempt, pre = await plan_and_detect(state, frame, branch)
    sd_plugin = None
    if sd_attempt is not None and sd_attempt.doc is not None:
        sd_plugin = sd_attempt.plugin_id
        intents = [msgspec.structs.replace(i, index=n) for n, i in enumerate(sd_attempt.doc.intents, 1)]
        units = sd_attempt.doc.units
    elif frame.depth == 0:
        intents = [IntentGroup(index=1, act=FALLBACK_ACT, intent=frame.prompt, output="answer")]
        units = []
        warning = "no seed detector produced intents; the whole message was used as one intent"
        state.warnings.append(warning)
        trace.node("event", warning, parent=branch.node.id, frameId=frame.frame_id, status="fallback")
    else:
        trace.node(
            "event",
            "no seed detector could decompose the intent",
            parent=branch.node.id,
            frameId=frame.frame_id,
            status="failed",
        )
        return None, None
    if frame.depth > 0 and not splits(frame.prompt, intents):
        # a child frame that would re-ask its parent's question: the parent answers it directly
        trace.node(
            "event",
            f"{sd_plugin} did not split the intent; the parent seed answers it directly",
            parent=branch.node.id,
            frameId=frame.frame_id,
            status="failed",
        )
        return None, None
    fresh = state.stage_units(units)
    frame.current_turn_units.extend(fresh)
    frame.intents = intents
    # The kb-plugins learn of the staged units while the planner plans: retrieval (which needs both)
    # starts once both are done. With nothing staged, the seeds' first retrieve (from the kb-plugin the
    # pre-seed plan put first) starts while the planner plans; used only if the plan agrees.
    early = start_early_views(state, frame, branch, intents, pre, best) if not fresh else {}
    try:
        if early:
            # the retrieves (retrieve → solve is the longer chain) send their requests before the plan's
            await let_requests_out(state.ctx.supervisor)
        outcomes = await plan_and_solve(state, frame, branch, intents, pre, fresh, best, ref_prefix, early)
    except BaseException:
        cancel_early(*early.values())
        raise
    await settle_early_views(early, branch, frame)
    return outcomes, sd_plugin


def plans_seeds(state: TurnState) -> bool:
    """Is there an sd order for a pre-seed plan to choose? Not with one candidate (one sd-plugin enabled
    and plannable, or a pin): a plan of one candidate is that candidate, whatever the planner answers
    (`TurnState.stage_order`), so asking for it would only cost a planner call on every turn."""
    return len(state.stage_order("sd", None)) > 1


async def plan_and_detect(
    state: TurnState, frame: ExecutionFrame, branch: BranchRun
) -> tuple[Attempt | None, Plan | None]:
    """`buildPlan` pre-seed, then sd candidates in the plan's order; the expected first sd-plugin's
    detectSeeds runs beside the plan (`start_early_seeds`). With no sd order to plan (`plans_seeds`) the
    pre-seed plan is not asked for: the one candidate detects the seeds and the plan is None."""
    if not plans_seeds(state):
        attempt, _ = await detect_seeds(state, frame, branch, state.stage_order("sd", None))
        return attempt, None
    early = start_early_seeds(state, frame, branch)
    try:
        pre = await build_plan(state, frame, branch, "pre-seed", [])
        order = state.stage_order("sd", pre)
        remember_sd_first(state, branch.planner_id, pre, order)
        attempt, tried = await detect_seeds(state, frame, branch, order, early)
        await settle_early_seeds(early, branch, frame, order, tried)
    except BaseException:
        cancel_early(early)
        raise
    return attempt, pre


async def plan_and_solve(
    state: TurnState,
    frame: ExecutionFrame,
    branch: BranchRun,
    intents: list[IntentGroup],
    pre: Plan | None,
    fresh: list[KnowledgeUnit],
    best: dict[str, SeedOutcome],
    ref_prefix: str,
    early: dict[int, Early],
) -> list[SeedOutcome]:
    """`buildPlan` post-seed (with the kb notice of staged units), then every seed (in parallel)."""
    planned: list[Plan | None] = [None]

    async def plan_post() -> None:
        planned[0] = await build_plan(state, frame, branch, "post-seed", intents)

    notices = kb_notifications(state, frame, branch.node.id, "session-kus-added", "current-turn", fresh)
    await run_all([*notices, plan_post], state.ctx.supervisor)
    post = planned[0]
    validators, set_aside = validators_to_call(state, state.stage_order("val", post))
    plan = Plan(
        seedDetectorOrder=state.stage_order("sd", pre),
        kbPluginOrder=state.stage_order("kb", post),
        goalSolverOrder=state.stage_order("gs", post),
        validatorOrder=validators,
        decompose=bool(post and post.decompose and frame.can_open_child),
        framePurpose=(post.framePurpose if post else "") or frame.purpose,
    )
    frame.plan = plan
    for first in (plan.kbPluginOrder[:1], plan.goalSolverOrder[:1]):  # their workers start meanwhile
        for plugin_id in first:
            state.ctx.supervisor.prestart(plugin_id, state.artifact_path(plugin_id).artifacts)
    branch.node.output = {
        "plan": msgspec.to_builtins(plan),
        "planner": "plugin" if post else "kernel defaults",
        **({} if pre is not None or plans_seeds(state) else {"preSeed": "not asked: one sd candidate"}),
        **({"validatorsSetAside": set_aside} if set_aside else {}),
    }
    if plan.decompose:
        early = {}  # the seeds open child frames first; left unused (recorded by the caller)
    outcomes: list[SeedOutcome | None] = [None] * len(intents)

    async def one(index: int) -> None:
        ref = f"{ref_prefix}{index + 1}" if ref_prefix else f"intent-{index + 1}"
        seed = SeedRun(state, frame, branch, intents[index], ref, plan, run_frame, early.get(index))
        outcomes[index] = await seed.run(best)

    if len(intents) == 1:
        await one(0)
    else:
        async with anyio.create_task_group() as tg:
            for index in range(len(intents)):
                tg.start_soon(one, index)
    return [o for o in outcomes if o is not None]
