"""Request budgets (docs/ARCHITECTURE.md §4, step 8): LLM calls, a wall-clock deadline, frame depth and
the plugin calls a turn may spend falling back after a weak answer.

One `RequestBudget` is shared by every frame of a request, so a child frame inherits exactly what its
parent has left. LLM calls are charged from what each plugin reports (`LLMCalls`) until the LLM bridge
counts them itself. The engine runs on one event loop, so check-then-charge needs no lock.
"""

from __future__ import annotations

import time

from .errors import BadInput

# Comparative deliberation (engine/deliberation.py): up to this many more candidate answers per seed.
# The one home of the limit: turns, stored session preferences and the shells' options all check it.
MAX_DELIBERATION = 3


def check_deliberation(level: int | None) -> int | None:
    """A deliberation level is 0..MAX_DELIBERATION (None: not given), else BadInput BAD_DELIBERATION."""
    if level is not None and not 0 <= level <= MAX_DELIBERATION:
        raise BadInput(
            "BAD_DELIBERATION",
            f"the deliberation level must be 0..{MAX_DELIBERATION} (got {level})",
            {"field": "deliberation_level", "allowed": list(range(MAX_DELIBERATION + 1))},
        )
    return level


class CallBudget:
    """LLM calls a request may still make. The LLM bridge charges a call before it goes upstream and
    refunds it when the upstream never got it. Alone, it serves requests without a deadline (ingest,
    tools, tests)."""

    __slots__ = ("llm_calls_total", "llm_calls_used")

    def __init__(self, llm_calls: int):
        self.llm_calls_total = max(0, llm_calls)
        self.llm_calls_used = 0

    @property
    def llm_calls_left(self) -> int:
        return max(0, self.llm_calls_total - self.llm_calls_used)

    def charge(self, llm_calls: int) -> None:
        if llm_calls > 0:
            self.llm_calls_used += llm_calls

    def refund(self, llm_calls: int) -> None:
        self.llm_calls_used = max(0, self.llm_calls_used - max(0, llm_calls))


class RequestBudget(CallBudget):
    """What a request may still spend."""

    __slots__ = ("deadline", "started", "max_depth", "fallback_calls_total", "fallback_calls_used", "_clock")

    def __init__(
        self,
        llm_calls: int,
        timeout_ms: int,
        max_depth: int,
        *,
        fallback_calls: int = 1 << 30,
        clock=time.monotonic,
    ):
        super().__init__(llm_calls)
        self._clock = clock
        self.started = clock()
        self.deadline = self.started + timeout_ms / 1000.0
        self.max_depth = max_depth
        self.fallback_calls_total = max(0, fallback_calls)
        self.fallback_calls_used = 0

    def take_fallback_call(self) -> bool:
        """Charge one backtracking call; False (nothing charged) when the fallback budget is spent."""
        if self.fallback_calls_used >= self.fallback_calls_total:
            return False
        self.fallback_calls_used += 1
        return True

    def fallback_spent(self) -> bool:
        return self.fallback_calls_used >= self.fallback_calls_total

    @property
    def fallback_calls_left(self) -> int:
        return max(0, self.fallback_calls_total - self.fallback_calls_used)

    def time_left_s(self) -> float:
        return max(0.0, self.deadline - self._clock())

    def time_left_ms(self) -> int:
        return int(self.time_left_s() * 1000)

    def expired(self) -> bool:
        return self._clock() >= self.deadline

    def affords(self, max_llm_calls: int) -> bool:
        """A plugin may run only if its declared upper bound fits in what is left."""
        return max_llm_calls <= self.llm_calls_left

    def call_timeout_s(self, plugin_timeout_ms: int) -> float:
        """min(plugin timeout, time left): no call may outlive the request."""
        return max(0.001, min(plugin_timeout_ms / 1000.0, self.time_left_s()))

    def call_window_s(self, plugin_timeout_ms: int) -> float | None:
        """`call_timeout_s` with one clock read; None once the deadline has passed (`expired()`)."""
        left = self.deadline - self._clock()
        if left <= 0.0:
            return None
        return max(0.001, min(plugin_timeout_ms / 1000.0, left))

    def allows_depth(self, depth: int) -> bool:
        return depth <= self.max_depth

    def snapshot(self) -> dict[str, float | int]:
        return {
            "llmCallsLeft": self.llm_calls_left,
            "llmCallsUsed": self.llm_calls_used,
            "timeLeftMs": self.time_left_ms(),
            "maxDepth": self.max_depth,
            "fallbackCallsUsed": self.fallback_calls_used,
        }
