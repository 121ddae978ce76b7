"""The kernel loop (DESIGN.md §4): one chat turn through planners, frames, seeds and backtracking.

    result = await run_turn(ctx, TurnRequest("How does WAL mode work?", session_id=...))

Per turn, in a root frame: rank planners; per planner (a branch): `buildPlan` pre-seed → sd candidates
until valid CNL → stage current-turn KUs and notify kb-plugins → `buildPlan` post-seed → one seed per
intent, in parallel up to `maxParallelSeeds`. Per seed: knowledge views (kb candidates until one is
sufficient, else the best insufficient), gs candidates on each view until an answer survives
validation; `needs-decomposition` or a plan's `decompose` opens a child frame whose answers return to
the seed. Backtracking: next candidate → next knowledge view → next decomposition branch → next
planner; when every path is weak the best weak answer is returned with its status. Then the response
document, `recordOutcome` to the planners, and commit (success/weak) or discard (failed) of staged KUs.

Independent plugin calls overlap (same calls, same results, same trace nodes as in sequence):
- the sd-plugin the plan is expected to put first starts `detectSeeds` while the planner plans pre-seed;
- the kb notice of staged units runs beside the post-seed plan; with nothing staged, each seed's first
  retrieve starts then instead (before the plan's request), and once it returns a sufficient view the
  solve by the pre-seed plan's first gs-plugin starts on it;
- `recordOutcome` and the kb commit/discard notice run side by side while the response is built; with
  `run_turn(..., defer_outcome=True)` (the daemon) the turn does not wait for `recordOutcome`: it runs
  on in `ctx.background`, its node is stored `pending` and updated when it ends, and a later turn waits
  for it before calling that planner (so plans see it as in sequence).
An early call (`stages.Early`) is used only if the stage logic reaches exactly that call, is recorded
then, and only plugins declaring no LLM calls start early; one never reached is an `unused` event node.

The CLI and HTTP daemon are thin shells over `run_turn`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from mrpvm.protocol.document import IntentGroup, Plan
from mrpvm.protocol.envelope import Pins, RecordOutcomePayload
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

from ..budgets import RequestBudget
from ..errors import BadInput, TurnNotFound
from ..frames import ExecutionFrame
from ..records import PlannerOutcome, SessionRecord, TurnRecord
from ..trace import PROMPT_PREVIEW, TraceRecorder, clip
from .early import Early, concurrently, hold_spin, run_all
from .response import (
    ResponseDocument,
    SeedOutcome,
    build_group,
    combine_children,
    document_markdown,
    turn_status,
)
from .stages import (
    MAX_HISTORY,
    BranchRun,
    EventHook,
    TurnState,
    View,
    check_pins,
    empty_view,
    intent_key,
)

if TYPE_CHECKING:
    from ..context import KernelContext

PLANNER_PRIOR = 0.5
FALLBACK_ACT = "describe"

JSON_KEYS = (
    "request_id",
    "session_id",
    "planner_plugin",
    "seed_detector_plugin",
    "kb_plugin",
    "goal_solver_plugin",
    "response_markdown",
    "response_document",
    "execution_trace",
    "llm_calls",
    "duration_ms",
)


class TurnRequest(msgspec.Struct):
    """One chat turn. `kb` is a KB name or id to mount (default: the session's); `pins` force plugins."""

    message: str
    session_id: str | None = None
    kb: str | None = None
    pins: Pins = Pins()
    max_llm_calls: int | None = None


class TurnResult(msgspec.Struct, kw_only=True):
    request_id: str
    session_id: str
    planner_plugin: str | None
    seed_detector_plugin: str | None
    kb_plugin: str | None
    goal_solver_plugin: str | None
    response_markdown: str
    response_document: dict[str, Any]
    execution_trace: dict[str, Any]
    llm_calls: int
    duration_ms: float
    status: str
    plugin_ms: float = 0.0  # wall time with a plugin call in flight (overlaps once), for benchmarks

    def as_json(self) -> dict[str, Any]:
        """Exactly the keys `mrpvm ask --json` prints."""
        return {key: getattr(self, key) for key in JSON_KEYS}


class FrameOutcome(msgspec.Struct, kw_only=True):
    node_id: str
    status: str
    outcomes: list[SeedOutcome] | None
    planner_id: str | None = None
    sd_plugin: str | None = None


class _Slot:
    """A seed's hold on the request-wide seed limiter; released while the seed waits for a child frame."""

    __slots__ = ("limiter", "held")

    def __init__(self, limiter: anyio.CapacityLimiter):
        self.limiter, self.held = limiter, False

    async def acquire(self) -> None:
        try:
            self.limiter.acquire_nowait()  # a free slot needs no trip through the event loop
        except anyio.WouldBlock:
            await self.limiter.acquire()
        self.held = True

    def release(self) -> None:
        if self.held:
            self.held = False
            self.limiter.release()


# --------------------------------------------------------------------------- the turn


async def run_turn(
    ctx: KernelContext,
    request: TurnRequest,
    *,
    on_event: EventHook | None = None,
    defer_outcome: bool = False,
) -> TurnResult:
    """Run one chat turn end to end and commit it (or discard its staged units).

    `on_event(dict)` (optional, synchronous) hears `turn-start` and every plugin call's `plugin-start`/`plugin-end`.
    When the turn ends, however it ends, every LLM token issued for it dies (with `defer_outcome`, once
    the recordOutcome left running has ended too).
    `defer_outcome`: answer without waiting for recordOutcome (the daemon): it runs on as a job of
    `ctx.background`, sends no progress events, and its trace node may be `pending` in the result; the
    stored trace is updated when it ends (`ctx.background.drain()` waits for that; `aclose` drains).
    """
    request_id = "req_" + secrets.token_hex(8)
    deferred: list[asyncio.Task] = []  # the recordOutcome job left running: it expires the tokens
    try:
        return await _run_turn(ctx, request, request_id, on_event, defer_outcome, deferred)
    finally:
        if ctx.llm is not None and not deferred:
            ctx.llm.expire_request(request_id)


async def _run_turn(
    ctx: KernelContext,
    request: TurnRequest,
    request_id: str,
    on_event: EventHook | None,
    defer_outcome: bool = False,
    deferred: list[asyncio.Task] | None = None,
) -> TurnResult:
    started = time.perf_counter()
    message = request.message.strip()
    if not message:
        raise BadInput("EMPTY_MESSAGE", "the message is empty")
    store, config = ctx.store, ctx.config
    check_pins(ctx, request.pins)
    max_calls = config.engine.budget.maxLLMCalls if request.max_llm_calls is None else request.max_llm_calls
    if max_calls < 0:
        raise BadInput("BAD_BUDGET", f"max LLM calls must not be negative (got {max_calls})")
    fresh = not request.session_id
    # A fresh session is stored by the turn's own commit (one transaction per turn).
    session = store.draft_session(kb_id=request.kb) if fresh else store.get_session(request.session_id)
    kb_ref = request.kb or session.kbId
    kb = store.get_kb(kb_ref) if kb_ref else None
    budget = RequestBudget(
        max_calls, config.engine.budget.requestTimeoutMs, config.engine.budget.maxFrameDepth
    )
    if ctx.llm is not None:
        ctx.llm.open_request(request_id, budget)  # the bridge charges upstream calls to this budget live
    trace = TraceRecorder(request_id, session.id)
    history = store.recent_user_messages(session.id, MAX_HISTORY) if session.turnCount else []
    state = TurnState(
        ctx,
        request_id=request_id,
        message=message,
        session=session,
        kb=kb,
        pins=request.pins,
        budget=budget,
        trace=trace,
        session_units=[] if fresh else store.session_units(session.id),
        history=history,
    )
    if on_event is not None:
        state.on_event = on_event
        state.emit(event="turn-start", sessionId=session.id, kbId=kb.id if kb else None)
    root = ExecutionFrame(request_id, depth=0, max_depth=budget.max_depth, prompt=message)
    try:
        frame = await run_frame(state, root, parent=None, ref_prefix="")
    except BaseException:
        with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
            await state.notify_kb(
                root, root.node_id or "", "session-kus-discarded", "current-turn", state.staged
            )
        raise
    status = frame.status
    first = _representative(frame.outcomes or [])
    plugin_ids = {
        "planner": frame.planner_id,
        "sd": frame.sd_plugin,
        "kb": first.kb_plugin if first else None,
        "gs": first.gs_plugin if first else None,
    }
    keep = status != "failed"
    # recordOutcome to the planners and the commit/discard notice to the kb-plugins are independent: they
    # run concurrently, and the response document is built while they are in flight. With
    # `defer_outcome` the turn does not wait for recordOutcome (the answer does not depend on it): it
    # runs on in `ctx.background`, its node is stored `pending` and updated once it ends, and a later
    # turn waits for it before calling that planner.
    outcomes: list[PlannerOutcome] = []
    committed: asyncio.Future[bool] | None = None
    recording: list[asyncio.Task] = []
    calls = [] if defer_outcome else _outcome_calls(state, root, outcomes)
    if defer_outcome:
        committed, recording = _record_outcomes(state, root, outcomes, deferred)
    calls += state.kb_notifications(
        root,
        root.node_id or "",
        "session-kus-committed" if keep else "session-kus-discarded",
        "session" if keep else "current-turn",
        state.staged,
    )
    try:
        if calls:
            async with concurrently(calls, ctx.supervisor):  # the requests are out when the body runs
                markdown, document = _response(state, frame, request_id, session.id, status, plugin_ids)
        else:
            if recording:
                with hold_spin(ctx.supervisor):
                    await asyncio.sleep(0)  # the recordOutcome requests go out, their nodes recorded
            markdown, document = _response(state, frame, request_id, session.id, status, plugin_ids)
        duration_ms = (time.perf_counter() - started) * 1000.0
        document.durationMs = round(duration_ms, 3)
        document.llmCalls = budget.llm_calls_used
        doc_dict = msgspec.to_builtins(document)
        trace_dict = await _finish(
            state,
            root,
            status,
            markdown,
            doc_dict,
            plugin_ids,
            duration_ms,
            new_session=session if fresh else None,
            planner_outcomes=outcomes,
        )
    except BaseException:
        if committed is not None:
            committed.set_result(False)
        raise
    if committed is not None:  # store the trace again if a call was still running at the commit
        committed.set_result(not all(task.done() for task in recording))
    return TurnResult(
        request_id=request_id,
        session_id=session.id,
        planner_plugin=plugin_ids["planner"],
        seed_detector_plugin=plugin_ids["sd"],
        kb_plugin=plugin_ids["kb"],
        goal_solver_plugin=plugin_ids["gs"],
        response_markdown=markdown,
        response_document=doc_dict,
        execution_trace=trace_dict,
        llm_calls=budget.llm_calls_used,
        duration_ms=round(duration_ms, 3),
        status=status,
        plugin_ms=round(state.plugin_ms, 3),
    )


def _representative(outcomes: list[SeedOutcome]) -> SeedOutcome | None:
    return max(outcomes, key=lambda o: o.rank(), default=None)


def _response(
    state: TurnState,
    frame: FrameOutcome,
    request_id: str,
    session_id: str,
    status: str,
    plugin_ids: dict[str, str | None],
) -> tuple[str, ResponseDocument]:
    """The response document (durationMs and llmCalls are set by the caller once the turn is over) and
    its Markdown, built once."""
    lookup = {u.id: u for u in state.visible_units()}
    groups = [build_group(o, state.origin, lookup) for o in frame.outcomes or []]
    document = ResponseDocument(
        requestId=request_id,
        sessionId=session_id,
        status=status,
        groups=groups,
        warnings=list(dict.fromkeys(state.warnings)),
        plugins={k: v for k, v in plugin_ids.items() if v},
        currentTurnUnits=len(state.staged),
    )
    return document_markdown(document), document


async def _finish(
    state: TurnState,
    root: ExecutionFrame,
    status: str,
    markdown: str,
    document: dict[str, Any],
    plugin_ids: dict[str, str | None],
    duration_ms: float,
    *,
    new_session: SessionRecord | None = None,
    planner_outcomes: list[PlannerOutcome] | None = None,
) -> dict[str, Any]:
    """Commit the turn with its trace: staged units promoted on success/weak, discarded on failure.

    The kb-plugins have been told (committed / discarded) by the caller. A failed turn is still recorded
    (with no units) so its trace stays explainable. One transaction stores a fresh session, the turn, its
    units and the planner-level EWMA.
    """
    trace, ctx = state.trace, state.ctx
    parent = root.node_id or ""
    keep = status != "failed"
    node = trace.node(
        "event",
        f"commit ({'promote' if keep else 'discard'} {len(state.staged)} staged units)",
        parent=parent,
        frameId=root.frame_id,
        status="success",
    )
    preferences = None
    if status == "success":
        prev = state.preferences
        preferences = Pins(
            planner=plugin_ids["planner"] or prev.planner,
            sd=plugin_ids["sd"] or prev.sd,
            kb=plugin_ids["kb"] if plugin_ids["kb"] not in (None, "decomposition") else prev.kb,
            gs=plugin_ids["gs"] if plugin_ids["gs"] not in (None, "decomposition") else prev.gs,
            val=prev.val,
        )
    record = TurnRecord(
        requestId=state.request_id,
        sessionId=state.session.id,
        userMessage=state.message,
        responseMarkdown=markdown,
        responseDocument=document,
        trace=trace.to_builtins(),
        status=status,
        pluginIds={k: v for k, v in plugin_ids.items() if v},
        llmCalls=state.budget.llm_calls_used,
        durationMs=round(duration_ms, 3),
    )
    try:
        ctx.store.commit_turn(
            record,
            state.staged if keep else [],
            preferences,
            session=new_session,
            planner_outcomes=planner_outcomes or (),
        )
        return record.trace
    except BaseException:
        node.status = "error"
        if keep:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
                await state.notify_kb(root, parent, "session-kus-discarded", "current-turn", state.staged)
        raise


def _record_outcomes(
    state: TurnState,
    root: ExecutionFrame,
    outcomes: list[PlannerOutcome],
    jobs: list[asyncio.Task] | None = None,
) -> tuple[asyncio.Future[bool] | None, list[asyncio.Task]]:
    """Start recordOutcome to every planner that led a branch, as a job of `ctx.background` that the
    turn does not wait for (appended to `jobs`: the job, not the turn, expires the request's LLM
    tokens, since its calls may still use them).

    The calls (the returned tasks) start at the caller's next event-loop trip. The caller sets the
    returned future (None when no planner led a branch) once the turn is over: True when the turn was
    committed while a call still ran, so the job stores the turn's trace again once the calls end.
    """
    calls = _outcome_calls(state, root, outcomes, deferred=True)
    if not calls:
        return None, []
    ctx = state.ctx
    loop = asyncio.get_running_loop()
    committed: asyncio.Future[bool] = loop.create_future()

    async def held(call: Callable[[], Awaitable[Any]]) -> None:
        with hold_spin(ctx.supervisor):  # nobody waits for it: it must never busy-poll the loop
            await call()

    tasks = [loop.create_task(held(call)) for call in calls]  # list order = trace node order

    async def job() -> None:
        try:
            await asyncio.wait(tasks)
        finally:
            if ctx.llm is not None:
                ctx.llm.expire_request(state.request_id)
        failed = [t.exception() for t in tasks if not t.cancelled() and t.exception() is not None]
        if await committed:
            try:
                ctx.store.update_turn_trace(state.request_id, state.trace.to_builtins())
            except TurnNotFound:
                pass  # the session (with its turns) was deleted meanwhile
        if failed:
            raise failed[0]

    planners = [b.planner_id for b in state.branches if b.planner_id is not None]
    job_task = ctx.background.start(job(), planners, state.session.id, tasks, scope=state.kb_id)
    if jobs is not None:
        jobs.append(job_task)
    return committed, tasks


def _outcome_calls(
    state: TurnState, root: ExecutionFrame, outcomes: list[PlannerOutcome], deferred: bool = False
) -> list[Callable[[], Awaitable[Any]]]:
    """DS027 recordOutcome to every planner that led a branch (calls not started). Each appends the
    planner-level outcome the kernel folds into its EWMA when the turn commits. `deferred`: nobody
    waits for them (`TurnState.call(..., background=True)`)."""
    by_planner: dict[str, list[BranchRun]] = {}
    for branch in state.branches:
        if branch.planner_id is not None:
            by_planner.setdefault(branch.planner_id, []).append(branch)
    order = {"success": 2, "weak": 1, "failed": 0}

    def one(planner_id: str, branches: list[BranchRun]) -> Callable[[], Awaitable[Any]]:
        status = max((b.status for b in branches), key=lambda s: order.get(s, 0))
        attempts = [a for b in branches for a in b.attempts]
        duration = sum(b.duration_ms for b in branches)
        payload = RecordOutcomePayload(
            requestId=state.request_id,
            plannerId=planner_id,
            status=status,
            attempts=attempts,
            durationMs=round(duration, 3),
            llmCalls=sum(a.llmCalls for a in attempts),
            intents=root.intents,
        )
        outcomes.append(PlannerOutcome(planner_id, status == "success", duration))
        return lambda: state.call(
            root,
            None,
            planner_id,
            "recordOutcome",
            state.message,
            [],
            payload,
            parent=root.node_id or "",
            label=f"record outcome ({status})",
            input_summary={"status": status, "attempts": len(attempts)},
            background=deferred,
        )

    return [one(planner_id, branches) for planner_id, branches in by_planner.items()]


# --------------------------------------------------------------------------- frames and branches


def rank_planners(state: TurnState) -> list[str | None]:
    """Explicit pin > session preference > planner-level EWMA (config order breaks ties)."""
    if state.pins.planner:
        return [state.pins.planner]
    enabled = state.enabled_ids("mrp-plan-plugin")
    base = [p for p in dict.fromkeys([*state.ctx.config.plugins.plannerOrder, *enabled]) if p in enabled]
    if not base:
        return [None]
    stats = {s.pluginId: s for s in state.planner_stats()}

    def score(planner_id: str) -> float:
        s = stats.get(planner_id)
        return s.successRate if s is not None and s.samples > 0 else PLANNER_PRIOR

    ranked = sorted(base, key=lambda p: (-score(p), base.index(p)))
    preferred = state.preferences.planner
    if preferred in ranked:
        ranked.remove(preferred)
        ranked.insert(0, preferred)
    return list(ranked)


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
    best: dict[str, SeedOutcome] = {}
    results: list[tuple[BranchRun, list[SeedOutcome], str | None]] = []
    previous: str | None = None
    for planner_id in rank_planners(state):
        if results and state.budget.expired():
            state.warnings.append("the request deadline passed before every planner was tried")
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
        outcomes, sd_plugin = await run_branch(state, frame, branch, best, ref_prefix)
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

    # The branch with the best seeds wins; a weak seed takes a better answer another branch found for it.
    def branch_score(item: tuple[BranchRun, list[SeedOutcome], str | None]) -> tuple[float, ...]:
        merged = [best.get(intent_key(o.intent), o) for o in item[1]]
        count = max(1, len(merged))
        own = sum(o.rank()[0] for o in item[1]) / count
        return (sum(o.rank()[0] for o in merged) / count, own, -results.index(item))

    branch, outcomes, sd_plugin = max(results, key=branch_score)
    final = [best.get(intent_key(o.intent), o) for o in outcomes]
    frame.status = turn_status(final)
    frame.partial = {o.ref: o for o in final}
    trace.finish(node, frame.status, chosenBranch=branch.node.id)
    for outcome in final:
        result = trace.node(
            "result",
            f"{outcome.ref} {outcome.status}",
            parent=node.id,
            frameId=frame.frame_id,
            status=outcome.status,
            output={"answer": clip(outcome.answer, 600), "validation": outcome.validation},
        )
        trace.edge(outcome.node_id, result.id, "produces")
    return FrameOutcome(
        node_id=node.id,
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
    sd_attempt, pre = await _plan_and_detect(state, frame, branch)
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
    fresh = state.stage_units(units)
    frame.current_turn_units.extend(fresh)
    frame.intents = intents
    # The kb-plugins learn of the staged units while the planner plans: retrieval (which needs both)
    # starts once both are done. With nothing staged, the seeds' first retrieve (from the kb-plugin the
    # planner's first plan put first) starts while the planner plans; used only if the plan agrees.
    early = _early_views(state, frame, branch, intents, pre, best) if not fresh else {}
    try:
        if early:
            # the retrieves (retrieve → solve is the longer chain) send their requests before the plan's
            with hold_spin(state.ctx.supervisor):
                await asyncio.sleep(0)
        outcomes = await _plan_and_solve(state, frame, branch, intents, pre, fresh, best, ref_prefix, early)
    except BaseException:
        for item in early.values():
            item.cancel()
        raise
    for item in early.values():
        item.follow = None  # every seed is done: a solve started on a late view now could not be used
    for item in early.values():
        await item.settle()
        item.discard(
            branch.node.id, frame.frame_id, "the plan did not start with it or the seed did not need it"
        )
        if item.next is not None:
            await item.next.settle()
            item.next.discard(
                branch.node.id, frame.frame_id, "the plan did not start with it or the view differed"
            )
    return outcomes, sd_plugin


def _early_views(
    state: TurnState,
    frame: ExecutionFrame,
    branch: BranchRun,
    intents: list[IntentGroup],
    pre: Plan | None,
    best: dict[str, SeedOutcome],
) -> dict[int, Early]:
    """Seed index -> its first retrieve, started early (only when a planner will plan post-seed); once
    it answers with a sufficient view, the solve by the pre-seed plan's first gs-plugin starts on it
    (`Early.follow`), while the planner may still be planning post-seed."""
    if branch.planner_id is None or not intents:
        return {}
    order = state.stage_order("kb", pre)
    if not order:
        return {}
    solvers = state.stage_order("gs", pre)
    early: dict[int, Early] = {}
    for index, intent in enumerate(intents[: state.limiter.total_tokens]):
        prior = best.get(intent_key(intent))
        if prior is not None and prior.status == "success":
            continue  # the seed reuses that answer
        item = state.early_retrieve(frame, intent, order[0])
        if item is not None:
            if solvers:
                item.follow = _early_solve(state, frame, intent, solvers[0])
            early[index] = item
    return early


def _early_solve(
    state: TurnState, frame: ExecutionFrame, intent: IntentGroup, plugin_id: str
) -> Callable[[Early], Early | None]:
    return lambda retrieve: state.early_solve(frame, intent, retrieve, plugin_id)


async def _plan_and_solve(
    state: TurnState,
    frame: ExecutionFrame,
    branch: BranchRun,
    intents: list[IntentGroup],
    pre: Plan | None,
    fresh: list[Any],
    best: dict[str, SeedOutcome],
    ref_prefix: str,
    early: dict[int, Early],
) -> list[SeedOutcome]:
    """`buildPlan` post-seed (with the kb notice of staged units), then every seed (in parallel)."""
    planned: list[Plan | None] = [None]

    async def plan_post() -> None:
        planned[0] = await state.build_plan(frame, branch, "post-seed", intents)

    await run_all(
        [
            *state.kb_notifications(frame, branch.node.id, "session-kus-added", "current-turn", fresh),
            plan_post,
        ],
        state.ctx.supervisor,
    )
    post = planned[0]
    plan = Plan(
        seedDetectorOrder=state.stage_order("sd", pre),
        kbPluginOrder=state.stage_order("kb", post),
        goalSolverOrder=state.stage_order("gs", post),
        validatorOrder=state.stage_order("val", post),
        decompose=bool(post and post.decompose and frame.can_open_child),
        framePurpose=(post.framePurpose if post else "") or frame.purpose,
    )
    frame.plan = plan
    branch.node.output = {
        "plan": msgspec.to_builtins(plan),
        "planner": "plugin" if post else "kernel defaults",
    }
    if plan.decompose:
        early = {}  # the seeds open child frames first; left unused (recorded by the caller)
    outcomes: list[SeedOutcome | None] = [None] * len(intents)

    async def one(index: int) -> None:
        ref = f"{ref_prefix}{index + 1}" if ref_prefix else f"intent-{index + 1}"
        seed = SeedRun(state, frame, branch, intents[index], ref, plan, early.get(index))
        outcomes[index] = await seed.run(best)

    if len(intents) == 1:
        await one(0)
    else:
        async with anyio.create_task_group() as tg:
            for index in range(len(intents)):
                tg.start_soon(one, index)
    return [o for o in outcomes if o is not None]


async def _plan_and_detect(
    state: TurnState, frame: ExecutionFrame, branch: BranchRun
) -> tuple[Any, Plan | None]:
    """`buildPlan` pre-seed, then sd candidates in the plan's order.

    The sd-plugin the plan is expected to put first (what this planner put first last time, else the
    kernel's default order) starts its detectSeeds while the planner plans: its request does not depend
    on the plan. It is used only if the plan's order reaches it (recorded as unused otherwise), and only
    for sd-plugins that declare no LLM calls, so the outcome is the same as calling in sequence.
    """
    guesses: dict[str | None, str] = state.ctx.state.setdefault("sd_first", {})
    early = None
    if branch.planner_id is not None:
        defaults = state.stage_order("sd", None)
        guess = guesses.get(branch.planner_id) if state.pins.sd is None else None
        if guess is None or guess not in state.enabled_ids("sd-plugin"):
            guess = defaults[0] if defaults else None
        if guess is not None:
            early = state.early_seeds(frame, guess)
    if early is None:
        pre = await state.build_plan(frame, branch, "pre-seed", [])
        order = state.stage_order("sd", pre)
        if pre is not None and order:
            guesses[branch.planner_id] = order[0]
        attempt, _ = await state.detect_seeds(frame, branch, order)
        return attempt, pre
    try:
        pre = await state.build_plan(frame, branch, "pre-seed", [])
        order = state.stage_order("sd", pre)
        if pre is not None and order:
            guesses[branch.planner_id] = order[0]
        attempt, tried = await state.detect_seeds(frame, branch, order, early)
        await early.settle()
    except BaseException:
        early.cancel()
        raise
    if early.plugin_id not in order:
        why = "the plan did not list it"
    elif any(a.plugin_id == early.plugin_id for a in tried):
        why = "the call its turn came to differed (or its result was known)"
    else:
        why = "an earlier candidate answered"
    early.discard(branch.node.id, frame.frame_id, why)  # no-op when it was used
    return attempt, pre


# --------------------------------------------------------------------------- one seed


class SeedRun:
    """Resolve one seed: decomposition branch (if planned), knowledge views × goal solvers, validation."""

    def __init__(
        self,
        state: TurnState,
        frame: ExecutionFrame,
        branch: BranchRun,
        intent: IntentGroup,
        ref: str,
        plan: Plan,
        early: Early | None = None,
    ):
        self.state, self.frame, self.branch, self.intent, self.ref, self.plan = (
            state,
            frame,
            branch,
            intent,
            ref,
            plan,
        )
        self.early = early  # its first retrieve, started while the planner planned (see run_branch)
        self.key = intent_key(intent)
        self.candidates: list[SeedOutcome] = []
        self.decomposed = False
        self.slot = _Slot(state.limiter)
        self.node_id = ""
        self.last_step: str | None = None  # the last view or decomposition node, for next-view/next-branch

    async def run(self, best: dict[str, SeedOutcome]) -> SeedOutcome:
        trace, frame = self.state.trace, self.frame
        node = trace.node(
            "seed",
            f"{self.ref} {self.intent.act}: {clip(self.intent.intent, 120)}",
            parent=self.branch.node.id,
            frameId=frame.frame_id,
            input={"act": self.intent.act, "intent": clip(self.intent.intent, PROMPT_PREVIEW)},
        )
        self.node_id = node.id
        frame.seeds.append(node.id)
        prior = best.get(self.key)
        if prior is not None and prior.status == "success":
            node.ref = f"reuses {prior.seed_node}"
            trace.edge(prior.seed_node, node.id, "reuses")
            trace.finish(node, "success")
            return prior
        await self.slot.acquire()
        try:
            outcome = await self._resolve()
        finally:
            self.slot.release()
        outcome.seed_node = node.id
        trace.finish(node, outcome.status)
        return outcome

    def _outcome(self, status: str, **fields: Any) -> SeedOutcome:
        return SeedOutcome(
            intent=self.intent, ref=self.ref, status=status, frame_id=self.frame.frame_id, **fields
        )

    async def _resolve(self) -> SeedOutcome:
        state, frame = self.state, self.frame
        if self.plan.decompose:
            done = await self._decompose(self.node_id, "the plan asked for decomposition")
            if done is not None:
                return done
        kb_order, cursor, previous = self.plan.kbPluginOrder, [0], [None]
        views = 0
        while True:
            view = await state.next_view(
                frame,
                self.branch,
                self.intent,
                kb_order,
                cursor,
                self.node_id,
                previous,
                ref=self.ref,
                early=self.early,
            )
            if view is None:
                if views:
                    break
                view = empty_view()
            views += 1
            done = await self._solve_view(view, views)
            if done is not None:
                return done
            if cursor[0] >= len(kb_order):
                break
        if self.candidates:
            best = max(self.candidates, key=lambda o: o.rank())
            if len(self.candidates) > 1 or best.status != "success":
                best.warnings.append(
                    f"weak recovery: best of {len(self.candidates)} weak answers ({best.status})"
                )
            return best
        return self._outcome(
            "failed",
            answer=NO_CONTEXT_ANSWER,
            warnings=["no goal solver produced an answer for this intent"],
            node_id=self.node_id,
        )

    async def _solve_view(self, view: View, number: int) -> SeedOutcome | None:
        state, frame, trace = self.state, self.frame, self.state.trace
        if view.plugin_id is None:
            label = "knowledge view: none (no kb-plugin produced a view)"
        else:
            quality = "sufficient" if view.sufficient else "best insufficient"
            label = f"knowledge view {number}: {view.plugin_id} ({quality}, {len(view.evidence)} units)"
        vnode = trace.node(
            "event",
            label,
            parent=self.node_id,
            frameId=frame.frame_id,
            status="sufficient" if view.sufficient else "insufficient",
            output={
                "evidence": [u.id for u in view.evidence][:24],
                "guidance": [u.id for u in view.guidance],
            },
        )
        if view.node is not None:
            trace.edge(view.node.id, vnode.id, "produces")
        trace.edge(
            self.last_step, vnode.id, "next-branch" if self.decomposed and number == 1 else "next-view"
        )
        self.last_step = vnode.id
        frame.retrieved[self.ref] = view.evidence
        warnings = (
            []
            if view.sufficient or view.plugin_id is None
            else [f"evidence judged insufficient by {view.plugin_id}"]
        )
        previous = None
        for plugin_id in self.plan.goalSolverOrder:
            attempt = await state.solve(
                frame,
                self.branch,
                plugin_id,
                self.intent,
                view,
                vnode.id,
                allow_decompose=frame.can_open_child and not self.decomposed,
                ref=self.ref,
                early=self.early.next if self.early is not None and self.early.used else None,
            )
            trace.edge(previous, attempt.node.id, "next-candidate")
            previous = attempt.node.id
            if view.node is not None:
                trace.edge(view.node.id, attempt.node.id, "uses")
            doc, status = attempt.doc, attempt.status
            common = {
                "sources": list(doc.sources or []) if doc else [],
                "evidence": view.evidence,
                "confidence": doc.result.confidence if doc else None,
                "kb_plugin": view.plugin_id,
                "gs_plugin": plugin_id,
                "node_id": attempt.node.id,
            }
            if status == "success" and doc is not None and doc.answer is not None:
                verdict, notes, _ = await state.validate(
                    frame, self.branch, self.plan.validatorOrder, self.intent, attempt, view, ref=self.ref
                )
                if verdict == "rejected":
                    frame.failures.remember(
                        ("gs", plugin_id, self.key, view.key), "rejected", attempt.node.id
                    )
                    self.candidates.append(
                        self._outcome(
                            "rejected",
                            answer=doc.answer,
                            validation="rejected",
                            warnings=[*warnings, *notes],
                            **common,
                        )
                    )
                    continue
                return self._outcome(
                    "success", answer=doc.answer, validation=verdict, warnings=[*warnings, *notes], **common
                )
            if status in ("no-context", "insufficient") and doc is not None:
                self.candidates.append(
                    self._outcome(
                        "no-context",
                        answer=doc.answer or NO_CONTEXT_ANSWER,
                        warnings=[*warnings, f"{plugin_id} found no usable evidence ({status})"],
                        **common,
                    )
                )
            elif status == "needs-decomposition":
                done = await self._decompose(attempt.node.id, f"{plugin_id} returned needs-decomposition")
                if done is not None:
                    return done
        return None

    async def _decompose(self, trigger: str, reason: str) -> SeedOutcome | None:
        """Open a child frame for this seed (once per seed, within maxDepth); its answers return here."""
        state, frame, trace = self.state, self.frame, self.state.trace
        if self.decomposed:
            return None
        if not frame.can_open_child:
            trace.node(
                "event",
                f"decomposition refused: depth {frame.depth + 1} exceeds maxDepth {frame.max_depth}",
                parent=trigger,
                frameId=frame.frame_id,
                status="depth-limit",
            )
            self.candidates.append(
                self._outcome(
                    "failed",
                    warnings=[f"decomposition stopped at maxDepth {frame.max_depth}"],
                    node_id=trigger,
                )
            )
            return None
        self.decomposed = True
        child = frame.child(prompt=self.intent.intent, parent_intent=self.intent)
        self.slot.release()  # a waiting parent must not hold a seed slot its children need
        try:
            result = await run_frame(state, child, parent=self.node_id, ref_prefix=f"{self.ref}.")
        finally:
            await self.slot.acquire()
        trace.edge(trigger, result.node_id, "decomposes")
        trace.get(result.node_id).label += f" — {reason}"
        if self.last_step is None:
            self.last_step = result.node_id
        outcome = self._outcome("failed", node_id=result.node_id, gs_plugin="decomposition")
        combine_children(outcome, result.outcomes or [])
        if outcome.status == "success":
            return outcome
        self.candidates.append(outcome)
        return None
