"""The few calls the engine (and ingest) make to wire the bridge into plugin calls.

# KernelContext.open / aclose
ctx.llm = await LLMBridge.from_environ(environ, store=store).start()   ...   await ctx.llm.aclose()
# run_turn: after the RequestBudget exists / when the turn is over (finally)
ctx.llm.open_request(request_id, budget)            ...   ctx.llm.expire_request(request_id)
# TurnState.call, around supervisor.call
access = grant(ctx.llm, entry, op, request_id, frame_id, budget.llm_calls_left, timeout_s, node.id)
request = Request(..., llm=access)
...
counted = settle(ctx.llm, access, trace, node, request_id)     # in a finally
budget.charge(max(0, doc.result.llmCalls - counted))           # the bridge already charged `counted`
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mrpvm.protocol.envelope import LLMAccess

from .settings import role_for_call

if TYPE_CHECKING:
    from ..registry import PluginEntry
    from ..trace import TraceNode, TraceRecorder
    from .bridge import LLMBridge


def grant(
    bridge: LLMBridge | None,
    entry: PluginEntry,
    op: str,
    request_id: str,
    frame_id: str,
    calls_left: int,
    timeout_s: float,
    call_ref: str | None = None,
) -> LLMAccess | None:
    """The `llm` field for one plugin call: a fresh token allowing min(maxLLMCalls, calls left), or None.

    None when there is no bridge or upstream, the plugin declares no LLM calls, or nothing is left; the
    plugin then sees `llm: null` and (if it needs an LLM) answers `unsupported`.
    """
    manifest = entry.manifest
    calls = min(manifest.maxLLMCalls, calls_left)
    if bridge is None or calls <= 0:
        return None
    role = role_for_call(list(manifest.modelRoles), entry.type, op)
    return bridge.access(
        request_id, frame_id, entry.id, role, calls, time.monotonic() + timeout_s, call_ref=call_ref
    )


def settle(
    bridge: LLMBridge | None, access: LLMAccess | None, trace: TraceRecorder, node: TraceNode, request_id: str
) -> int:
    """After a plugin call: revoke its token and add one `llm` trace node per LLM call under the plugin's
    node. Returns the calls the bridge counted for it (already charged to the request budget)."""
    if bridge is None or access is None:
        return 0
    counted = bridge.release(access.apiKey)
    for event in bridge.drain_events(request_id, call_ref=node.id):
        trace.node("llm", event.label(), parent=node.id, **event.trace_fields())
    return counted
