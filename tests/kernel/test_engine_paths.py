"""Engine backtracking paths, each proven by the trace, with scripted plugins as real subprocesses."""

from __future__ import annotations

from engine_support import Harness, calls_in_order, edges, intent, nodes, unit
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

UNITS = [unit("session::t::unit-000", "Alpha is a widget"), unit("session::t::unit-001", "Beta is a gadget")]


def seeds(*intents: dict, units: list[dict] = UNITS) -> dict:
    return {"detectSeeds": {"intents": list(intents), "units": units}}


def chain(result, op: str) -> bool:
    """Every consecutive pair of the op's calls within a seed is linked by a next-candidate edge."""
    ids = [n["id"] for n in nodes(result, kind="plugin", op=op)]
    links = set(edges(result, "next-candidate"))
    return all((a, b) in links for a, b in zip(ids, ids[1:], strict=False))


def test_error_unsupported_and_invalid_cnl_move_to_the_next_candidate(tmp_path):
    script = {
        "sd-a": {"detectSeeds": {"badCnl": True}},
        "sd-b": seeds(intent("what is alpha")),
        "kb-b": {"retrieve": {"select": "all"}},  # kb-a has no script: unsupported
        "gs-a": {"solve": {"fail": {"code": "BOOM", "message": "scripted crash"}}},
        # gs-b unsupported
        "gs-c": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
        "val-a": {"validate": {"status": "accepted"}},
    }
    result = Harness(tmp_path, script).ask("what is alpha?")
    assert calls_in_order(result, "detectSeeds")[:2] == [("sd-a", "error"), ("sd-b", "success")]
    sd_error = nodes(result, kind="plugin", op="detectSeeds", pluginId="sd-a")[0]
    assert sd_error["output"]["code"] == "INVALID_CNL"
    assert calls_in_order(result, "retrieve") == [("kb-a", "unsupported"), ("kb-b", "success")]
    assert calls_in_order(result, "solve") == [
        ("gs-a", "error"),
        ("gs-b", "unsupported"),
        ("gs-c", "success"),
    ]
    assert chain(result, "solve") and chain(result, "retrieve")
    group = result.response_document["groups"][0]
    assert (group["status"], group["answerMarkdown"], group["plugins"]["gs"]) == (
        "success",
        "Alpha is a widget.",
        "gs-c",
    )
    assert result.seed_detector_plugin == "sd-b" and result.goal_solver_plugin == "gs-c"
    assert result.status == "success"


def test_insufficient_moves_to_the_next_kb_and_keeps_the_best_insufficient(tmp_path):
    script = {
        "sd-a": seeds(intent("what is alpha")),
        "kb-a": {"retrieve": {"status": "insufficient", "select": 1}},
        "kb-b": {"retrieve": {"status": "insufficient", "select": "all"}},
        "kb-c": {"retrieve": {"fail": {"code": "DOWN"}}},
        "gs-a": {"solve": {"answer": "from {prompt}", "sources": "evidence"}},
    }
    h = Harness(tmp_path, script)
    result = h.ask("what is alpha?")
    assert calls_in_order(result, "retrieve") == [
        ("kb-a", "insufficient"),
        ("kb-b", "insufficient"),
        ("kb-c", "error"),
    ]
    kept = nodes(result, kind="plugin", op="retrieve", pluginId="kb-b")[0]
    assert kept["output"].get("keptAsBestInsufficient") is True
    assert h.calls("gs-a", "solve")[0]["evidence"] == [
        u["id"] for u in UNITS
    ]  # kb-b's two units, not kb-a's one
    group = result.response_document["groups"][0]
    assert group["plugins"]["kb"] == "kb-b"
    assert any("insufficient by kb-b" in w for w in group["warnings"])


