"""A plan's order is a function of what the plugins answered, never of how long they took: two kb-plugins
that served the same questions equally well are ordered the same whatever wall time was recorded for
them (machine load), through the real path: recordOutcome's observations folded by the store, handed
back to buildPlan. Measured latency is still recorded."""

from __future__ import annotations

import pytest
from mrpvm.plugins.planner_default.__main__ import plugin as default_planner
from mrpvm.plugins.planner_depth.__main__ import plugin as depth_planner
from mrpvm.protocol.envelope import Descriptor
from planner_support import DESCRIPTORS, _close_stores, hints, intent, kb_attempt, plan_of, record, store_at

__all__ = ["_close_stores"]  # the stores' fixture, used here too

QUESTION = [intent("explain", "Explain the maintenance schedule.")]


def twins() -> list[Descriptor]:
    """Two kb-plugins that declare the same cost and traits: only what was learned can order them."""
    kbs = [
        Descriptor(
            id=pid,
            type="kb-plugin",
            costClass="cheap",
            description="Lookup.",
            plannerHints=hints(relativeCost=0.2),
        )
        for pid in ("kb-a", "kb-b")
    ]
    return [*(d for d in DESCRIPTORS if d.type != "kb-plugin"), *kbs]


def taught(folder, planner, ms: dict[str, float], status: dict[str, str] | None = None) -> list[str]:
    """The kb order after five turns in which both twins were tried with these durations and statuses."""
    status = status or {}
    for _ in range(5):
        attempts = [
            kb_attempt(pid, status.get(pid, "success"), status.get(pid, "success") == "success", ms[pid])
            for pid in ("kb-a", "kb-b")
        ]
        record(planner, folder, attempts, QUESTION)
    return plan_of(planner, QUESTION, artifacts=folder, descriptors=twins()).kbPluginOrder


@pytest.mark.parametrize("planner", [default_planner, depth_planner], ids=lambda p: p.id)
def test_recorded_latency_does_not_order_plugins_that_served_alike(tmp_path, planner):
    slow_a = taught(tmp_path / "slow-a", planner, {"kb-a": 4000.0, "kb-b": 3.0})
    slow_b = taught(tmp_path / "slow-b", planner, {"kb-a": 3.0, "kb-b": 4000.0})
    assert slow_a == slow_b
    # the wall time is still recorded (the kernel folds it), only no plan reads it
    learned = {(s.pluginId, s.task): s for s in store_at(tmp_path / "slow-a").learned(planner.id, None)}
    assert learned["kb-a", ""].latencyMs > 1000 > learned["kb-b", ""].latencyMs


def test_what_a_plugin_answered_still_orders_it_whatever_its_speed(tmp_path):
    # kb-b is a thousand times faster but its views were insufficient: kb-a, which served, leads
    order = taught(tmp_path / "q", default_planner, {"kb-a": 4000.0, "kb-b": 3.0}, {"kb-b": "insufficient"})
    assert order[0] == "kb-a"
    order = taught(tmp_path / "r", default_planner, {"kb-a": 3.0, "kb-b": 4000.0}, {"kb-a": "insufficient"})
    assert order[0] == "kb-b"
