"""Calls the engine starts early or runs side by side (kernel/engine.py, kernel/stages.py `Early`).

With more than one sd candidate, an sd-plugin's detectSeeds starts while the planner plans pre-seed
(with one, no pre-seed plan is asked for), and with nothing staged the seeds'
first retrieve starts while it plans post-seed. Either is used only when the plan reaches exactly that
call; otherwise it is recorded as an unused `event` node and the turn goes exactly as in sequence.
"""

from __future__ import annotations

import anyio
from engine_support import Harness, intent, nodes, unit
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.protocol.envelope import Pins

U1 = unit("session::t::unit-000", "Alpha is a widget.")
ENABLED = ["planner-a", "sd-a", "sd-b", "kb-a", "kb-b", "gs-a"]
ONE_SD = ["planner-a", "sd-a", "kb-a", "kb-b", "gs-a"]


def unused(result) -> list[dict]:
    return [n for n in nodes(result, kind="event") if n.get("status") == "unused"]


def plugin_calls(result, op: str) -> list[str]:
    return [n["pluginId"] for n in nodes(result, kind="plugin", op=op)]


def two_turns(h: Harness, message: str):
    async def go():
        ctx = await h.open()
        try:
            first = await run_turn(ctx, TurnRequest(message=message))
            second = await run_turn(ctx, TurnRequest(message=message))
            return first, second
        finally:
            await ctx.aclose()

    return anyio.run(go)


def base_script(pre_plan: dict, post_plan: dict | None = None) -> dict:
    return {
        "planner-a": {
            "buildPlan": [
                {"when": {"phase": "pre-seed"}, "plan": pre_plan},
                {"when": {"phase": "post-seed"}, "plan": post_plan or {}},
            ],
            "recordOutcome": {},
        },
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "result": "by sd-a"}},
        "sd-b": {"detectSeeds": {"intents": [intent("what is alpha")], "result": "by sd-b"}},
        "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "kb-b": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
    }


def test_an_early_seed_call_the_plan_agrees_with_is_recorded_once_in_plan_order(tmp_path):
    h = Harness(
        tmp_path,
        base_script({"seedDetectorOrder": ["sd-a", "sd-b"]}),
        planners=("planner-a",),
        enabled=ENABLED,
    )
    result = h.ask("what is alpha?")
    assert result.status == "success" and result.seed_detector_plugin == "sd-a"
    assert unused(result) == []
    assert plugin_calls(result, "detectSeeds") == ["sd-a"]
    assert [c["plugin"] for c in h.calls(op="detectSeeds")] == ["sd-a"]  # called once, never twice
    plan_node = nodes(result, kind="plugin", op="buildPlan")[0]
    seed_node = nodes(result, kind="plugin", op="detectSeeds")[0]
    # recorded after the plan (the order the stage logic reached it), under the same branch
    assert int(seed_node["id"][1:]) > int(plan_node["id"][1:])
    assert seed_node["output"]["result"] == "by sd-a"


def test_an_early_seed_call_the_plan_does_not_start_with_is_unused_and_then_not_guessed_again(tmp_path):
    script = base_script({"seedDetectorOrder": ["sd-b"]})
    script["sd-a"] = {"detectSeeds": {"fail": {"code": "BOOM"}}}  # its failure must not leak anywhere
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=ENABLED)
    first, second = two_turns(h, "what is alpha?")
    assert first.status == "success" and first.seed_detector_plugin == "sd-b"
    (event,) = unused(first)
    assert event["pluginId"] == "sd-a" and "not used" in event["label"]
    assert event["output"]["callStatus"] == "error"
    # the trace's plugin calls are exactly the sequential ones: no error node, no failure memory entry
    assert plugin_calls(first, "detectSeeds") == ["sd-b"]
    assert not [n for n in nodes(first, kind="plugin") if n["status"] == "error"]
    # the planner's first plan put sd-b first: the next turn starts sd-b early, and uses it
    assert second.seed_detector_plugin == "sd-b" and unused(second) == []
    assert plugin_calls(second, "detectSeeds") == ["sd-b"]


