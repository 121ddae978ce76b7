"""recordOutcome runs on its planner's own lane of two workers: it never takes a worker of the pool a
buildPlan needs, one outcome does not wait behind another, and `warm` starts the pool and the lane
before the first call."""

from __future__ import annotations

import asyncio

from engine_support import Harness
from mrpvm.protocol.envelope import BuildPlanPayload, RecordOutcomePayload, Request

SCRIPT = {
    "planner-a": {
        "buildPlan": {"plan": {"goalSolverOrder": ["gs-a"]}},
        "recordOutcome": {"sleepMs": 600, "track": True},
    }
}
PLANNED = "planned"  # the test's mark once it has counted the outcomes still pending after the plan


def request(op: str) -> Request:
    payload = RecordOutcomePayload() if op == "recordOutcome" else BuildPlanPayload()
    return Request(prompt="p", context=[], op=op, payload=payload)


def test_record_outcomes_queue_on_their_lane_while_a_build_plan_is_served(tmp_path):
    # no outcome ends before the test has counted (not: before the faster of two cold workers answered)
    outcome = {**SCRIPT["planner-a"]["recordOutcome"], "waitCall": {"plugin": "test", "op": PLANNED}}
    script = {"planner-a": {**SCRIPT["planner-a"], "recordOutcome": outcome}}
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=["planner-a"])

    async def go():
        ctx = await h.open()
        try:
            sup = ctx.supervisor
            records = [asyncio.create_task(sup.call("planner-a", request("recordOutcome"))) for _ in range(4)]
            await asyncio.sleep(0)
            try:
                plan = await sup.call("planner-a", request("buildPlan"))  # planner-a's pool has 4 slots
                pending_when_planned = sum(not t.done() for t in records)
            finally:
                h.mark(PLANNED)
            done = await asyncio.gather(*records)
            return plan, pending_when_planned, done, sup.health()["planner-a"]
        finally:
            await ctx.aclose()

    plan, pending, done, health = asyncio.run(go())
    assert plan.document.result.status == "success"
    assert pending >= 2  # four 600 ms outcomes, two at a time on the lane: the plan did not wait for them
    assert all(r.document.result.status == "success" for r in done)
    assert h.counter()["max"] == 2  # a second outcome did not wait for the first: the lane's two workers
    assert health["spawns"] == 3  # one pool worker for the plan, two lane workers for the outcomes


def test_warm_starts_the_pool_and_the_lane(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=["planner-a", "sd-a"])

    async def go():
        ctx = await h.open()
        try:
            started = await ctx.warm()
            return started, ctx.supervisor.health()
        finally:
            await ctx.aclose()

    started, health = asyncio.run(go())
    assert started["planner-a"] == 4 + 2  # concurrency 4 plus the recordOutcome lane's two
    assert health["planner-a"]["workers"] == 6
    assert started["sd-a"] == health["sd-a"]["workers"] > 0  # no lane: it has no background op
