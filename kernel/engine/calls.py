"""One plugin call of a turn (docs/ARCHITECTURE.md §4, steps 2–8): every stage calls through `call_plugin`.

A call applies, in order: the frame's failure memory (a call that failed before on the same input is not
repeated), the turn's memo (a call that succeeded is reused), the budget (`skipped-budget` when the
plugin's declared maxLLMCalls exceeds what is left or the deadline has passed), a fresh LLM token for
plugins that declare LLM calls, then the supervisor. Each call is one `plugin` node of the trace and one
attempt of the branch that made it (for recordOutcome). The stage logic looks at statuses and section
structure only, never at claim text.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import (
    Budget,
    LLMAccess,
    OutcomeAttempt,
    Payload,
    Request,
)
from mrpvm.protocol.vocab import Op

from ..llm.hooks import grant, settle
from ..supervisor import CallResult, PluginCallError
from ..supervisor.errors import TIMEOUT
from ..trace import PROMPT_PREVIEW, TraceNode, clip, clip_tail, error_line, summarize_output
from .frame import ExecutionFrame
from .scope import (
    Attempt,
    BranchRun,
    CallScope,
    EarlyCall,
    MemoKey,
    PluginInfo,
)
from .support import answer_support

SKIPPED_BUDGET = "skipped-budget"
SKIPPED_KNOWN = "skipped-known-failure"


# --------------------------------------------------------------------------- one call

# True in a seed's task once its first candidate path gave no accepted answer, and in every planner
# branch after the first: calls made there are backtracking and spend the turn's fallback budget
# (engine.budget.maxFallbackCalls); once it is spent they are skipped (`skipped-budget`).
FALLING_BACK: ContextVar[bool] = ContextVar("mrpvm_falling_back", default=False)
FALLBACK_OPS = frozenset({"buildPlan", "detectSeeds", "retrieve", "solve", "validate"})


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
    timeout_s, reason, cut = _window(state, info)
    backtracking = FALLING_BACK.get() and op in FALLBACK_OPS and not background
    if timeout_s is not None and backtracking and not state.budget.take_fallback_call():
        timeout_s = None
        reason = f"the turn's {state.budget.fallback_calls_total} fallback calls are spent"
    if timeout_s is None:
        _skip(state, attempt, SKIPPED_BUDGET, reason)
        _record(branch, attempt, frame, intent_ref, units, prompt)
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
        if access is not None and state.llm is not None:  # how this call's deadline was chosen
            node.input.update(deadlineMs=int(timeout_s * 1000), **state.llm.pace.describe())
        result, failure, counted = None, None, 0
        calls.mark_busy()
        try:
            result = await state.supervisor.call(
                plugin_id, request, timeout_s=timeout_s, beyond_manifest=access is not None
            )
        except PluginCallError as err:
            failure = err
        finally:  # revoke the token; one `llm` trace node per LLM call under this plugin node
            calls.mark_idle()
            if access is not None:
                counted = settle(state.llm, access, state.trace, node, state.request_id)
    settle_attempt(state, attempt, result, failure, counted)
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
    _record(branch, attempt, frame, intent_ref, units, prompt, cut=cut)
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


def _window(state: CallScope, info: PluginInfo) -> tuple[float | None, str | None, bool]:
    """(the call's timeout, None, whether the request's deadline cut the plugin's own time) within
    budget, else (None, why it is skipped, False). A plugin that may call the LLM is not started when
    one LLM call, at the endpoint's measured pace, would take longer than the request has left."""
    budget = state.budget
    if not budget.affords(info.max_llm_calls):
        return (
            None,
            f"maxLLMCalls {info.max_llm_calls} exceeds the {budget.llm_calls_left} LLM calls left",
            False,
        )
    own_ms = plugin_timeout_ms(state, info)
    timeout_s = budget.call_window_s(own_ms)
    if timeout_s is None:
        return None, "the request deadline has passed", False
    expected = state.llm.pace.expected_s() if info.max_llm_calls > 0 and state.llm is not None else None
    if expected is not None and expected > timeout_s:
        why = f"one LLM call takes about {expected:.0f} s here (measured) and {timeout_s:.0f} s are left"
        return None, why, False
    return timeout_s, None, timeout_s < own_ms / 1000.0


def plugin_timeout_ms(state: CallScope, info: PluginInfo) -> int:
    """The plugin's own timeout, raised for a plugin that may call the LLM to the time its calls need
    on this endpoint (kernel/llm/pace.py): a slow local model is not killed by a manifest constant."""
    llm = state.llm
    if info.max_llm_calls <= 0 or llm is None or not llm.available:
        return info.timeout_ms
    calls = min(info.max_llm_calls, state.budget.llm_calls_left)
    return max(info.timeout_ms, llm.pace.plugin_ms(calls))


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


def settle_attempt(
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
            state.plugin_failures.setdefault(
                attempt.plugin_id, f"{attempt.op}: {error_line(error.code, error.message)}"
            )
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
    branch: BranchRun | None,
    attempt: Attempt,
    frame: ExecutionFrame,
    intent_ref: str | None,
    units: list[KnowledgeUnit],
    question: str,
    *,
    cut: bool = False,
) -> None:
    """The attempt, in the branch's list for recordOutcome; a goal solver's answer with its support
    (support.answer_support: the terms it adds to the question, found in the units it cites). A call
    that timed out within a window the request's deadline cut short is reported `skipped-budget`: the
    time ran out behind other calls, which says nothing of the plugin (the trace keeps its error)."""
    if branch is None:
        return
    sufficient = None
    doc = attempt.doc
    if doc is not None and doc.resolved:
        sufficient = doc.resolved[0].sufficient
    support = None
    if attempt.type == "gs-plugin" and attempt.status == "success" and doc is not None and doc.answer:
        support = answer_support(doc.answer, question, list(doc.sources or []), units)
    status = attempt.status
    if cut and status == "error" and attempt.node.output.get("code") == TIMEOUT:
        status = SKIPPED_BUDGET
    branch.attempts.append(
        OutcomeAttempt(
            pluginId=attempt.plugin_id,
            type=attempt.type,
            op=attempt.op,
            status=status,
            durationMs=round(attempt.duration_ms, 3),
            llmCalls=attempt.llm_calls,
            sufficient=sufficient,
            intentRef=intent_ref,
            frameId=frame.frame_id,
            support=support,
        )
    )


def relabel_outcome(branch: BranchRun | None, attempt: Attempt, status: str) -> None:
    """Change the status recordOutcome will report for `attempt` (its latest record in the branch)."""
    if branch is None:
        return
    for record in reversed(branch.attempts):
        if record.pluginId == attempt.plugin_id and record.op == attempt.op:
            record.status = status
            return
