"""After the answer (docs/ARCHITECTURE.md §4, step 9): recordOutcome to the planners, and the commit.

Every planner that led a branch gets `recordOutcome` (its attempts, the branch status); the kernel
folds the planner-level outcome into its EWMA in the turn's commit. The commit is one store
transaction: a fresh session, the turn with its response and trace, the staged units (promoted on
success/weak, discarded on failure) and the EWMA. With `defer_outcome` (the daemon) recordOutcome runs
on as a job of `ctx.background` that the turn does not wait for.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
from mrpvm.protocol.envelope import OutcomeStatus, RecordOutcomePayload

from ..errors import StoreError, TurnNotFound, ValidationFailed
from ..records import PlannerOutcome, SessionRecord, TurnRecord
from .calls import call_plugin
from .concurrency import PendingCall, hold_spin
from .frame import ExecutionFrame
from .outcome_batch import attribute, batcher_of, batching
from .scope import Attempt, BranchRun
from .stages import notify_kb
from .state import TurnState
from .store_calls import store_call
from .stored_answer import cap_answer

_BRANCH_ORDER = {"success": 2, "weak": 1, "failed": 0}  # a planner's branches: the best status tells


async def commit(
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
) -> bytes:
    """Commit the turn with its trace, and return the trace's JSON as stored: staged units promoted on
    success/weak, discarded on failure.

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
    limit = ctx.config.engine.limits.maxStoredAnswerBytes
    stored_markdown, stored_document, truncated = cap_answer(markdown, document, limit)
    record = TurnRecord(
        requestId=state.request_id,
        sessionId=state.session.id,
        userMessage=state.message,
        responseMarkdown=stored_markdown,
        responseDocument=stored_document,
        answerTruncated=truncated,
        status=status,
        pluginIds={k: v for k, v in plugin_ids.items() if v},
        llmCalls=state.budget.llm_calls_used,
        durationMs=round(duration_ms, 3),
    )
    # stored as is, and answered as is (TurnResult.trace_json); kept for a deferred recordOutcome's rewrite
    trace_json = trace.to_json(keep=True)
    try:
        ctx.store.commit_turn(
            record,
            state.staged if keep else [],
            None,  # a session's preferences are the user's choice; serving a turn never changes them
            session=new_session,
            planner_outcomes=planner_outcomes or (),
            trace_json=trace_json,
        )
        return trace_json
    except BaseException:
        node.status = "error"
        if keep:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
                await notify_kb(state, root, parent, "session-kus-discarded", "current-turn", state.staged)
        raise


class TraceOnce:
    """Who stores a deferred recordOutcome's turn trace again once its calls end: the last call to end,
    in the same transaction as its fold, when the turn was committed before it ended (the daemon's
    common case: one store write for the two); else the job, alone, as before."""

    def __init__(self, committed: asyncio.Future[bool], tasks: list[asyncio.Task]) -> None:
        self.committed, self.tasks, self.stored = committed, tasks, False

    def last_after_commit(self) -> bool:
        """True in the last call still running (its call just answered) once the turn is committed."""
        return (
            self.committed.done()
            and not self.committed.cancelled()
            and self.committed.result()
            and sum(not t.done() for t in self.tasks) == 1
        )


