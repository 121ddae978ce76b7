"""The stage calls of the loop (docs/ARCHITECTURE.md §4, steps 2–6): plan, detect seeds, notify the
kb-plugins, retrieve (knowledge views), solve, validate. Each iterates candidates in plan order through
`call_plugin` with its op's payload (payloads.py) and returns what the frame or seed needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrpvm.protocol.document import IntentGroup, KnowledgeUnit, Plan
from mrpvm.protocol.envelope import (
    BuildPlanPayload,
    OnSessionEventPayload,
    PlanPhase,
    SessionEvent,
    SessionScope,
    ValidatePayload,
)

from ..validator_records import ValidatorRecords
from ..validator_records import load as load_validator_records
from .calls import call_plugin, relabel_outcome
from .concurrency import PendingCall, run_all
from .early import fitting_early
from .frame import ExecutionFrame
from .payloads import retrieve_key, retrieve_payload, seed_key, seed_request, solve_key, solve_payload
from .scope import Attempt, BranchRun
from .state import MAX_GUIDANCE
from .support import evidence_support
from .views import View, best_insufficient, view_from

if TYPE_CHECKING:
    from ..context import KernelContext
    from .early import Early
    from .state import TurnState


async def build_plan(
    state: TurnState, frame: ExecutionFrame, branch: BranchRun, phase: PlanPhase, intents: list[IntentGroup]
) -> Plan | None:
    """`buildPlan` by the branch's planner; None (kernel defaults) when it has no usable plan."""
    if branch.planner_id is None:
        return None
    payload = BuildPlanPayload(
        phase=phase,
        intents=intents,
        guidance=state.guidance(("mrp-plan-plugin", "frame")),
        descriptors=state.descriptors,
        pins=state.pins,
        preferences=state.preferences,
        stats=state.planner_stats(),
        depth=frame.depth,
        maxDepth=frame.max_depth,
        failures=frame.failures.notes(),
        llmCallsLeft=state.budget.llm_calls_left,
        knowledge=state.knowledge_profile(),
        learned=await state.learned(branch.planner_id),
    )
    attempt = await call_plugin(
        state,
        frame,
        branch,
        branch.planner_id,
        "buildPlan",
        frame.prompt,
        [],
        payload,
        parent=branch.node.id,
        label=f"plan {phase}",
        input_summary={"phase": phase, "intents": len(intents)},
    )
    if attempt.status == "success" and attempt.doc is not None and attempt.doc.plan is not None:
        return attempt.doc.plan
    return None


async def detect_seeds(
    state: TurnState, frame: ExecutionFrame, branch: BranchRun, order: list[str], early: Early | None = None
) -> tuple[Attempt | None, list[Attempt]]:
    """sd candidates in order until one returns valid CNL with intents or units; (found, tried).

    `early`: a detectSeeds already started (`start_early_seeds`), used when its plugin's turn comes."""
    mode, payload, guidance = seed_request(state, frame)
    tried: list[Attempt] = []
    previous: str | None = None
    for plugin_id in order:
        key = seed_key(plugin_id, mode, frame)
        attempt = await call_plugin(
            state,
            frame,
            branch,
            plugin_id,
            "detectSeeds",
            frame.prompt,
            guidance,
            payload,
            parent=branch.node.id,
            label=f"detect seeds ({mode})",
            memo_key=key,
            input_summary={"mode": mode},
            early=fitting_early(state, early, frame, plugin_id, key, units=guidance),
        )
        state.trace.edge(previous, attempt.node.id, "next-candidate")
        previous = attempt.node.id
        tried.append(attempt)
        doc = attempt.doc
        if attempt.status == "success" and doc is not None and (doc.intents or doc.units):
            return attempt, tried
    return None, tried


async def notify_kb(
    state: TurnState,
    frame: ExecutionFrame,
    parent: str,
    event: SessionEvent,
    scope: SessionScope,
    units: list[KnowledgeUnit],
) -> None:
    """Tell every enabled kb-plugin about session units (added / committed / discarded), in parallel."""
    await run_all(kb_notifications(state, frame, parent, event, scope, units), state.ctx.supervisor)


def kb_notifications(
    state: TurnState,
    frame: ExecutionFrame,
    parent: str,
    event: SessionEvent,
    scope: SessionScope,
    units: list[KnowledgeUnit],
) -> list[PendingCall]:
    """One `onSessionEvent` call per enabled kb-plugin, not started (for `run_all` with other calls)."""
    targets = state.enabled_ids("kb-plugin")
    if not targets or not units:
        return []
    payload = OnSessionEventPayload(event=event, scope=scope, turnId=state.request_id, units=units)
    prompt = f"Session {state.session.id}: {event} ({scope}, {len(units)} units)"
    label = f"{event} ({len(units)} units)"

    def one(plugin_id: str) -> PendingCall:
        return lambda: call_plugin(
            state,
            frame,
            None,
            plugin_id,
            "onSessionEvent",
            prompt,
            [],
            payload,
            parent=parent,
            label=label,
            input_summary={"event": event, "scope": scope, "units": len(units)},
        )

    return [one(plugin_id) for plugin_id in targets]


