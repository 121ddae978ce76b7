"""Engine frames, budgets, parallel seeds, staging, guidance and planner ranking (scripted subprocess plugins)."""

from __future__ import annotations

import anyio
from engine_support import Harness, calls_in_order, edges, intent, nodes, unit
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.protocol.envelope import Pins
from mrpvm.shells.trace_view import render_json, render_mermaid, render_tree_text, summary_line

U1 = unit("session::t::unit-000", "Alpha is a widget")
U2 = unit("session::t::unit-001", "Beta is a gadget")


def decomposing_script(**extra: dict) -> dict:
    """sd splits a BIG intent into two parts; gs asks for decomposition on BIG intents only."""
    return {
        "sd-a": {
            "detectSeeds": [
                {
                    "when": {"mode": "decompose"},
                    "intents": [intent("part one of it"), intent("part two of it")],
                    "units": [unit("session::t::unit-009", "a unit from the child frame")],
                },
                {"intents": [intent("BIG question")], "units": [U1]},
            ]
        },
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {
            "solve": [
                {"when": {"promptContains": "BIG"}, "status": "needs-decomposition"},
                {"answer": "answer to {prompt}", "sources": "evidence"},
            ]
        },
        **extra,
    }


def test_needs_decomposition_opens_a_child_frame_whose_answers_return(tmp_path):
    h = Harness(tmp_path, decomposing_script())
    result = h.ask("a BIG question")
    frames = nodes(result, kind="frame")
    assert [f["input"]["depth"] for f in frames] == [0, 1]
    child = frames[1]
    trigger = next(
        n for n in nodes(result, kind="plugin", op="solve") if n["status"] == "needs-decomposition"
    )
    assert (trigger["id"], child["id"]) in edges(result, "decomposes")
    decompose_calls = h.calls("sd-a", "detectSeeds")
    assert [c["mode"] for c in decompose_calls] == ["turn", "decompose"]
    assert (
        decompose_calls[1]["parentIntent"] == "BIG question"
        and decompose_calls[1]["prompt"] == "BIG question"
    )
    # the root frame's staged unit is visible to the child frame's retrieval
    child_retrieves = [
        c for c in h.calls("kb-a", "retrieve") if c["frameId"] != decompose_calls[0]["frameId"]
    ]
    assert child_retrieves and all(U1["id"] in c["units"] for c in child_retrieves)
    group = result.response_document["groups"][0]
    assert group["status"] == "success" and len(group["subgroups"]) == 2
    assert [g["intentRef"] for g in group["subgroups"]] == ["intent-1.1", "intent-1.2"]
    assert (
        "answer to part one of it" in group["answerMarkdown"]
        and "answer to part two of it" in group["answerMarkdown"]
    )
    assert result.goal_solver_plugin == "decomposition"


def test_max_depth_stops_runaway_recursion(tmp_path):
    script = {
        # every decomposition yields one new, deeper intent that again needs decomposing
        "sd-a": {"detectSeeds": {"intents": [intent("BIG again: {prompt}")]}},
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"status": "needs-decomposition"}},
    }
    result = Harness(tmp_path, script, budget={"maxFrameDepth": 2}).ask("BIG")
    depths = [f["input"]["depth"] for f in nodes(result, kind="frame")]
    assert max(depths) == 2 and sorted(set(depths)) == [0, 1, 2]
    assert all(f["input"]["maxDepth"] == 2 for f in nodes(result, kind="frame"))
    limit = [n for n in nodes(result, kind="event") if n["status"] == "depth-limit"]
    assert limit and "exceeds maxDepth 2" in limit[0]["label"]
    assert result.status == "failed"
    assert any("maxDepth 2" in w for w in result.response_document["groups"][0]["warnings"])


