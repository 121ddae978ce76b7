"""Which turns wait for a recordOutcome left running (`run_turn(..., defer_outcome=True)`).

A planner learns per mounted KB (its artifact folder is per KB), so a turn waits before calling a
planner only for that planner's pending outcomes of turns on the same KB: a session on another KB
never waits for them (its plans could not see them).
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


def two_turns(tmp_path, same_kb: bool) -> tuple[Harness, list]:
    """A turn on KB x, then at once a turn of a new session on KB x or on KB y."""
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            kb_x = ctx.store.create_kb("x").id
            kb_y = kb_x if same_kb else ctx.store.create_kb("y").id
            first = await run_turn(ctx, TurnRequest(message="what is alpha?", kb=kb_x), defer_outcome=True)
            second = await run_turn(ctx, TurnRequest(message="what is alpha?", kb=kb_y), defer_outcome=True)
            return [first, second]
        finally:
            await ctx.aclose()

    return h, anyio.run(go)


def test_a_session_on_another_kb_does_not_wait_for_a_pending_outcome(tmp_path):
    h, results = two_turns(tmp_path, same_kb=False)
    assert [r.status for r in results] == ["success", "success"]
    assert results[0].session_id != results[1].session_id
    # the second turn's plans ran while the first turn's outcome was still being recorded
    assert h.counter()["max"] == 2
    assert [c["op"] for c in h.calls("planner-a")].count("recordOutcome") == 2


def test_a_session_on_the_same_kb_waits_for_a_pending_outcome(tmp_path):
    h, results = two_turns(tmp_path, same_kb=True)
    assert [r.status for r in results] == ["success", "success"]
    # planner-a has 4 workers: only the wait keeps the second turn's plans off the first's outcome
    assert h.counter() == {"active": 0, "max": 1, "total": 6}
