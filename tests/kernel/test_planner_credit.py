"""The planner-level EWMA moves on comparative evidence: a branch that fell short counts against its planner
only when another planner's branch in the same turn did better (kernel/engine/outcome.py)."""

from __future__ import annotations

import anyio
from engine_support import Harness, intent, nodes, unit
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

UNITS = [unit("session::t::unit-000", "Gamma is a lever")]
ROOM = {"maxFallbackCalls": 20}  # room for both planners' branches


def planner_stats_after(h: Harness, *messages: str) -> tuple[dict, list]:
    async def go():
        ctx = await h.open()
        try:
            results = [await run_turn(ctx, TurnRequest(message=m)) for m in messages]
            return ctx.store.planner_stats(), results
        finally:
            await ctx.aclose()

    return anyio.run(go)


def test_a_turn_no_planner_could_answer_counts_against_none(tmp_path):
    script = {
        "sd-a": {"detectSeeds": {"intents": [intent("what is omega")], "units": UNITS}},
        "kb-a": {"retrieve": {"status": "insufficient", "select": 1}},
        "gs-a": {"solve": {"status": "no-context", "confidence": "low", "answer": "Closest: gamma."}},
    }
    stats, results = planner_stats_after(Harness(tmp_path, script, budget=ROOM), "what is omega?")
    assert [b["pluginId"] for b in nodes(results[0], kind="branch")] == ["planner-a", "planner-b"]
    assert results[0].status == "weak"
    assert stats == {}  # both branches fell short: neither planner's record moved


def test_a_branch_beaten_by_another_planner_counts_against_its_planner(tmp_path):
    plan_a = {"goalSolverOrder": ["gs-a"], "validatorOrder": ["val-a"]}
    plan_b = {"goalSolverOrder": ["gs-b"], "validatorOrder": ["val-a"]}
    script = {
        "planner-a": {"buildPlan": [{"when": {"phase": "post-seed"}, "plan": plan_a}], "recordOutcome": {}},
        "planner-b": {"buildPlan": [{"when": {"phase": "post-seed"}, "plan": plan_b}], "recordOutcome": {}},
        "sd-a": {"detectSeeds": {"intents": [intent("what is gamma")], "units": UNITS}},
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"status": "no-context", "confidence": "low", "answer": NO_CONTEXT_ANSWER}},
        "gs-b": {"solve": {"answer": "Gamma is a lever.", "sources": "evidence"}},
        "val-a": {"validate": {"status": "accepted"}},
    }
    h = Harness(tmp_path, script, budget=ROOM)
    stats, results = planner_stats_after(h, "what is gamma?", "what is gamma, again?")
    first = nodes(results[0], kind="branch")
    assert [b["pluginId"] for b in first] == ["planner-a", "planner-b"]
    assert results[0].status == "success" and results[0].planner_plugin == "planner-b"
    assert stats["planner-a"].successRate < 0.5 < stats["planner-b"].successRate
    assert stats["planner-a"].samples == stats["planner-b"].samples == 2  # both turns compared them