def test_a_sufficient_view_stops_the_kb_stage(tmp_path):
    script = {
        "sd-a": seeds(intent("what is alpha")),
        "kb-a": {"retrieve": {"status": "insufficient", "select": 1}},
        "kb-b": {"retrieve": {"select": 1}},
        "kb-c": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"answer": "ok", "sources": "evidence"}},
    }
    h = Harness(tmp_path, script)
    result = h.ask("what is alpha?")
    assert calls_in_order(result, "retrieve") == [("kb-a", "insufficient"), ("kb-b", "success")]
    assert h.calls("kb-c", "retrieve") == []


def test_no_context_moves_to_the_next_goal_solver(tmp_path):
    script = {
        "sd-a": seeds(intent("what is alpha")),
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"status": "no-context", "answer": NO_CONTEXT_ANSWER}},
        "gs-b": {"solve": {"answer": "Alpha is a widget.", "sources": ["session::t::unit-000"]}},
    }
    result = Harness(tmp_path, script).ask("what is alpha?")
    assert calls_in_order(result, "solve") == [("gs-a", "no-context"), ("gs-b", "success")]
    group = result.response_document["groups"][0]
    assert group["status"] == "success" and group["answerMarkdown"] == "Alpha is a widget."
    assert [s["id"] for s in group["currentTurnContext"]] == [u["id"] for u in UNITS]


def test_next_knowledge_view_after_every_goal_solver_failed_on_the_first(tmp_path):
    script = {
        "sd-a": seeds(intent("what is alpha")),
        "kb-a": {"retrieve": {"select": 1}},
        "kb-b": {"retrieve": {"select": "all"}},
        "gs-a": {
            "solve": [
                {"when": {"evidenceAtLeast": 2}, "answer": "Alpha, with both units.", "sources": "evidence"},
                {"status": "no-context", "answer": NO_CONTEXT_ANSWER},
            ]
        },
    }
    h = Harness(tmp_path, script)
    result = h.ask("what is alpha?")
    solves = calls_in_order(result, "solve")
    assert solves == [
        ("gs-a", "no-context"),
        ("gs-b", "unsupported"),
        ("gs-c", "unsupported"),
        ("gs-a", "success"),
    ]
    views = [n for n in nodes(result, kind="event") if n["label"].startswith("knowledge view")]
    assert len(views) == 2 and (views[0]["id"], views[1]["id"]) in edges(result, "next-view")
    assert [len(c["evidence"]) for c in h.calls("gs-a", "solve")] == [1, 2]
    assert result.response_document["groups"][0]["plugins"]["kb"] == "kb-b"


def test_weak_recovery_returns_the_best_weak_answer_with_its_status(tmp_path):
    script = {
        "sd-a": seeds(intent("what is omega")),
        "kb-a": {"retrieve": {"status": "insufficient", "select": 1}},
        "gs-a": {"solve": {"status": "no-context", "answer": NO_CONTEXT_ANSWER}},
        "gs-b": {
            "solve": {
                "status": "no-context",
                "confidence": "low",
                "answer": "Omega is not described; closest: Alpha.",
            }
        },
        "gs-c": {"solve": {"fail": {"code": "BOOM"}}},
    }
    h = Harness(tmp_path, script, budget={"maxFallbackCalls": 20})  # room to reach the next planner
    result = h.ask("what is omega?")
    group = result.response_document["groups"][0]
    assert group["status"] == "no-context"
    assert group["answerMarkdown"] == "Omega is not described; closest: Alpha."  # low beats no confidence
    assert any(w.startswith("weak recovery") for w in group["warnings"])
    assert result.status == "weak"
    # both planners were tried before settling; the second skips what failed before
    branches = nodes(result, kind="branch")
    assert [b["pluginId"] for b in branches] == ["planner-a", "planner-b"]
    assert (branches[0]["id"], branches[1]["id"]) in edges(result, "next-planner")
    assert ("gs-c", "skipped-known-failure") in calls_in_order(result, "solve")
    assert "**Status:** no-context" in result.response_markdown