def test_a_child_frame_that_would_re_ask_the_parent_question_stops_and_the_parent_answers(tmp_path):
    script = {
        "sd-a": {"detectSeeds": {"intents": [intent("BIG question")]}},  # no split in decompose mode
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"status": "needs-decomposition"}},
        "gs-b": {"solve": {"answer": "answered directly", "sources": "evidence"}},
    }
    h = Harness(tmp_path, script)
    result = h.ask("a BIG question")
    assert [c["mode"] for c in h.calls("sd-a", "detectSeeds")] == ["turn", "decompose"]
    child = nodes(result, kind="frame")[1]
    # the child frame retrieved and solved nothing: it would only have asked the same question again
    assert all(c["frameId"] != child["frameId"] for c in h.calls("kb-a", "retrieve") if "frameId" in c)
    stop = [n for n in nodes(result, kind="event") if "did not split the intent" in n["label"]]
    assert stop and stop[0]["frameId"] == child["frameId"]
    assert calls_in_order(result, "solve") == [("gs-a", "needs-decomposition"), ("gs-b", "success")]
    assert result.response_document["groups"][0]["answerMarkdown"] == "answered directly"


def test_plan_decompose_opens_the_child_frame_first(tmp_path):
    plan = {"buildPlan": [{"when": {"phase": "post-seed"}, "plan": {"decompose": True}}]}
    script = decomposing_script(**{"planner-a": plan})
    script["gs-a"] = {"solve": {"answer": "answer to {prompt}", "sources": "evidence"}}
    result = Harness(tmp_path, script, planners=("planner-a",), budget={"maxFrameDepth": 1}).ask(
        "a BIG question"
    )
    root_seed = nodes(result, kind="seed")[0]
    child = nodes(result, kind="frame")[1]
    assert (root_seed["id"], child["id"]) in edges(result, "decomposes")
    # no solve ran on the BIG intent itself: the plan's decomposition answered it
    assert all(n["input"]["prompt"] != "BIG question" for n in nodes(result, kind="plugin", op="solve"))
    assert result.response_document["groups"][0]["status"] == "success"


def test_skipped_budget_and_llm_calls_charged(tmp_path):
    script = {
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1], "llmCalls": 1}},
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-llm": {"solve": {"answer": "never"}},
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
    }
    h = Harness(tmp_path, script, orders={"gs": ["gs-llm", "gs-a"]})
    h.environ["MRPVM_LLM_BASE_URL"] = "http://127.0.0.1:9/v1"  # configured (never reached): gs-llm is planned
    result = h.ask("what is alpha?", max_llm_calls=3)  # sd spends 1: gs-llm (maxLLMCalls 3) no longer fits
    assert calls_in_order(result, "solve") == [("gs-llm", "skipped-budget"), ("gs-a", "success")]
    skipped = nodes(result, kind="plugin", pluginId="gs-llm")[0]
    assert "exceeds the 2 LLM calls left" in skipped["output"]["reason"]
    assert h.calls("gs-llm") == []  # never started
    assert result.llm_calls == 1
    assert h.calls("gs-a", "solve")[0]["budget"]["llmCalls"] == 2


def test_parallel_seeds_never_exceed_max_parallel_seeds(tmp_path):
    many = [intent(f"question number {i}") for i in range(6)]
    script = {
        "sd-a": {"detectSeeds": {"intents": many, "units": [U1]}},
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"answer": "ok", "sources": "evidence", "sleepMs": 150, "track": True}},
    }
    h = Harness(tmp_path, script, budget={"maxParallelSeeds": 2})
    result = h.ask("six questions")
    counter = h.counter()
    assert counter["total"] == 6 and counter["active"] == 0
    assert counter["max"] <= 2
    assert [g["status"] for g in result.response_document["groups"]] == ["success"] * 6


def test_one_seed_slot_does_not_deadlock_decomposition(tmp_path):
    script = decomposing_script()
    script["sd-a"]["detectSeeds"][1] = {"intents": [intent("BIG one"), intent("BIG two")], "units": [U1]}
    h = Harness(tmp_path, script, budget={"maxParallelSeeds": 1})

    async def go():
        ctx = await h.open()
        try:
            with anyio.fail_after(60):
                return await run_turn(ctx, TurnRequest(message="two BIG questions"))
        finally:
            await ctx.aclose()

    result = anyio.run(go)
    groups = result.response_document["groups"]
    assert [g["status"] for g in groups] == ["success", "success"]
    assert all(len(g["subgroups"]) == 2 for g in groups)


