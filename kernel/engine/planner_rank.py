"""The order planners lead a turn in, from their measured success (docs/ARCHITECTURE.md §4, step 7).

Kept apart from the frame logic so a one-turn process can ask, before the turn's modules load, which planner
its turn will lead with (kernel/engine/warm_start.py) and get the answer the turn itself will use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

PLANNER_PRIOR = 0.5
# A planner's measured success is pooled with this many samples' worth of the prior, and a planner leads
# one configured before it only with a pooled score higher by more than PLANNER_MARGIN: the lead moves on
# evidence, not on one weak turn (a fallback planner, heavy-first, would otherwise lead every turn after
# the first planner's first weak answer, trying the slow plugins first).
PLANNER_PRIOR_WEIGHT = 3
PLANNER_MARGIN = 0.1


class Measured(Protocol):
    """A planner's record as the store keeps it (PlannerStats) or planners see it (PluginStats)."""

    @property
    def samples(self) -> int: ...

    @property
    def successRate(self) -> float: ...  # noqa: N802 - the protocol's field name


def order_planners(base: list[str], stats: Mapping[str, Measured], preferred: str | None) -> list[str]:
    """`base` (config order) reordered by pooled success: a planner moves ahead of the one before it when
    it scores more than PLANNER_MARGIN higher, or within the margin when it is the preferred one."""

    def score(planner_id: str) -> float:
        s = stats.get(planner_id)
        n = s.samples if s is not None else 0
        rate = s.successRate if s is not None else PLANNER_PRIOR
        return (n * rate + PLANNER_PRIOR_WEIGHT * PLANNER_PRIOR) / (n + PLANNER_PRIOR_WEIGHT)

    ranked = list(base)
    moved = True
    while moved:  # each swap moves a planner past one it beats; none can swap back, so this ends
        moved = False
        for i in range(len(ranked) - 1):
            ahead, behind = ranked[i], ranked[i + 1]
            lead = score(behind) - score(ahead)
            if lead > PLANNER_MARGIN or (lead >= -PLANNER_MARGIN and behind == preferred):
                ranked[i], ranked[i + 1] = behind, ahead
                moved = True
    return ranked


def planner_base(config_order: list[str], enabled: list[str]) -> list[str]:
    """The enabled planners in config order, then the other enabled ones."""
    return [p for p in dict.fromkeys([*config_order, *enabled]) if p in enabled]