def test_everything_unsupported_still_produces_a_response(tmp_path):
    result = Harness(tmp_path, {}).ask("what is alpha?")  # every scripted plugin answers unsupported
    group = result.response_document["groups"][0]
    assert (result.status, group["status"], group["answerMarkdown"]) == (
        "failed",
        "failed",
        NO_CONTEXT_ANSWER,
    )
    assert group["act"] == "describe" and group["intent"] == "what is alpha?"
    assert any("no seed detector" in w for w in result.response_document["warnings"])
    assert "### Answer" in result.response_markdown and "### Sources Used" in result.response_markdown


def test_validation_rejection_moves_to_the_next_goal_solver_then_the_next_planner(tmp_path):
    plan_a = {"goalSolverOrder": ["gs-a", "gs-b"], "validatorOrder": ["val-a"]}
    plan_b = {"goalSolverOrder": ["gs-a", "gs-b", "gs-c"], "validatorOrder": ["val-a"]}
    script = {
        "planner-a": {"buildPlan": [{"when": {"phase": "post-seed"}, "plan": plan_a}], "recordOutcome": {}},
        "planner-b": {"buildPlan": [{"when": {"phase": "post-seed"}, "plan": plan_b}], "recordOutcome": {}},
        "sd-a": seeds(intent("what is alpha")),
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"answer": "answer of gs-a", "sources": "evidence"}},
        "gs-b": {"solve": {"answer": "answer of gs-b", "sources": "evidence"}},
        "gs-c": {"solve": {"answer": "answer of gs-c", "sources": "evidence"}},
        "val-a": {
            "validate": [
                {"when": {"answerContains": "gs-c"}, "status": "accepted"},
                {"status": "rejected", "result": "not grounded"},
            ]
        },
    }
    h = Harness(tmp_path, script, budget={"maxFallbackCalls": 20})  # room for the whole backtracking
    result = h.ask("what is alpha?")
    assert calls_in_order(result, "solve") == [
        ("gs-a", "success"),
        ("gs-b", "success"),  # planner-a: both rejected
        ("gs-a", "skipped-known-failure"),
        ("gs-b", "skipped-known-failure"),
        ("gs-c", "success"),  # planner-b
    ]
    assert calls_in_order(result, "validate") == [
        ("val-a", "rejected"),
        ("val-a", "rejected"),
        ("val-a", "accepted"),
    ]
    rejected = [n for n in nodes(result, kind="plugin", op="validate") if n["status"] == "rejected"]
    assert all(n["output"]["code"] == "VALIDATION_REJECTED" for n in rejected)
    branches = nodes(result, kind="branch")
    assert [b["pluginId"] for b in branches] == ["planner-a", "planner-b"]
    assert (branches[0]["id"], branches[1]["id"]) in edges(result, "next-planner")
    assert len(edges(result, "validates")) == 3
    group = result.response_document["groups"][0]
    assert (group["status"], group["validation"], group["answerMarkdown"]) == (
        "success",
        "accepted",
        "answer of gs-c",
    )
    assert result.planner_plugin == "planner-b"
    outcomes = {c["plugin"]: c for c in h.calls(op="recordOutcome")}
    assert set(outcomes) == {"planner-a", "planner-b"}


def test_validator_error_is_recorded_and_never_counts_as_accepted(tmp_path):
    script = {
        "sd-a": seeds(intent("what is alpha")),
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
        "val-a": {"validate": {"fail": {"code": "VAL_DOWN", "message": "validator crashed"}}},
        # val-b: unsupported (an LLM validator with no LLM)
    }
    result = Harness(tmp_path, script, orders={"val": ["val-a", "val-b"]}).ask("what is alpha?")
    assert calls_in_order(result, "validate") == [("val-a", "error"), ("val-b", "unsupported")]
    group = result.response_document["groups"][0]
    assert group["status"] == "success" and group["validation"] == "unvalidated"
    assert any("val-a failed" in w for w in group["warnings"])
    assert "(accepted)" not in result.response_markdown