def test_with_one_sd_candidate_no_pre_seed_plan_is_asked_and_nothing_is_guessed(tmp_path):
    """One sd-plugin enabled: a pre-seed plan could only list it, so the turn's one buildPlan is the
    post-seed one. Nothing then guesses the first kb-plugin: the retrieve waits for that plan (the
    configured order's first, kb-a, would be a wrong guess here)."""
    post = {"kbPluginOrder": ["kb-b", "kb-a"], "goalSolverOrder": ["gs-a"]}
    h = Harness(
        tmp_path, base_script({"seedDetectorOrder": ["sd-a"]}, post), planners=("planner-a",), enabled=ONE_SD
    )
    result = h.ask("what is alpha?")
    assert result.status == "success" and result.seed_detector_plugin == "sd-a" and result.kb_plugin == "kb-b"
    assert [c["phase"] for c in h.calls("planner-a", "buildPlan")] == ["post-seed"]
    assert [n["label"] for n in nodes(result, kind="plugin", op="buildPlan")] == ["plan post-seed"]
    (branch,) = nodes(result, kind="branch")
    assert branch["output"]["preSeed"] == "not asked: one sd candidate"
    assert branch["output"]["plan"]["seedDetectorOrder"] == ["sd-a"]
    assert unused(result) == []
    ops = [
        (c["plugin"], c["op"])
        for c in h.calls()
        if c["op"] in ("detectSeeds", "buildPlan", "retrieve", "solve")
    ]
    assert ops == [
        ("sd-a", "detectSeeds"),
        ("planner-a", "buildPlan"),
        ("kb-b", "retrieve"),
        ("gs-a", "solve"),
    ]


def test_an_sd_pin_leaves_no_sd_order_to_plan(tmp_path):
    h = Harness(
        tmp_path, base_script({"seedDetectorOrder": ["sd-a"]}), planners=("planner-a",), enabled=ENABLED
    )
    result = h.ask("what is alpha?", pins=Pins(sd="sd-b"))
    assert result.status == "success" and result.seed_detector_plugin == "sd-b"
    assert [c["phase"] for c in h.calls("planner-a", "buildPlan")] == ["post-seed"]
    assert [c["plugin"] for c in h.calls(op="detectSeeds")] == ["sd-b"]


def test_with_two_sd_candidates_the_pre_seed_plan_orders_them(tmp_path):
    h = Harness(
        tmp_path,
        base_script({"seedDetectorOrder": ["sd-b", "sd-a"]}),
        planners=("planner-a",),
        enabled=ENABLED,
    )
    result = h.ask("what is alpha?")
    assert result.seed_detector_plugin == "sd-b"
    assert [c["phase"] for c in h.calls("planner-a", "buildPlan")] == ["pre-seed", "post-seed"]
    (branch,) = nodes(result, kind="branch")
    assert "preSeed" not in branch["output"]


def test_with_nothing_staged_the_first_retrieve_starts_early_and_is_used_when_the_plan_agrees(tmp_path):
    plan = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-b", "kb-a"], "goalSolverOrder": ["gs-a"]}
    h = Harness(tmp_path, base_script(plan, plan), planners=("planner-a",), enabled=ENABLED)
    result = h.ask("what is alpha?")
    assert result.status == "success" and result.kb_plugin == "kb-b"
    assert unused(result) == []
    assert plugin_calls(result, "retrieve") == ["kb-b"]
    assert [c["plugin"] for c in h.calls(op="retrieve")] == ["kb-b"]
    seed = nodes(result, kind="seed")[0]
    retrieve = nodes(result, kind="plugin", op="retrieve")[0]
    assert (seed["id"], retrieve["id"]) in {
        (e["src"], e["dst"]) for e in result.execution_trace["edges"] if e["kind"] == "parent"
    }


def test_an_early_retrieve_the_post_seed_plan_overrides_is_unused(tmp_path):
    pre = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"]}
    post = {"kbPluginOrder": ["kb-b"], "goalSolverOrder": ["gs-a"]}
    script = base_script(pre, post)
    # a barrier, not kb-a's head start of one planner call: the seed's solve on kb-b's view answers only
    # once the early solve on kb-a's view runs beside it (else the seed could settle the early views first)
    script["gs-a"]["solve"] |= {"track": True, "waitMax": 2}
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=ENABLED)
    result = h.ask("what is alpha?")
    assert result.status == "success" and result.kb_plugin == "kb-b"
    assert h.counter()["max"] == 2
    # the early retrieve by kb-a, and the solve that started on its view, are both unused
    event, solve = unused(result)
    assert event["pluginId"] == "kb-a" and event["label"].startswith("early retrieve by kb-a not used")
    assert solve["pluginId"] == "gs-a" and solve["label"].startswith("early solve by gs-a not used")
    assert plugin_calls(result, "retrieve") == ["kb-b"]
    assert plugin_calls(result, "solve") == ["gs-a"]  # the one on kb-b's view
    view = [n for n in nodes(result, kind="event") if n["label"].startswith("knowledge view 1")]
    assert view and "kb-b" in view[0]["label"]