def test_staged_units_are_committed_on_success(tmp_path):
    script = {
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1, U2]}},
        "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": ["session::t::unit-000"]}},
    }
    h = Harness(tmp_path, script)

    async def go():
        ctx = await h.open()
        try:
            session = ctx.store.create_session()
            assert ctx.store.session_units(session.id) == []
            result = await run_turn(ctx, TurnRequest(message="what is alpha?", session_id=session.id))
            return (
                result,
                ctx.store.session_units(session.id),
                ctx.store.get_turn(result.request_id),
                ctx.store.get_session(session.id),
            )
        finally:
            await ctx.aclose()

    result, units, turn, session = anyio.run(go)
    assert [u.id for u in units] == [U1["id"], U2["id"]]
    events = [(c["event"], c["scope"], c["units"]) for c in h.calls("kb-a", "onSessionEvent")]
    ids = [U1["id"], U2["id"]]
    assert events == [("session-kus-added", "current-turn", ids), ("session-kus-committed", "session", ids)]
    assert h.calls("kb-a", "retrieve")[0]["units"] == ids  # staged units travel inline during the turn
    assert turn.status == "success" and turn.trace["requestId"] == result.request_id
    assert len(turn.trace["nodes"]) == len(result.execution_trace["nodes"])
    assert turn.responseDocument["groups"][0]["answerMarkdown"] == "Alpha is a widget."
    assert session.preferences == Pins()  # serving a turn does not make its plugins sticky
    assert session.turnCount == 1


def test_staged_units_are_discarded_on_failure(tmp_path):
    script = {
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1]}},
        "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "gs-a": {"solve": {"fail": {"code": "BOOM"}}},
    }
    h = Harness(tmp_path, script)

    async def go():
        ctx = await h.open()
        try:
            result = await run_turn(ctx, TurnRequest(message="what is alpha?"))
            return result, ctx.store.session_units(result.session_id), ctx.store.get_turn(result.request_id)
        finally:
            await ctx.aclose()

    result, units, turn = anyio.run(go)
    assert result.status == "failed" and units == []
    assert [c["event"] for c in h.calls("kb-a", "onSessionEvent")] == [
        "session-kus-added",
        "session-kus-discarded",
    ]
    assert turn.status == "failed"  # the failed turn stays explainable, without its units


def test_phase_scoped_guidance_reaches_each_phase_even_when_kb_drops_it(tmp_path):
    g_gs = unit("session::t::unit-010", "prefer short answers", scopes=["gs-plugin"], role="Constraint")
    g_plan = unit("session::t::unit-011", "use kb-a first", scopes=["mrp-plan-plugin"], role="Constraint")
    g_val = unit(
        "session::t::unit-012", "reject answers without sources", scopes=["val-plugin"], role="Constraint"
    )
    script = {
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1, g_gs, g_plan, g_val]}},
        "planner-a": {"buildPlan": {"plan": {}}},
        "kb-a": {"retrieve": {"select": 1}},  # keeps only U1: the guidance units are dropped
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
        "val-a": {"validate": {"status": "accepted"}},
    }
    h = Harness(tmp_path, script)
    h.ask("what is alpha?")
    solve = h.calls("gs-a", "solve")[0]
    assert solve["evidence"] == [U1["id"]] and solve["guidance"] == [g_gs["id"]]
    post = [c for c in h.calls("planner-a", "buildPlan") if c["phase"] == "post-seed"][0]
    assert post["guidance"] == [g_plan["id"]]
    assert h.calls("val-a", "validate")[0]["guidance"] == [g_val["id"]]


