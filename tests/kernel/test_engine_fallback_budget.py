"""The fallback budget (engine.budget.maxFallbackCalls): after a seed's first candidate path gives no
accepted answer, backtracking (next gs candidate, next view, next planner) spends at most that many
plugin calls; then the best weak answer is returned with a warning saying why the search stopped."""

from __future__ import annotations

import json

from engine_support import Harness, calls_in_order, intent

PLAN = {
    "seedDetectorOrder": ["sd-a"],
    "kbPluginOrder": ["kb-a", "kb-b", "kb-c"],
    "goalSolverOrder": ["gs-a", "gs-b", "gs-c"],
}
SCRIPT = {
    "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
    "planner-b": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
    "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")]}},
    **{kb: {"retrieve": {"select": "all"}, "onSessionEvent": {}} for kb in ("kb-a", "kb-b", "kb-c")},
    **{gs: {"solve": {"status": "no-context"}} for gs in ("gs-a", "gs-b", "gs-c")},
}
ENABLED = ["planner-a", "planner-b", "sd-a", "kb-a", "kb-b", "kb-c", "gs-a", "gs-b", "gs-c"]


def run(tmp_path, fallback_calls: int | None):
    budget = {"maxFallbackCalls": fallback_calls} if fallback_calls is not None else None
    h = Harness(tmp_path, SCRIPT, enabled=ENABLED, budget=budget)
    return h, h.ask("what is alpha?")


def test_backtracking_stops_when_the_fallback_budget_is_spent(tmp_path):
    h, result = run(tmp_path, 3)
    # first path: kb-a's view, gs-a; then three fallback calls: gs-b, gs-c on that view, kb-b's retrieve
    assert [p for p, s in calls_in_order(result, "retrieve")] == ["kb-a", "kb-b"]
    assert [c["plugin"] for c in h.calls() if c["op"] in ("retrieve", "solve")] == [
        "kb-a",
        "gs-a",
        "gs-b",
        "gs-c",
        "kb-b",
    ]
    assert h.calls("planner-b", "buildPlan") == []  # too few fallback calls left for another planner
    text = json.dumps(result.response_document)
    assert "fallback budget spent (3 calls)" in text and "too few calls for another planner" in text
    assert result.status != "success"


def test_a_larger_budget_backtracks_through_every_view_and_planner(tmp_path):
    h, result = run(tmp_path, 100)
    assert {c["plugin"] for c in h.calls() if c["op"] == "retrieve"} == {"kb-a", "kb-b", "kb-c"}
    assert h.calls("planner-b", "buildPlan") != []
    assert "fallback budget" not in json.dumps(result.response_document)


def test_a_first_path_that_answers_spends_nothing(tmp_path):
    script = {**SCRIPT, "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}}}
    h = Harness(tmp_path, script, enabled=ENABLED, budget={"maxFallbackCalls": 0})
    result = h.ask("what is alpha?")
    assert result.status == "success"
    assert [c["plugin"] for c in h.calls() if c["op"] in ("retrieve", "solve")] == ["kb-a", "gs-a"]
