"""Crash-loop throttle: after N consecutive process failures a plugin is refused for a growing pause."""

from __future__ import annotations


class CrashLoopBreaker:
    """Consecutive failures ≥ threshold → back off base·2^k seconds (capped); one success resets.

    When a pause ends, calls are let through again; the next failure doubles the pause.
    """

    __slots__ = ("threshold", "base_s", "max_s", "consecutive", "open_until", "backoff_s", "trips")

    def __init__(self, threshold: int, base_s: float, max_s: float):
        self.threshold, self.base_s, self.max_s = threshold, base_s, max(base_s, max_s)
        self.consecutive = 0
        self.open_until = 0.0
        self.backoff_s = 0.0
        self.trips = 0

    def retry_in(self, now: float) -> float:
        """Seconds until calls are allowed again; 0 when they are allowed now."""
        return self.open_until - now if now < self.open_until else 0.0

    def success(self) -> None:
        self.consecutive = 0
        self.open_until = 0.0
        self.backoff_s = 0.0

    def failure(self, now: float) -> None:
        self.consecutive += 1
        if self.consecutive >= self.threshold:
            step = self.consecutive - self.threshold
            self.backoff_s = min(self.max_s, self.base_s * (2 ** min(step, 30)))
            self.open_until = now + self.backoff_s
            self.trips += 1
