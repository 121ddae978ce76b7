"""One chat turn, end to end (docs/ARCHITECTURE.md §4):

    result = await run_turn(ctx, TurnRequest("How does WAL mode work?", session_id=...))

Open the turn (session, KB, budget, trace), run the root frame (frames.py), then build the response
while recordOutcome goes to the planners and the commit/discard notice to the kb-plugins, and commit
(staged units promoted on success/weak, discarded on failure). With `defer_outcome=True` (the daemon)
the turn does not wait for recordOutcome: it runs on in `ctx.background`, its node is stored `pending`
and updated when it ends, and a later turn waits for it before calling that planner. The CLI and the
HTTP daemon are thin shells over `run_turn`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from mrpvm.protocol.envelope import Pins

from ..budgets import RequestBudget, check_deliberation
from ..errors import BadInput
from ..records import PlannerOutcome
from ..trace import TraceRecorder
from .concurrency import concurrently, let_requests_out
from .frame import ExecutionFrame, FrameOutcome
from .frame_run import run_frame
from .outcome import commit, outcome_calls, record_in_background
from .response import (
    ResponseDocument,
    SeedOutcome,
    answer_markdown,
    build_group,
    document_markdown,
    reported_status,
    unrepeated,
)
from .stages import kb_notifications, notify_kb
from .state import MAX_HISTORY, EventHook, TurnState, check_pins

if TYPE_CHECKING:
    from ..context import KernelContext

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
    deliberation_level: int | None = None  # 0-3 (deliberation.py); None: the session's preference


class TurnResult(msgspec.Struct, kw_only=True):
    request_id: str
    session_id: str
    planner_plugin: str | None
    seed_detector_plugin: str | None
    kb_plugin: str | None
    goal_solver_plugin: str | None
    response_markdown: str
    response_document: dict[str, Any]
    trace_json: bytes  # the execution trace's JSON, as the commit stored it (`execution_trace` decodes it)
    llm_calls: int
    duration_ms: float
    status: str
    answer_markdown: str = ""  # what a person reads: answers, weak notes, sources (response.answer_markdown)
    deliberation_level: int = 0
    plugin_ms: float = 0.0  # wall time with a plugin call in flight (overlaps once), for benchmarks

    @property
    def execution_trace(self) -> dict[str, Any]:
        """The execution trace (a fresh dict on every read: an HTTP answer sends `trace_json` as it is)."""
        trace: dict[str, Any] = msgspec.json.decode(self.trace_json)
        return trace

    def as_json(self) -> dict[str, Any]:
        """The turn keys `mrpvm ask --json` prints (the CLI adds the derived legacy names and the level)."""
        return {key: getattr(self, key) for key in JSON_KEYS}


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
    state, fresh = _open_turn(ctx, request, request_id, on_event)
    await ctx.warm_kb(state.kb_id)  # a daemon's pools bind a KB's folders before its first turn's calls
    root = ExecutionFrame(request_id, depth=0, max_depth=state.budget.max_depth, prompt=state.message)
    try:
        frame = await run_frame(state, root, parent=None, ref_prefix="")
    except BaseException:
        with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
            await notify_kb(
                state, root, root.node_id or "", "session-kus-discarded", "current-turn", state.staged
            )
        raise
    return await _close_turn(state, root, frame, started, fresh, defer_outcome, deferred)


def _open_turn(
    ctx: KernelContext, request: TurnRequest, request_id: str, on_event: EventHook | None
) -> tuple[TurnState, bool]:
    """Check the request, find (or draft) the session and its KB, open the budget; (state, fresh session)."""
    message = request.message.strip()
    if not message:
        raise BadInput("EMPTY_MESSAGE", "the message is empty")
    store, config = ctx.store, ctx.config
    check_pins(ctx, request.pins)
    max_calls = config.engine.budget.maxLLMCalls if request.max_llm_calls is None else request.max_llm_calls
    if max_calls < 0:
        raise BadInput("BAD_BUDGET", f"max LLM calls must not be negative (got {max_calls})")
    level = check_deliberation(request.deliberation_level)
    fresh = not request.session_id
    # A fresh session is stored by the turn's own commit (one transaction per turn).
    session = store.draft_session(kb_id=request.kb) if fresh else store.get_session(request.session_id or "")
    kb_ref = request.kb or session.kbId
    kb = store.get_kb(kb_ref) if kb_ref else None
    budget = RequestBudget(
        max_calls,
        config.engine.budget.requestTimeoutMs,
        config.engine.budget.maxFrameDepth,
        fallback_calls=config.engine.budget.maxFallbackCalls,
    )
    if ctx.llm is not None:
        ctx.llm.open_request(request_id, budget)  # the bridge charges upstream calls to this budget live
    history = store.recent_user_messages(session.id, MAX_HISTORY) if session.turnCount else []
    state = TurnState(
        ctx,
        request_id=request_id,
        message=message,
        session=session,
        kb=kb,
        pins=request.pins,
        budget=budget,
        trace=TraceRecorder(request_id, session.id),
        session_units=[] if fresh else store.session_units(session.id),
        history=history,
        deliberation=session.deliberationLevel if level is None else level,
    )
    if on_event is not None:
        state.on_event = on_event
        state.emit(event="turn-start", sessionId=session.id, kbId=kb.id if kb else None)
    return state, fresh


async def _close_turn(
    state: TurnState,
    root: ExecutionFrame,
    frame: FrameOutcome,
    started: float,
    fresh: bool,
    defer_outcome: bool,
    deferred: list[asyncio.Task] | None,
) -> TurnResult:
    """Respond, tell the planners and kb-plugins, commit.

    recordOutcome to the planners and the commit/discard notice to the kb-plugins are independent: they
    run concurrently, and the response document is built while they are in flight. With
    `defer_outcome` the turn does not wait for recordOutcome (the answer does not depend on it): it
    runs on in `ctx.background`, its node is stored `pending` and updated once it ends, and a later
    turn waits for it before calling that planner.
    """
    status, supervisor = frame.status, state.ctx.supervisor
    plugin_ids = _plugin_ids(frame)
    keep = status != "failed"
    outcomes: list[PlannerOutcome] = []
    committed: asyncio.Future[bool] | None = None
    recording: list[asyncio.Task] = []
    calls = [] if defer_outcome else outcome_calls(state, root, outcomes)
    if defer_outcome:
        committed, recording = record_in_background(state, root, outcomes, deferred)
    calls += kb_notifications(
        state,
        root,
        root.node_id or "",
        "session-kus-committed" if keep else "session-kus-discarded",
        "session" if keep else "current-turn",
        state.staged,
    )
    try:
        if calls:
            async with concurrently(calls, supervisor):  # the requests are out when the body runs
                markdown, document = _response(state, frame, status, plugin_ids)
        else:
            if recording:
                await let_requests_out(supervisor)  # the recordOutcome requests go out, their nodes recorded
            markdown, document = _response(state, frame, status, plugin_ids)
        answer = answer_markdown(document)
        reported = document.status  # a refusal is reported `no-context` (reported_status), stored as such
        duration_ms = (time.perf_counter() - started) * 1000.0
        document.durationMs = round(duration_ms, 3)
        document.llmCalls = state.budget.llm_calls_used
        doc_dict = msgspec.to_builtins(document)
        trace_json = await commit(
            state,
            root,
            reported,
            markdown,
            doc_dict,
            plugin_ids,
            duration_ms,
            new_session=state.session if fresh else None,
            planner_outcomes=outcomes,
        )
    except BaseException:
        if committed is not None:
            committed.set_result(False)
        raise
    if committed is not None:  # store the trace again if a call was still running at the commit
        committed.set_result(not all(task.done() for task in recording))
    return TurnResult(
        request_id=state.request_id,
        session_id=state.session.id,
        planner_plugin=plugin_ids["planner"],
        seed_detector_plugin=plugin_ids["sd"],
        kb_plugin=plugin_ids["kb"],
        goal_solver_plugin=plugin_ids["gs"],
        response_markdown=markdown,
        response_document=doc_dict,
        trace_json=trace_json,
        llm_calls=state.budget.llm_calls_used,
        duration_ms=round(duration_ms, 3),
        status=reported,
        answer_markdown=answer,
        deliberation_level=state.deliberation,
        plugin_ms=round(state.calls.plugin_ms, 3),
    )


def _plugin_ids(frame: FrameOutcome) -> dict[str, str | None]:
    """The plugins that produced the answer: the winning branch's planner and sd, the best seed's kb and gs."""
    first = _representative(frame.outcomes or [])
    return {
        "planner": frame.planner_id,
        "sd": frame.sd_plugin,
        "kb": first.kb_plugin if first else None,
        "gs": first.gs_plugin if first else None,
    }


def _representative(outcomes: list[SeedOutcome]) -> SeedOutcome | None:
    return max(outcomes, key=lambda o: o.rank(), default=None)


def _response(
    state: TurnState, frame: FrameOutcome, status: str, plugin_ids: dict[str, str | None]
) -> tuple[str, ResponseDocument]:
    """The response document (durationMs and llmCalls are set by the caller once the turn is over) and
    its Markdown, built once."""
    lookup = {u.id: u for u in state.visible_units()}
    groups = unrepeated([build_group(o, state.origin, lookup) for o in frame.outcomes or []])
    document = ResponseDocument(
        requestId=state.request_id,
        sessionId=state.session.id,
        status=reported_status(status, groups),
        groups=groups,
        warnings=list(dict.fromkeys(state.warnings)),
        pluginFailures=[f"{pid} failed {what}" for pid, what in state.plugin_failures.items()],
        plugins={k: v for k, v in plugin_ids.items() if v},
        currentTurnUnits=len(state.staged),
    )
    return document_markdown(document), document
