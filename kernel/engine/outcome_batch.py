"""Batched recordOutcome (docs/ARCHITECTURE.md §4, step 9; protocol/SPEC.md, Outcome batches).

A planner whose manifest sets `outcomeBatch` N > 1 (and that calls no LLM) gets the daemon's deferred
outcomes in batches: per (planner, KB) they wait in arrival order and go out in one call when N are
pending, after at most `BATCH_WAIT_S`, or at once when a later turn of the same session is about to
call the planner (`hurry`: a buildPlan never waits for the timer) or the background is drained (daemon
shutdown). One batch of a planner and KB is in flight at a time, so its outcomes are folded in queue
order. Each turn keeps its own `pending` recordOutcome node, finished from the batch's reply; the reply's
observations are attributed to their outcome by `Outcome: <requestId>`, checked whole before anything is
stored, and the batch's folds and trace rewrites are one store transaction. A batch whose call fails is
recorded on every node as dropped, with the reason (nothing is folded, as for a failed single call).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from mrpvm.protocol.document import CnlDocument, Observation
from mrpvm.protocol.envelope import RecordOutcomePayload

from ..errors import StoreError, ValidationFailed
from ..supervisor import CallResult, PluginCallError
from ..trace import PROMPT_PREVIEW, TraceNode, clip
from .calls import build_request, plugin_timeout_ms, settle_attempt
from .concurrency import hold_spin
from .frame import ExecutionFrame
from .scope import Attempt, PluginInfo
from .store_calls import store_call

if TYPE_CHECKING:
    from ..context import KernelContext
    from .state import TurnState


class TraceOnce(Protocol):
    """outcome.py's `TraceOnce`: whether this call stores its turn's trace with its fold."""

    stored: bool

    def last_after_commit(self) -> bool: ...


log = logging.getLogger("mrpvm.kernel")
BATCH_WAIT_S = 0.05  # the longest an outcome waits for others to share its call

_Key = tuple[str, str | None]  # (planner id, KB id)


class _Entry(msgspec.Struct, eq=False):
    """One turn's outcome waiting for its batch."""

    state: TurnState
    root: ExecutionFrame
    payload: RecordOutcomePayload
    attempted: frozenset[str]
    node: TraceNode
    trace: TraceOnce | None
    done: asyncio.Future[Attempt]


def batcher_of(ctx: KernelContext) -> OutcomeBatcher:
    """The kernel context's batcher (made on first use; `ctx.background` drains and hurries it)."""
    batcher = ctx.background.batcher
    if not isinstance(batcher, OutcomeBatcher):
        batcher = ctx.background.batcher = OutcomeBatcher(ctx)
    return batcher


def batching(info: PluginInfo, deferred: bool) -> bool:
    """Whether a recordOutcome to this planner goes through the batcher: a deferred call (the daemon) to
    a planner that opted in and calls no LLM (an LLM token belongs to one request)."""
    return deferred and info.outcome_batch > 1 and info.max_llm_calls == 0


