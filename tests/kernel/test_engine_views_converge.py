"""A seed's view chain stops when two kb-plugins agree: a weak view whose evidence is the very unit set of an
earlier weak view (its solves are the same requests) ends the walk; the later kb-plugins are not asked, their
calls are charged to the fallback budget as if made, and the trace says why. Views that differ, or that
select nothing, do not stop it."""

from __future__ import annotations

import json

from engine_support import Harness, calls_in_order, intent, nodes, unit

UNITS = [unit("session::t::unit-000", "Alpha is a widget"), unit("session::t::unit-001", "Beta is a gadget")]
PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a", "kb-b", "kb-c"], "goalSolverOrder": ["gs-a"]}
ENABLED = ["planner-a", "planner-b", "sd-a", "kb-a", "kb-b", "kb-c", "gs-a"]


def script(selects: dict[str, object]) -> dict:
    return {
        "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
        "planner-b": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "units": UNITS}},
        **{kb: {"retrieve": {"select": n}, "onSessionEvent": {}} for kb, n in selects.items()},
        "gs-a": {"solve": {"status": "no-context"}},
    }


def ask(tmp_path, selects: dict[str, object], fallback_calls: int = 6):
    h = Harness(tmp_path, script(selects), enabled=ENABLED, budget={"maxFallbackCalls": fallback_calls})
    return h, h.ask("what is alpha?")


def test_a_second_view_with_the_same_evidence_ends_the_walk(tmp_path):
    h, result = ask(tmp_path, {"kb-a": 1, "kb-b": 1, "kb-c": "all"})
    assert [p for p, _ in calls_in_order(result, "retrieve")] == ["kb-a", "kb-b"]
    assert h.calls("kb-c", "retrieve") == []
    (event,) = nodes(result, kind="event", status="converged")
    assert "kb-b" in event["label"] and "1 further kb-plugin(s) not asked" in event["label"]
    # kb-c's retrieve and solve are charged: 6 - (kb-b, its solve, kb-c, its solve) = 2 < 5, no next planner
    assert h.calls("planner-b", "buildPlan") == []
    assert result.status != "success"


def test_views_that_differ_walk_on(tmp_path):
    h, result = ask(tmp_path, {"kb-a": 1, "kb-b": "all", "kb-c": 1})
    assert [p for p, _ in calls_in_order(result, "retrieve")] == ["kb-a", "kb-b", "kb-c"]


def test_views_that_select_nothing_do_not_converge(tmp_path):
    h, result = ask(tmp_path, {"kb-a": 0, "kb-b": 0, "kb-c": "all"})
    assert [p for p, _ in calls_in_order(result, "retrieve")] == ["kb-a", "kb-b", "kb-c"]
    assert nodes(result, kind="event", status="converged") == []
    assert "converged" not in json.dumps(result.response_document)
