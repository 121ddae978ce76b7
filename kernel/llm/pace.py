"""How long an LLM plugin call may take: the endpoint's configured per-call time, narrowed by its measured speed.

A manifest's `timeoutMs` is written for the plugin's own work plus an LLM call on a fast hosted model; a
135M model on two busy CPU cores needs 20-70 s for one call, and a constant would kill every such call.
So the kernel gives a plugin that may call the LLM a deadline of at least

    calls × per-call time + PLUGIN_WORK_S

where the per-call time is the configured upstream timeout (`MRPVM_LLM_TIMEOUT_MS`, the longest one call
may take) until the bridge has timed MIN_SAMPLES upstream answers, and then SLACK × the slowest of the
last WINDOW (never below FLOOR_S, never above the configured time). A call that timed out counts as taking
the time it was given, so a slower phase of the endpoint widens the next deadlines again. The request's
own deadline still bounds every call (kernel/budgets.py), and a plugin call whose one LLM call would take
longer, as measured (`expected_s`: the median of the last WINDOW calls plus PLUGIN_WORK_S), than the
request has left is not started (kernel/engine/calls.py: `skipped-budget`). Measurements live in memory for the kernel's
life: a restart starts from the configured time again.
"""

from __future__ import annotations

from collections import deque

WINDOW = 8
MIN_SAMPLES = 3
SLACK = 2.0
FLOOR_S = 5.0
PLUGIN_WORK_S = 2.0  # the plugin's own work around its LLM calls (prompt building, parsing, checks)


class LLMPace:
    """Measured upstream call durations and the time they allow the next call."""

    __slots__ = ("configured_s", "_samples")

    def __init__(self, configured_s: float):
        self.configured_s = configured_s
        self._samples: deque[float] = deque(maxlen=WINDOW)

    def observe(self, seconds: float) -> None:
        """One upstream call's duration (an answer, or a timeout after `seconds`)."""
        if seconds > 0:
            self._samples.append(seconds)

    @property
    def measured(self) -> bool:
        return len(self._samples) >= MIN_SAMPLES

    def call_s(self) -> float:
        """The time one LLM call is given."""
        if not self.measured:
            return self.configured_s
        return min(self.configured_s, max(FLOOR_S, SLACK * max(self._samples)))

    def expected_s(self) -> float | None:
        """How long a plugin call with one LLM call is expected to take (the median of the measured
        calls, plus the plugin's own work); None until MIN_SAMPLES calls are measured."""
        if not self.measured:
            return None
        ordered = sorted(self._samples)
        return ordered[len(ordered) // 2] + PLUGIN_WORK_S

    def plugin_ms(self, calls: int) -> int:
        """The least deadline of a plugin call that may make `calls` LLM calls (0: no LLM time)."""
        if calls <= 0:
            return 0
        return int((calls * self.call_s() + PLUGIN_WORK_S) * 1000)

    def describe(self) -> dict[str, float | int | str]:
        """What the trace says about how the LLM time was chosen."""
        basis = f"measured ({len(self._samples)} calls)" if self.measured else "configured"
        return {"llmCallMs": int(self.call_s() * 1000), "llmPace": basis}