class OutcomeBatcher:
    def __init__(self, ctx: KernelContext) -> None:
        self.ctx = ctx
        self._pending: dict[_Key, list[_Entry]] = {}
        self._go: dict[_Key, asyncio.Event] = {}
        self._runners: dict[_Key, asyncio.Task] = {}
        self._flushing = False

    async def submit(
        self,
        state: TurnState,
        root: ExecutionFrame,
        payload: RecordOutcomePayload,
        attempted: frozenset[str],
        label: str,
        summary: dict[str, Any],
        trace: TraceOnce | None,
    ) -> Attempt:
        """Queue one turn's outcome; returns its attempt once its batch was answered and folded."""
        planner_id = payload.plannerId
        info = state.plugin_info(planner_id)
        shown = {"prompt": clip(state.message, PROMPT_PREVIEW), "context": 0, **summary}
        node = state.trace.plugin_node(
            label, root.node_id or "", root.frame_id, planner_id, info.type, "recordOutcome", shown
        )
        node.status = "pending"
        done: asyncio.Future[Attempt] = asyncio.get_running_loop().create_future()
        key = (planner_id, state.kb_id)
        pending = self._pending.setdefault(key, [])
        pending.append(_Entry(state, root, payload, attempted, node, trace, done))
        go = self._go.setdefault(key, asyncio.Event())
        if len(pending) >= info.outcome_batch:
            go.set()
        if key not in self._runners:
            self._runners[key] = asyncio.get_running_loop().create_task(self._run(key, info.outcome_batch))
        return await asyncio.shield(done)

    def hurry(self, planner_id: str) -> None:
        """Send this planner's pending outcomes now (a turn is about to wait for one of them)."""
        for (planner, _), go in self._go.items():
            if planner == planner_id:
                go.set()

    async def flush(self) -> None:
        """Send everything pending and wait until it is folded (before the background drains)."""
        self._flushing = True
        try:
            while self._runners:
                for go in self._go.values():
                    go.set()
                await asyncio.gather(*self._runners.values(), return_exceptions=True)
        finally:
            self._flushing = False

    async def _run(self, key: _Key, size: int) -> None:
        pending, go = self._pending[key], self._go[key]
        try:
            while pending:
                if len(pending) < size and not self._flushing:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(go.wait(), BATCH_WAIT_S)
                go.clear()
                batch = pending[:size]
                del pending[:size]
                try:
                    await self._send(key[0], batch)
                except Exception:  # its turns' calls have their attempts; the next batch still goes
                    log.exception("a batch of recordOutcome failed")
        finally:
            self._runners.pop(key, None)

    async def _send(self, planner_id: str, batch: list[_Entry]) -> None:
        """One call for the batch (a batch of one is an ordinary single-outcome call), then the fold."""
        first = batch[0]
        info = first.state.plugin_info(planner_id)
        timeout_s = plugin_timeout_ms(first.state, info) / 1000.0
        single = len(batch) == 1
        payload = first.payload if single else RecordOutcomePayload(outcomes=[e.payload for e in batch])
        prompt = first.state.message if single else ""
        attempts = [Attempt(planner_id, info.type, "recordOutcome", "error", e.node) for e in batch]
        try:
            request = build_request(
                first.state, first.root, planner_id, "recordOutcome", prompt, [], payload, timeout_s=timeout_s
            )
            result: CallResult | None = None
            failure: PluginCallError | None = None
            with hold_spin(self.ctx.supervisor):
                try:
                    result = await self.ctx.supervisor.call(planner_id, request, timeout_s=timeout_s)
                except PluginCallError as err:
                    failure = err
            for entry, attempt in zip(batch, attempts, strict=True):
                settle_attempt(entry.state, attempt, result, failure, 0)
                if not single:
                    entry.node.output["batch"] = len(batch)
                if attempt.status == "error":  # a crash, a timeout, a refusal or an error answer
                    code = entry.node.output.get("code", "error")
                    entry.node.output["dropped"] = f"the outcome's call failed ({code}): not learned"
            if failure is None and result is not None and result.document.result.status == "success":
                await self._fold(planner_id, batch, result.document)
        finally:
            for entry, attempt in zip(batch, attempts, strict=True):
                if not entry.done.done():
                    entry.done.set_result(attempt)

    async def _fold(self, planner_id: str, batch: list[_Entry], doc: CnlDocument) -> None:
        """Every outcome's observations folded by its own KB, in queue order, with the trace rewrites
        (`TraceOnce`), in one transaction; a reply that does not attribute every observation to an
        outcome of the batch, or names a plugin its outcome does not, stores nothing."""
        items: list[Any] = []
        try:
            groups = attribute(doc.observations, [e.payload.requestId for e in batch])
            for entry, observations in zip(batch, groups, strict=True):
                strangers = sorted({o.plugin for o in observations} - entry.attempted)
                if strangers:
                    raise ValidationFailed(
                        f"observations of plugins the outcome does not name: {', '.join(strangers[:5])}",
                        {"planner": planner_id, "plugins": strangers[:20]},
                    )
                if observations:
                    traced = entry.trace is not None and entry.trace.last_after_commit()
                    items.append((entry, observations, traced))
            if not items:
                return
            store = self.ctx.store
            stored = await store_call(
                store,
                store.record_outcomes_and_traces,
                planner_id,
                batch[0].state.kb_id,  # one queue per (planner, KB): every outcome of a batch has its KB
                [(obs, e.state.request_id, _trace_of(e) if t else None) for e, obs, t in items],
            )
        except (ValidationFailed, StoreError) as err:
            for entry in batch:
                entry.node.output.pop("observationsStored", None)
                entry.node.output["observationsRejected"] = str(err)
                entry.state.warnings.append(f"{planner_id}: observations not stored: {err}")
            return
        for (entry, _, traced), count in zip(items, stored, strict=True):
            entry.node.output["observationsStored"] = count
            if traced and entry.trace is not None:
                entry.trace.stored = True


def attribute(observations: list[Observation], request_ids: list[str]) -> list[list[Observation]]:
    """The reply's observations per outcome (request ids in batch order). A single outcome's may omit
    `Outcome`; a batch's must each name one of the batch's outcomes (rule observation-outcome)."""
    by_id: dict[str, list[Observation]] = {rid: [] for rid in request_ids}
    for seen in observations:
        target = seen.outcome or (request_ids[0] if len(request_ids) == 1 else "")
        if target not in by_id:
            named = (
                f"names outcome '{seen.outcome}', not one of this call's"
                if seen.outcome
                else "names no outcome"
            )
            raise ValidationFailed(
                f"observation-outcome: Observation {seen.index} {named} (a batch's observations each need "
                "`Outcome: <requestId>`)",
                {"observation": seen.index, "outcome": seen.outcome, "outcomes": request_ids[:16]},
            )
        by_id[target].append(seen)
    return [by_id[rid] for rid in request_ids]


def _trace_of(entry: _Entry) -> Any:
    def trace_of(stored: int) -> bytes:
        entry.node.output["observationsStored"] = stored
        return entry.state.trace.json_again()

    return trace_of