def test_staged_units_reach_the_kb_plugin_before_any_retrieve(tmp_path):
    script = base_script({"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"]})
    script["sd-a"] = {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1]}}
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=ENABLED)
    result = h.ask("what is alpha?")
    assert result.status == "success" and unused(result) == []
    kb_a = [(c["op"], c.get("event")) for c in h.calls("kb-a")]
    assert kb_a == [
        ("onSessionEvent", "session-kus-added"),
        ("retrieve", None),
        ("onSessionEvent", "session-kus-committed"),
    ]
    # the kb notice and the post-seed plan ran side by side; both are in the trace under the branch
    branch = nodes(result, kind="branch")[0]["id"]
    children = {
        e["dst"] for e in result.execution_trace["edges"] if e["kind"] == "parent" and e["src"] == branch
    }
    ops = sorted(n["op"] for n in nodes(result, kind="plugin") if n["id"] in children)
    assert ops == ["buildPlan", "buildPlan", "detectSeeds", "onSessionEvent", "onSessionEvent"]  # kb-a, kb-b


def test_record_outcome_and_the_commit_notice_both_finish_before_the_turn_is_stored(tmp_path):
    script = base_script({"seedDetectorOrder": ["sd-a"]})
    script["sd-a"] = {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1]}}
    script["planner-a"]["recordOutcome"] = {"sleepMs": 150, "result": "learned"}
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            result = await run_turn(ctx, TurnRequest(message="what is alpha?"))
            return result, ctx.store.get_turn(result.request_id)
        finally:
            await ctx.aclose()

    result, stored = anyio.run(go)
    record = nodes(result, kind="plugin", op="recordOutcome")
    notice = [n for n in nodes(result, kind="plugin", op="onSessionEvent") if "committed" in n["label"]]
    assert [n["status"] for n in record + notice] == ["success"] * 3  # planner-a; kb-a and kb-b
    assert record[0]["output"]["result"] == "learned"
    stored_nodes = {n["id"]: n for n in stored.trace["nodes"]}
    assert stored_nodes[record[0]["id"]]["status"] == "success"
    assert all(stored_nodes[n["id"]]["status"] == "success" for n in notice)
    assert result.response_document["durationMs"] >= 150.0  # the document's time covers the outcome call


def test_a_solve_starts_on_the_early_view_while_the_planner_plans_and_is_used_once(tmp_path):
    plan = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
    script = base_script(plan)
    script["planner-a"]["buildPlan"][1] = {
        "when": {"phase": "post-seed"},
        "plan": plan,
        "waitMax": 2,  # the post-seed plan is made only once the early solve runs beside it
        "track": True,
    }
    script["gs-a"]["solve"] |= {"sleepMs": 50, "track": True}
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=ENABLED)
    result = h.ask("what is alpha?")
    assert result.status == "success" and "Alpha is a widget." in result.response_markdown
    assert unused(result) == []
    assert [c["plugin"] for c in h.calls(op="solve")] == ["gs-a"]  # called once
    assert h.counter()["max"] == 2  # the solve ran while the post-seed plan was still being made
    (solve,) = nodes(result, kind="plugin", op="solve")
    view = [n for n in nodes(result, kind="event") if n["label"].startswith("knowledge view 1")][0]
    parents = {(e["src"], e["dst"]) for e in result.execution_trace["edges"] if e["kind"] == "parent"}
    assert (view["id"], solve["id"]) in parents and solve["status"] == "success"


def test_an_early_solve_the_post_seed_plan_overrides_is_unused(tmp_path):
    pre = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
    post = {"kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-b"]}
    script = base_script(pre, post)
    script["gs-b"] = {"solve": {"answer": "Alpha is a gadget.", "sources": "evidence"}}
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=[*ENABLED, "gs-b"])
    result = h.ask("what is alpha?")
    assert result.status == "success" and result.goal_solver_plugin == "gs-b"
    assert "Alpha is a gadget." in result.response_markdown
    (event,) = unused(result)
    assert event["pluginId"] == "gs-a" and event["label"].startswith("early solve by gs-a not used")
    assert plugin_calls(result, "solve") == ["gs-b"]
    assert sorted(c["plugin"] for c in h.calls(op="solve")) == ["gs-a", "gs-b"]


