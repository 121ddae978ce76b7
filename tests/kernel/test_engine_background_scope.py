"""Which turns wait for a recordOutcome left running (`run_turn(..., defer_outcome=True)`).

A turn waits before calling a planner only for that planner's pending outcomes of its own session's
earlier turns (on the same KB: a planner learns per mounted KB): a conversation sees what its turns
taught in sequence, and no buildPlan is ever held behind another session's recordOutcome.
"""

from __future__ import annotations

import anyio
from engine_support import Harness, intent
from mrpvm.kernel.engine import TurnRequest, run_turn

ENABLED = ["planner-a", "sd-a", "kb-a", "gs-a"]
PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
SCRIPT = {
    "planner-a": {
        "buildPlan": {"plan": PLAN, "track": True},
        "recordOutcome": {"sleepMs": 800, "track": True},
    },
    "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")]}},
    "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
}


def two_turns(tmp_path, same_kb: bool, same_session: bool = False) -> tuple[Harness, list]:
    """A turn on KB x, then at once a turn on KB x or on KB y, of a new session or of the same one."""
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            kb_x = ctx.store.create_kb("x").id
            kb_y = kb_x if same_kb else ctx.store.create_kb("y").id
            first = await run_turn(ctx, TurnRequest(message="what is alpha?", kb=kb_x), defer_outcome=True)
            again = first.session_id if same_session else None
            second = await run_turn(
                ctx, TurnRequest(message="what is alpha?", kb=kb_y, session_id=again), defer_outcome=True
            )
            return [first, second]
        finally:
            await ctx.aclose()

    return h, anyio.run(go)


def test_a_session_on_another_kb_does_not_wait_for_a_pending_outcome(tmp_path):
    first, second, pending, h = answered_while_pending(tmp_path, same_kb=False)
    assert [first.status, second.status] == ["success", "success"]
    assert first.session_id != second.session_id
    assert pending == [1, 1]  # the second turn answered while the first's outcome was being recorded
    assert [c["op"] for c in h.calls("planner-a")].count("recordOutcome") == 2


def answered_while_pending(tmp_path, same_kb: bool):
    """Two new sessions' turns, the first's recordOutcome taking 3 s: (first, second, each session's
    pending background jobs right after the second answered, harness)."""
    slow = {**SCRIPT, "planner-a": {**SCRIPT["planner-a"], "recordOutcome": {"sleepMs": 3000}}}
    h = Harness(tmp_path, slow, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            kb_x = ctx.store.create_kb("x").id
            kb_y = kb_x if same_kb else ctx.store.create_kb("y").id
            first = await run_turn(ctx, TurnRequest(message="what is alpha?", kb=kb_x), defer_outcome=True)
            second = await run_turn(ctx, TurnRequest(message="what is alpha?", kb=kb_y), defer_outcome=True)
            return first, second, [len(ctx.background.pending(r.session_id)) for r in (first, second)]
        finally:
            await ctx.aclose()

    return (*anyio.run(go), h)


def test_another_session_on_the_same_kb_does_not_wait_for_a_pending_outcome(tmp_path):
    first, second, pending, h = answered_while_pending(tmp_path, same_kb=True)
    assert [first.status, second.status] == ["success", "success"]
    assert first.session_id != second.session_id
    assert pending == [1, 1]  # the second session answered while the first's outcome was being recorded
    assert [c["op"] for c in h.calls("planner-a")].count("recordOutcome") == 2


def test_the_same_session_waits_for_its_pending_outcome(tmp_path):
    h, results = two_turns(tmp_path, same_kb=True, same_session=True)
    assert [r.status for r in results] == ["success", "success"]
    assert results[0].session_id == results[1].session_id
    # planner-a has 4 workers: only the wait keeps the second turn's plans off the first's outcome
    assert h.counter() == {"active": 0, "max": 1, "total": 4}  # per turn: the post-seed plan, the outcome