def prestart_views(state: TurnState, order: list[str], start: int, limit: int | None = None) -> list[str]:
    """Start a worker of each kb-plugin the seed's fallback may still retrieve from (`order[start:]`, at most
    `limit` and as many as the fallback budget has calls left), all at once and without waiting: in a
    one-turn process each would otherwise start only when its retrieve comes, one after the other. A running
    worker is left as it is (`Supervisor.prestart`); the plugin ids started.

    A seed's walk starts them in two steps (seeds.py): the next one when the first view proves weak, the
    rest once that one's view differs from every view already solved (`next_view`'s `settled`): a view that
    repeats one ends the walk (the views converged), and a worker started for it would start for nothing
    (a cold `mrpvm ask`: one interpreter fewer on a 2-core machine)."""
    left_calls = state.budget.fallback_calls_left
    count = left_calls if limit is None else min(limit, left_calls)
    left = order[start : start + count]
    prestart = state.ctx.supervisor.prestart
    return [p for p in left if prestart(p, state.artifact_path(p).artifacts)]


async def next_view(
    state: TurnState,
    frame: ExecutionFrame,
    branch: BranchRun,
    intent: IntentGroup,
    order: list[str],
    cursor: list[int],
    parent: str,
    previous: list[str | None],
    *,
    ref: str | None = None,
    early: Early | None = None,
    settled: set[str] | None = None,
) -> View | None:
    """kb candidates from `cursor[0]` on until one is sufficient; else the best insufficient view.

    Returns None when no candidate is left to try. `previous[0]` threads the next-candidate chain.
    `early`: a retrieve already started (`start_early_views`), used if it is exactly a call made here.
    `settled`: the evidence keys of the seed's views solved without an accepted answer; when there are
    some, a view whose evidence is none of them starts the later candidates' workers (`prestart_views`).
    """
    if cursor[0] >= len(order):
        return None
    units = state.visible_units()
    payload = retrieve_payload(state, intent, units)
    insufficient: list[View] = []
    while cursor[0] < len(order):
        plugin_id = order[cursor[0]]
        cursor[0] += 1
        key = retrieve_key(state, plugin_id, intent)
        attempt = await call_plugin(
            state,
            frame,
            branch,
            plugin_id,
            "retrieve",
            intent.intent,
            units,
            payload,
            parent=parent,
            label=f"retrieve {(ref or intent.ref)}",
            memo_key=key,
            intent_ref=(ref or intent.ref),
            input_summary={"units": len(units), "kbId": state.kb_id},
            early=fitting_early(state, early, frame, plugin_id, key),
        )
        state.trace.edge(previous[0], attempt.node.id, "next-candidate")
        previous[0] = attempt.node.id
        view = view_of(attempt)
        if view is None:
            continue
        if settled and cursor[0] < len(order) and not (view.evidence and view.key in settled):
            prestart_views(state, order, cursor[0])  # the walk may go on: they start beside this view's solve
        if view.sufficient:
            return view
        insufficient.append(view)
    best, why, measures = best_insufficient(intent.intent, insufficient)
    for view in insufficient:
        if view.node is not None:
            kept = {"keptAsBestInsufficient": True, "keptBecause": why} if view is best else {}
            view.node.output = {**view.node.output, "viewMeasure": measures[str(view.plugin_id)], **kept}
    return best


async def solve(
    state: TurnState,
    frame: ExecutionFrame,
    branch: BranchRun,
    plugin_id: str,
    intent: IntentGroup,
    view: View,
    parent: str,
    allow_decompose: bool,
    *,
    ref: str | None = None,
    early: Early | None = None,
) -> Attempt:
    """One gs candidate on a view. `early`: a solve already started (`start_early_views`), used if it is
    exactly the call made here."""
    payload = solve_payload(state, intent, view, allow_decompose)
    memo_key = solve_key(plugin_id, intent, view)
    return await call_plugin(
        state,
        frame,
        branch,
        plugin_id,
        "solve",
        intent.intent,
        view.evidence,
        payload,
        parent=parent,
        label=f"solve {(ref or intent.ref)}",
        memo_key=memo_key,
        intent_ref=(ref or intent.ref),
        input_summary={
            "evidence": len(view.evidence),
            "guidance": [u.id for u in payload.guidance][:MAX_GUIDANCE],
        },
        early=fitting_early(state, early, frame, plugin_id, memo_key, payload),
    )


