"""What one plugin call sees of its turn (calls.py): the `CallScope` the turn state provides, the
attempts a call records, the turn's call bookkeeping (`TurnCalls`) and the plugin facts resolved once
per kernel context (`PluginInfo`). Nothing here knows frames' or seeds' logic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.envelope import (
    ContextItem,
    OutcomeAttempt,
    OutcomeStatus,
    Paths,
)

from ..budgets import RequestBudget
from ..registry import PluginEntry
from ..supervisor import CallResult, PluginCallError
from ..trace import TraceNode, TraceRecorder
from .frame import ExecutionFrame

if TYPE_CHECKING:
    import asyncio

    from ..background import Background
    from ..llm import LLMBridge
    from ..supervisor import Supervisor

MemoKey = tuple[str, ...]  # stage, plugin id, then what the call's result depends on
EventHook = Callable[[dict[str, Any]], None]


class PluginInfo:
    """What a plugin call needs from the registry and config, resolved once per kernel context."""

    __slots__ = ("entry", "type", "max_llm_calls", "timeout_ms", "outcome_batch")

    def __init__(self, entry: PluginEntry, limit_ms: int):
        manifest = entry.manifest
        self.entry = entry
        self.type: str = entry.type
        self.max_llm_calls: int = manifest.maxLLMCalls
        self.timeout_ms: int = min(manifest.timeoutMs, limit_ms)
        self.outcome_batch: int = getattr(manifest, "outcomeBatch", 1)  # a planner's (SPEC §7)


class Attempt(msgspec.Struct):
    """One plugin call as the stage logic sees it."""

    plugin_id: str
    type: str
    op: str
    status: str
    node: TraceNode
    doc: CnlDocument | None = None
    duration_ms: float = 0.0
    llm_calls: int = 0


class BranchRun(msgspec.Struct):
    """One planner's attempt at a frame: the attempts it caused, for recordOutcome."""

    planner_id: str | None
    node: TraceNode
    frame_id: str
    attempts: list[OutcomeAttempt] = msgspec.field(default_factory=list)
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
            self._background.hurry(plugin_id)
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
    plugin_failures: dict[str, str]  # plugin id -> "op: CODE: message" of its first failed call

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