def test_no_solve_starts_early_on_an_insufficient_view(tmp_path):
    plan = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
    script = base_script(plan, plan)
    script["kb-a"]["retrieve"] = {"select": "all", "sufficient": False}
    h = Harness(tmp_path, script, planners=("planner-a",), orders={"kb": ["kb-a"]}, enabled=ENABLED)
    result = h.ask("what is alpha?")
    assert unused(result) == []
    assert plugin_calls(result, "solve") == ["gs-a"]
    assert [c["plugin"] for c in h.calls(op="solve")] == ["gs-a"]


def test_an_early_seed_call_is_not_used_once_its_guidance_changed(tmp_path):
    """Two child frames run side by side: while the second one's planner plans, the first one stages a
    unit scoped to sd-plugins. The second frame's detectSeeds, reached after the plan, carries that
    guidance; the early call started before it was staged is a different request, so it is unused."""
    guide = unit("session::t::unit-g", "Answer in one sentence.", scopes=["sd-plugin"])
    plan = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
    script = {
        "planner-a": {
            "buildPlan": [
                {"when": {"phase": "pre-seed", "promptContains": "beta part"}, "plan": plan, "sleepMs": 400},
                {
                    "when": {"phase": "post-seed", "promptContains": "whole"},
                    "plan": {**plan, "decompose": True},
                },
                {"plan": plan},
            ],
            "recordOutcome": {},
        },
        "sd-a": {
            "detectSeeds": [
                {"when": {"mode": "turn"}, "intents": [intent("alpha part"), intent("beta part")]},
                {
                    "when": {"promptContains": "alpha part"},
                    "intents": [intent("alpha detail")],
                    "units": [guide],
                },
                {"intents": [intent("beta detail")]},
            ]
        },
        "sd-b": {
            "detectSeeds": {"intents": [intent("never asked")]}
        },  # a second sd: pre-seed plans are asked
        "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "gs-a": {"solve": {"answer": "answer to {prompt}", "sources": "evidence"}},
    }
    enabled = ["planner-a", "sd-a", "sd-b", "kb-a", "gs-a"]
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=enabled)
    result = h.ask("the whole question")
    assert result.status == "success"
    assert [f["input"]["depth"] for f in nodes(result, kind="frame")] == [0, 1, 1]
    beta = [c for c in h.calls("sd-a", "detectSeeds") if c["prompt"] == "beta part"]
    (node,) = [
        n for n in nodes(result, kind="plugin", op="detectSeeds") if n["input"]["prompt"] == "beta part"
    ]
    # the call the trace records carries the guidance staged meanwhile, and that request was sent
    assert node["input"]["context"] == 1
    assert beta[-1]["context"] == 1
    assert len(beta) == 2  # the early one (not used), then the one the stage logic made
    (early,) = [e for e in unused(result) if e["pluginId"] == "sd-a"]
    assert "differed" in early["label"]


def test_an_early_retrieve_that_answers_after_its_seed_ended_starts_no_solve(tmp_path):
    """The post-seed plan put kb-b first and the seed is answered before kb-a's early retrieve returns:
    nothing can use a solve on kb-a's view any more, so none is started (and waited for)."""
    pre = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
    post = {"kbPluginOrder": ["kb-b"], "goalSolverOrder": ["gs-b"]}
    script = base_script(pre, post)
    # kb-a's early retrieve answers only after the seed's own solve (gs-b on kb-b's view) has run
    script["kb-a"]["retrieve"] = {
        "select": "all",
        "waitCall": {"plugin": "gs-b", "op": "solve"},
        "sleepMs": 400,
    }
    script["gs-b"] = {"solve": {"answer": "Alpha is a gadget.", "sources": "evidence"}}
    h = Harness(tmp_path, script, planners=("planner-a",), enabled=[*ENABLED, "gs-b"])
    result = h.ask("what is alpha?")
    assert result.status == "success" and (result.kb_plugin, result.goal_solver_plugin) == ("kb-b", "gs-b")
    (event,) = unused(result)
    assert event["label"].startswith("early retrieve by kb-a not used")
    assert [c["plugin"] for c in h.calls(op="solve")] == ["gs-b"]  # the seed's; no gs-a on kb-a's view