def validator_records(ctx: KernelContext) -> ValidatorRecords:
    """The home's validator records, read once per kernel context."""
    records = ctx.validator_records
    if records is None:
        records = ctx.validator_records = load_validator_records(ctx.store)
    return records


def validators_to_call(state: TurnState, order: list[str]) -> tuple[list[str], dict[str, str]]:
    """(the validators worth calling, why each other one is set aside): a pinned validator is always
    called; any other is left out when the evaluations measured its verdicts to be noise both ways
    (kernel/validator_records.py `sets_aside`), so it spends no call on a verdict the kernel would
    discount or overrule."""
    if state.pins.val:
        return order, {}
    records = validator_records(state.ctx)
    aside = {plugin_id: why for plugin_id in order if (why := records.sets_aside(plugin_id))}
    return [plugin_id for plugin_id in order if plugin_id not in aside], aside


async def validate(
    state: TurnState,
    frame: ExecutionFrame,
    branch: BranchRun,
    order: list[str],
    intent: IntentGroup,
    answer: Attempt,
    view: View,
    *,
    ref: str | None = None,
) -> tuple[str, list[str], str | None]:
    """Validators in order. Returns (verdict, warnings, rejecting node id).

    verdict: `rejected` (one rejected: VALIDATION_REJECTED), `accepted` (at least one accepted, none
    rejected) or `unvalidated` (none could judge: unsupported, skipped or error; errors warn). A rejection
    by a validator the evaluations measured as untrustworthy, of an answer its evidence supports, is
    overruled (VALIDATION_OVERRULED, a warning; kernel/validator_records.py); an acceptance by one measured
    not to tell right answers from wrong ones is not counted (VALIDATION_DISCOUNTED in the trace).
    """
    doc = answer.doc
    assert doc is not None
    guidance = state.guidance(("val-plugin",))
    payload = ValidatePayload(
        intent=intent,
        answer=doc.answer or "",
        sources=list(doc.sources or []),
        evidence=view.evidence,
        guidance=guidance,
    )
    verdict, warnings = "unvalidated", []
    previous = None
    for plugin_id in order:
        attempt = await call_plugin(
            state,
            frame,
            branch,
            plugin_id,
            "validate",
            intent.intent,
            view.evidence,
            payload,
            parent=answer.node.id,
            label=f"validate {(ref or intent.ref)} answer of {answer.plugin_id}",
            intent_ref=(ref or intent.ref),
            input_summary={"answerFrom": answer.plugin_id, "guidance": [u.id for u in guidance]},
        )
        state.trace.edge(attempt.node.id, answer.node.id, "validates")
        state.trace.edge(previous, attempt.node.id, "next-candidate")
        previous = attempt.node.id
        if attempt.status == "rejected":
            reason = attempt.doc.result.result if attempt.doc else ""
            support = evidence_support(doc.answer or "", list(doc.sources or []), view.evidence)
            overruled, why = validator_records(state.ctx).overrules(plugin_id, support)
            if overruled:  # a validator measured to reject right answers cannot reject a supported one
                attempt.node.output = {**attempt.node.output, "code": "VALIDATION_OVERRULED", "why": why}
                relabel_outcome(branch, attempt, "overruled")
                warnings.append(f"{plugin_id} rejected the answer of {answer.plugin_id} ({reason}); {why}")
                continue
            attempt.node.output = {**attempt.node.output, "code": "VALIDATION_REJECTED"}
            warnings.append(f"{plugin_id} rejected the answer of {answer.plugin_id}: {reason}".rstrip(": "))
            return "rejected", warnings, attempt.node.id
        if attempt.status == "accepted":
            discounted, why = validator_records(state.ctx).discounts_acceptance(plugin_id)
            if discounted:  # a validator measured to accept right and wrong answers alike validates nothing
                attempt.node.output = {**attempt.node.output, "code": "VALIDATION_DISCOUNTED", "why": why}
                relabel_outcome(branch, attempt, "overruled")
                continue
            verdict = "accepted"
        elif attempt.status == "error":
            code = attempt.node.output.get("code") or (attempt.doc.result.code if attempt.doc else None)
            warnings.append(
                f"validator {plugin_id} failed ({code or 'error'}); the answer is not validated by it"
            )
    return verdict, warnings, None


def view_of(attempt: Attempt) -> View | None:
    """The view a retrieve attempt yields, or None when it failed."""
    return view_from(attempt.plugin_id, attempt.status, attempt.doc, attempt.node)