def test_planner_ranking_pins_orders_and_ewma(tmp_path):
    script = {
        "planner-b": {"buildPlan": [{"when": {"phase": "post-seed"}, "plan": {"kbPluginOrder": ["kb-b"]}}]},
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1]}},
        "kb-a": {"retrieve": {"select": "all"}},
        "kb-b": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"answer": "from gs-a", "sources": "evidence"}},
        "gs-b": {"solve": {"answer": "from gs-b", "sources": "evidence"}},
    }
    h = Harness(tmp_path, script)

    async def go():
        ctx = await h.open()
        try:
            pinned = await run_turn(ctx, TurnRequest(message="q", pins=Pins(planner="planner-b", gs="gs-b")))
            for _ in range(3):
                ctx.store.record_planner_outcome("planner-a", False, 5.0)
            learned = await run_turn(ctx, TurnRequest(message="q"))
            return pinned, learned
        finally:
            await ctx.aclose()

    pinned, learned = anyio.run(go)
    assert [b["pluginId"] for b in nodes(pinned, kind="branch")] == ["planner-b"]
    assert calls_in_order(pinned, "retrieve") == [("kb-b", "success")]  # the plan's order
    assert calls_in_order(pinned, "solve") == [("gs-b", "success")]  # the pin collapses the stage
    assert nodes(learned, kind="branch")[0]["pluginId"] == "planner-b"  # EWMA: planner-a keeps failing


def test_session_preferences_only_break_ties_never_beat_pins_and_are_not_rewritten(tmp_path):
    script = {
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")], "units": [U1]}},
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": {"answer": "from gs-a", "sources": "evidence"}},
        "gs-b": {"solve": {"answer": "from gs-b", "sources": "evidence"}},
    }
    h = Harness(tmp_path, script)
    chosen = Pins(planner="planner-b", gs="gs-a")

    async def go():
        ctx = await h.open()
        try:
            session = ctx.store.create_session(preferences=chosen)
            tie = await run_turn(ctx, TurnRequest(message="q", session_id=session.id))
            pinned = await run_turn(
                ctx, TurnRequest(message="q", session_id=session.id, pins=Pins(gs="gs-b"))
            )
            for _ in range(3):
                ctx.store.record_planner_outcome("planner-b", False, 5.0)
            ranked = await run_turn(ctx, TurnRequest(message="q", session_id=session.id))
            return tie, pinned, ranked, ctx.store.get_session(session.id)
        finally:
            await ctx.aclose()

    tie, pinned, ranked, session = anyio.run(go)
    # equal planner records: the session's preferred planner leads
    assert nodes(tie, kind="branch")[0]["pluginId"] == "planner-b"
    assert calls_in_order(tie, "solve")[0] == ("gs-a", "success")
    assert calls_in_order(pinned, "solve") == [("gs-b", "success")]  # the pin wins over the preference
    # once the preferred planner keeps failing, the ranking decides, not the preference
    assert nodes(ranked, kind="branch")[0]["pluginId"] == "planner-a"
    assert session.preferences == chosen and session.turnCount == 3  # turns never rewrite preferences


def test_unknown_pin_is_a_structured_error(tmp_path):
    import pytest
    from mrpvm.kernel.errors import UnknownPluginError

    with pytest.raises(UnknownPluginError) as info:
        Harness(tmp_path, {}).ask("q", pins=Pins(gs="kb-a"))
    assert info.value.code == "UNKNOWN_PLUGIN" and "gs-plugin" in info.value.message


def test_trace_renderers(tmp_path):
    result = Harness(tmp_path, decomposing_script()).ask("a BIG question")
    trace = result.execution_trace
    text = render_tree_text(trace)
    assert f"turn {result.request_id}" in text and "child frame (depth 1)" in text and "decomposes →" in text
    mermaid = render_mermaid(trace)
    assert mermaid.startswith("flowchart TD")
    assert mermaid.count("-->") + mermaid.count("-.->") == len(trace["edges"])
    import json

    assert json.loads(render_json(trace)) == trace
    ids = {n["id"] for n in trace["nodes"]}
    assert all(e["src"] in ids and e["dst"] in ids for e in trace["edges"])
    assert "2 frames (max depth 1)" in summary_line(trace)
