"""One plugin call of a turn (docs/ARCHITECTURE.md §4, steps 2–8): every stage calls through `call_plugin`.

A call applies, in order: the frame's failure memory (a call that failed before on the same input is not
repeated), the turn's memo (a call that succeeded is reused), the budget (`skipped-budget` when the
plugin's declared maxLLMCalls exceeds what is left or the deadline has passed), a fresh LLM token for
plugins that declare LLM calls, then the supervisor. Each call is one `plugin` node of the trace and one
attempt of the branch that made it (for recordOutcome). The stage logic looks at statuses and section
structure only, never at claim text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import (
    Budget,
    ContextItem,
    LLMAccess,
    OutcomeAttempt,
    OutcomeStatus,
    Paths,
    Payload,
    Request,
)
from mrpvm.protocol.vocab import Op

from ..budgets import RequestBudget
from ..llm.hooks import grant, settle
from ..registry import PluginEntry
from ..supervisor import CallResult, PluginCallError
from ..trace import PROMPT_PREVIEW, TraceNode, TraceRecorder, clip, clip_tail, summarize_output
from .frame import ExecutionFrame

if TYPE_CHECKING:
    import asyncio

    from ..background import Background
    from ..llm import LLMBridge
    from ..supervisor import Supervisor

SKIPPED_BUDGET = "skipped-budget"
SKIPPED_KNOWN = "skipped-known-failure"
MemoKey = tuple[str, ...]  # stage, plugin id, then what the call's result depends on
EventHook = Callable[[dict[str, Any]], None]


class PluginInfo:
    """What a plugin call needs from the registry and config, resolved once per kernel context."""

    __slots__ = ("entry", "type", "max_llm_calls", "timeout_ms")

    def __init__(self, entry: PluginEntry, limit_ms: int):
        manifest = entry.manifest
        self.entry = entry
        self.type: str = entry.type
        self.max_llm_calls: int = manifest.maxLLMCalls
        self.timeout_ms: int = min(manifest.timeoutMs, limit_ms)


@dataclass(slots=True)
class Attempt:
    """One plugin call as the stage logic sees it."""

    plugin_id: str
    type: str
    op: str
    status: str
    node: TraceNode
    doc: CnlDocument | None = None
    duration_ms: float = 0.0
    llm_calls: int = 0


@dataclass(slots=True)
class BranchRun:
    """One planner's attempt at a frame: the attempts it caused, for recordOutcome."""

    planner_id: str | None
    node: TraceNode
    frame_id: str
    attempts: list[OutcomeAttempt] = field(default_factory=list)
    status: OutcomeStatus = "failed"
    duration_ms: float = 0.0