def record_in_background(
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
    committed while a call still ran, so the turn's trace is stored again once the calls end (by the
    last call with its fold, else by the job: `TraceOnce`).
    """
    ctx = state.ctx
    loop = asyncio.get_running_loop()
    committed: asyncio.Future[bool] = loop.create_future()
    tasks: list[asyncio.Task] = []
    trace = TraceOnce(committed, tasks)
    calls = outcome_calls(state, root, outcomes, deferred=True, trace=trace)
    if not calls:
        return None, []

    async def held(call: PendingCall) -> None:
        with hold_spin(ctx.supervisor):  # nobody waits for it: it must never busy-poll the loop
            await call()

    tasks += [loop.create_task(held(call)) for call in calls]  # list order = trace node order

    async def job() -> None:
        try:
            await asyncio.wait(tasks)
        finally:
            if ctx.llm is not None:
                ctx.llm.expire_request(state.request_id)
        failed = [e for t in tasks if not t.cancelled() and (e := t.exception()) is not None]
        if await committed and not trace.stored:
            try:
                ctx.store.update_turn_trace(state.request_id, state.trace.json_again())
            except TurnNotFound:
                pass  # the session (with its turns) was deleted meanwhile
        if failed:
            raise failed[0]

    planners = [b.planner_id for b in state.branches if b.planner_id is not None]
    job_task = ctx.background.start(job(), planners, state.session.id, tasks, scope=state.kb_id)
    if jobs is not None:
        jobs.append(job_task)
    return committed, tasks


def outcome_calls(
    state: TurnState,
    root: ExecutionFrame,
    outcomes: list[PlannerOutcome],
    deferred: bool = False,
    trace: TraceOnce | None = None,
) -> list[PendingCall]:
    """DS027 recordOutcome to every planner that led a branch (calls not started). Each appends the
    planner-level outcome the kernel folds into its EWMA when the turn commits. `deferred`: nobody
    waits for them (`call_plugin(..., background=True)`); `trace`: see `TraceOnce`."""
    by_planner: dict[str, list[BranchRun]] = {}
    for branch in state.branches:
        if branch.planner_id is not None:
            by_planner.setdefault(branch.planner_id, []).append(branch)

    def status_of(branches: list[BranchRun]) -> OutcomeStatus:
        return max((b.status for b in branches), key=lambda s: _BRANCH_ORDER.get(s, 0))

    someone_succeeded = any(status_of(b) == "success" for b in by_planner.values())

    def one(planner_id: str, branches: list[BranchRun]) -> PendingCall:
        status = status_of(branches)
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
        if tells_about_planner(status, someone_succeeded):
            outcomes.append(PlannerOutcome(planner_id, status == "success", duration))
        summary = {"status": status, "attempts": len(attempts)}

        async def call() -> Attempt:
            attempted = frozenset(a.pluginId for a in attempts)
            if batching(state.plugin_info(planner_id), deferred):
                return await batcher_of(state.ctx).submit(
                    state, root, payload, attempted, f"record outcome ({status})", summary, trace
                )
            attempt = await call_plugin(
                state,
                root,
                None,
                planner_id,
                "recordOutcome",
                state.message,
                [],
                payload,
                parent=root.node_id or "",
                label=f"record outcome ({status})",
                input_summary=summary,
                background=deferred,
            )
            with_trace = trace is not None and trace.last_after_commit()
            stored = await learn(state, planner_id, attempt, attempted, with_trace)
            if trace is not None and stored:
                trace.stored = True
            return attempt

        return call

    return [one(planner_id, branches) for planner_id, branches in by_planner.items()]


def tells_about_planner(status: str, someone_succeeded: bool) -> bool:
    """Does a planner's branch status say anything about the planner? A success does; a branch that fell
    short does only when another planner's branch in the same turn succeeded. When none succeeded, the
    knowledge lacked the answer as far as any plan could tell (a later branch that only met the earlier
    one's known failures even reads as failed): counting that against whichever planner led would move
    the lead on the mix of questions, not on the planners' merit — a few unanswerable questions in a row
    handed the lead to a heavy-first planner."""
    return status == "success" or someone_succeeded


async def learn(
    state: TurnState, planner_id: str, attempt: Attempt, attempted: frozenset[str], with_trace: bool = False
) -> bool:
    """Fold the planner's `## Observation` sections into its shared records (kernel/store_learning.py);
    the trace node says how many were stored, or why none was. A planner observes only the plugins the
    outcome names (the records stay bounded by what ran). `with_trace` (the turn is committed and this
    was its last call running): the turn's trace is stored again in the fold's transaction; True when
    it was."""
    doc = attempt.doc
    if attempt.status != "success" or doc is None or not doc.observations:
        return False
    node = attempt.node

    def trace_of(stored: int) -> bytes:
        node.output["observationsStored"] = stored
        return state.trace.json_again()

    try:
        attribute(doc.observations, [state.request_id])  # an `Outcome` naming another request: refused
        strangers = sorted({o.plugin for o in doc.observations} - attempted)
        if strangers:
            raise ValidationFailed(
                f"observations of plugins the outcome does not name: {', '.join(strangers[:5])}",
                {"planner": planner_id, "plugins": strangers[:20]},
            )
        store, rid = state.ctx.store, state.request_id
        if with_trace:
            await store_call(
                store,
                store.record_outcome_and_trace,
                planner_id,
                state.kb_id,
                doc.observations,
                rid,
                trace_of,
            )
            return True
        stored = await store_call(store, store.record_observations, planner_id, state.kb_id, doc.observations)
        node.output["observationsStored"] = stored
    except (ValidationFailed, StoreError) as err:
        node.output.pop("observationsStored", None)
        node.output["observationsRejected"] = str(err)
        state.warnings.append(f"{planner_id}: observations not stored: {err}")
    return False