class TurnCalls:
    """The call bookkeeping of one turn (`state.calls`): memo, in-flight time, and the earlier turns'
    background calls this turn waits for. It holds no reference back to the turn state."""

    def __init__(self, background: Background, earlier: dict[str, list[asyncio.Task]]):
        self.memo: dict[MemoKey, Attempt] = {}
        self.plugin_ms = 0.0  # wall time with at least one plugin call in flight (overlaps counted once)
        self._in_flight = 0
        self._busy_since = 0.0
        self._background = background
        # plugin id -> background calls (earlier turns' recordOutcome on this KB) pending when this turn
        # started: this turn waits for them before calling that plugin, as if they had run in sequence
        self._earlier = earlier

    def known(self, frame: ExecutionFrame, key: MemoKey) -> bool:
        """The result of the call with memo key `key` is known in this frame (memo or failure memory)."""
        return key in self.memo or frame.failures.recall(key) is not None

    def earlier_pending(self, plugin_id: str) -> bool:
        """An earlier turn's background call to `plugin_id` was pending when this turn started."""
        return bool(self._earlier) and plugin_id in self._earlier

    async def after_earlier(self, plugin_id: str) -> None:
        """Wait for the background calls to `plugin_id` that were pending when this turn started."""
        jobs = self._earlier.pop(plugin_id, None)
        if jobs:
            await self._background.wait_for(jobs)

    def mark_busy(self) -> None:
        """A plugin call goes out (pair with `mark_idle`): `plugin_ms` counts time with one in flight."""
        if self._in_flight == 0:
            self._busy_since = time.perf_counter()
        self._in_flight += 1

    def mark_idle(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self.plugin_ms += (time.perf_counter() - self._busy_since) * 1000.0


class CallScope(Protocol):
    """What one plugin call sees of its turn (the turn state provides it): ids, budget, trace, the call
    bookkeeping, the progress listener, and the per-context plugin facts. Nothing of frames or seeds."""

    request_id: str
    budget: RequestBudget
    trace: TraceRecorder
    calls: TurnCalls
    on_event: EventHook | None

    @property
    def session_id(self) -> str: ...

    @property
    def supervisor(self) -> Supervisor: ...

    @property
    def llm(self) -> LLMBridge | None: ...

    def emit(self, **event: Any) -> None: ...

    def plugin_info(self, plugin_id: str) -> PluginInfo: ...

    def context_items(self, units: list[KnowledgeUnit]) -> list[ContextItem]: ...

    def artifact_path(self, plugin_id: str) -> Paths: ...


class EarlyCall(Protocol):
    """A call started ahead of its turn (early.Early): when it started, and its outcome."""

    started: float

    async def outcome(self) -> tuple[CallResult | None, PluginCallError | None]: ...


# --------------------------------------------------------------------------- one call


async def call_plugin(
    state: CallScope,
    frame: ExecutionFrame,
    branch: BranchRun | None,
    plugin_id: str,
    op: Op,
    prompt: str,
    units: list[KnowledgeUnit],
    payload: Payload,
    *,
    parent: str,
    label: str = "",
    memo_key: MemoKey | None = None,
    intent_ref: str | None = None,
    input_summary: dict[str, Any] | None = None,
    early: EarlyCall | None = None,
    background: bool = False,
) -> Attempt:
    """Call a plugin through the supervisor, within budget, recording a trace node and the attempt.

    `early`: a call of this plugin with the same request already started ahead of its turn (see
    early.py); its outcome is taken instead of calling again, recorded exactly like a call made here.
    `background`: a call the turn does not wait for (recordOutcome): its node is `pending` until it
    ends and it sends no progress events.
    """
    info = state.plugin_info(plugin_id)
    summary = {"prompt": clip(prompt, PROMPT_PREVIEW), "context": len(units)}
    if input_summary:
        summary.update(input_summary)
    node = state.trace.plugin_node(label, parent, frame.frame_id, plugin_id, info.type, op, summary)
    attempt = Attempt(plugin_id, info.type, op, "error", node)
    if background:
        node.status = "pending"
    if memo_key is not None:
        reused = _reuse(state, frame, memo_key, attempt)
        if reused is not None:
            return reused
    timeout_s, reason = _window(state, info)
    if timeout_s is None:
        _skip(state, attempt, SKIPPED_BUDGET, reason)
        _record(branch, attempt, frame, intent_ref)
        return attempt
    on_event = None if background else state.on_event
    if on_event is not None:
        state.emit(
            event="plugin-start",
            node=node.id,
            frameId=frame.frame_id,
            pluginId=plugin_id,
            type=info.type,
            op=op,
        )
    if early is not None:
        state.trace.backdate(node, early.started)
        result, failure = await early.outcome()
        counted = 0
    else:
        calls = state.calls
        if calls.earlier_pending(plugin_id):
            await calls.after_earlier(plugin_id)
        request, access = _prepare(
            state, frame, info, plugin_id, op, (prompt, units, payload), timeout_s, node
        )
        result, failure, counted = None, None, 0
        calls.mark_busy()
        try:
            result = await state.supervisor.call(plugin_id, request, timeout_s=timeout_s)
        except PluginCallError as err:
            failure = err
        finally:  # revoke the token; one `llm` trace node per LLM call under this plugin node
            calls.mark_idle()
            if access is not None:
                counted = settle(state.llm, access, state.trace, node, state.request_id)
    _settle(state, attempt, result, failure, counted)
    if on_event is not None and state.on_event is not None:
        state.emit(
            event="plugin-end",
            node=node.id,
            pluginId=plugin_id,
            op=op,
            status=node.status,
            durationMs=node.durationMs,
        )
    if memo_key is not None:  # a result is reused in this turn, a failure is not repeated in this frame
        if attempt.status in ("success", "insufficient") and attempt.doc is not None:
            state.calls.memo[memo_key] = attempt
        elif attempt.status not in ("success", "accepted"):
            frame.failures.remember(memo_key, attempt.status, node.id)
    _record(branch, attempt, frame, intent_ref)
    return attempt


def _reuse(state: CallScope, frame: ExecutionFrame, key: MemoKey, attempt: Attempt) -> Attempt | None:
    """The attempt standing for a call whose result is known: a failure (skipped) or a memo hit."""
    trace, node = state.trace, attempt.node
    known = frame.failures.recall(key)
    if known is not None:
        node.ref = f"{known[0]} in {known[1]}"
        trace.edge(known[1], node.id, "reuses")
        _skip(state, attempt, SKIPPED_KNOWN, f"failed before on the same input ({known[0]})")
        return attempt
    cached = state.calls.memo.get(key)
    if cached is None:
        return None
    node.ref = f"reuses {cached.node.id}"
    trace.edge(cached.node.id, node.id, "reuses")
    trace.finish(node, cached.status, **cached.node.output)
    node.durationMs = 0.0
    return Attempt(attempt.plugin_id, attempt.type, attempt.op, cached.status, node, cached.doc, 0.0, 0)


def _window(state: CallScope, info: PluginInfo) -> tuple[float | None, str | None]:
    """(the call's timeout, None) within budget, else (None, why it is skipped)."""
    budget = state.budget
    if not budget.affords(info.max_llm_calls):
        return None, f"maxLLMCalls {info.max_llm_calls} exceeds the {budget.llm_calls_left} LLM calls left"
    timeout_s = budget.call_window_s(info.timeout_ms)
    return timeout_s, None if timeout_s is not None else "the request deadline has passed"


def _skip(state: CallScope, attempt: Attempt, status: str, reason: str | None) -> None:
    state.trace.finish(attempt.node, status, reason=reason)
    attempt.node.durationMs = 0.0
    attempt.status = status


def _prepare(
    state: CallScope,
    frame: ExecutionFrame,
    info: PluginInfo,
    plugin_id: str,
    op: Op,
    parts: tuple[str, list[KnowledgeUnit], Payload],
    timeout_s: float,
    node: TraceNode,
) -> tuple[Request, LLMAccess | None]:
    """The request, with a fresh LLM token for this call only when the plugin declares LLM calls (the
    caller revokes it with `settle` once the call ends)."""
    llm = state.llm
    access = None
    if info.max_llm_calls > 0 and llm is not None and llm.available:
        access = grant(
            llm,
            info.entry,
            op,
            state.request_id,
            frame.frame_id,
            state.budget.llm_calls_left,
            timeout_s,
            node.id,
        )
    return build_request(state, frame, plugin_id, op, *parts, timeout_s=timeout_s, access=access), access


def _settle(
    state: CallScope,
    attempt: Attempt,
    result: CallResult | None,
    failure: PluginCallError | None,
    counted: int,
) -> None:
    """Record the outcome on the attempt and its node; charge LLM calls the bridge did not see."""
    trace, node = state.trace, attempt.node
    if failure is not None or result is None:
        attempt.llm_calls = counted
        detail: dict[str, Any] = {}
        if failure is not None:
            error = failure.error
            detail = {"code": error.code, "message": clip(error.message, 400)}
            if error.stderrTail:
                detail["stderrTail"] = clip_tail(error.stderrTail)
            if error.exitCode is not None:
                detail["exitCode"] = error.exitCode
        trace.finish(node, "error", **detail)
        return
    doc = result.document
    attempt.doc = doc
    attempt.status = doc.result.status
    attempt.duration_ms = result.durationMs
    attempt.llm_calls = max(doc.result.llmCalls, counted)
    state.budget.charge(max(0, doc.result.llmCalls - counted))  # only calls the bridge did not see
    output = summarize_output(doc, result.cnl)
    if result.stderrTail.strip():  # a Status: error answer: keep what the plugin said on stderr
        output["stderrTail"] = clip_tail(result.stderrTail)
    trace.complete(node, attempt.status, result.durationMs, output)


def build_request(
    state: CallScope,
    frame: ExecutionFrame,
    plugin_id: str,
    op: Op,
    prompt: str,
    units: list[KnowledgeUnit],
    payload: Payload,
    *,
    timeout_s: float,
    access: LLMAccess | None = None,
) -> Request:
    """The request envelope of one call (protocol/SPEC.md §5)."""
    return Request(
        prompt=prompt,
        context=state.context_items(units) if units else [],
        op=op,
        payload=payload,
        budget=Budget(llmCalls=state.budget.llm_calls_left, deadlineMs=max(1, int(timeout_s * 1000))),
        paths=state.artifact_path(plugin_id),
        requestId=state.request_id,
        frameId=frame.frame_id,
        sessionId=state.session_id,
        llm=access,
    )


def _record(
    branch: BranchRun | None, attempt: Attempt, frame: ExecutionFrame, intent_ref: str | None
) -> None:
    """The attempt, in the branch's list for recordOutcome."""
    if branch is None:
        return
    sufficient = None
    if attempt.doc is not None and attempt.doc.resolved:
        sufficient = attempt.doc.resolved[0].sufficient
    branch.attempts.append(
        OutcomeAttempt(
            pluginId=attempt.plugin_id,
            type=attempt.type,
            op=attempt.op,
            status=attempt.status,
            durationMs=round(attempt.duration_ms, 3),
            llmCalls=attempt.llm_calls,
            sufficient=sufficient,
            intentRef=intent_ref,
            frameId=frame.frame_id,
        )
    )
