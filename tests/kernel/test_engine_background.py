"""recordOutcome left running after the answer (`run_turn(..., defer_outcome=True)`, the daemon's mode).

The turn answers and commits without waiting for it; its trace node is stored `pending` and replaced by
the finished node when it ends; a later turn waits for it before calling that planner; closing the
kernel context waits for it, so nothing a turn started is lost.
"""

from __future__ import annotations

import anyio
from engine_support import Harness, intent, nodes
from llm_engine_support import LLM_MARK, QUESTION, FakeModel, LLMHarness, role_model, upstream_models
from llm_server import ScriptedLLM
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.kernel.store import Store

ENABLED = ["planner-a", "sd-a", "kb-a", "gs-a"]
PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}


def script(record_outcome: dict, *, track_plans: bool = False) -> dict:
    plan_rule = {"plan": PLAN, "track": True} if track_plans else {"plan": PLAN}
    return {
        "planner-a": {"buildPlan": plan_rule, "recordOutcome": record_outcome},
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")]}},
        "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
    }


def stored_turn(h: Harness, request_id: str):
    store = Store.open(h.home)
    try:
        return store.get_turn(request_id)
    finally:
        store.close()


def test_the_answer_does_not_wait_and_shutdown_stores_the_finished_node(tmp_path):
    h = Harness(
        tmp_path,
        script({"sleepMs": 300, "result": "learned"}),
        planners=("planner-a",),
        enabled=ENABLED,
    )

    async def go():
        ctx = await h.open()
        try:
            result = await run_turn(ctx, TurnRequest(message="what is alpha?"), defer_outcome=True)
            # nothing has yielded to the event loop since: the background job cannot have ended
            at_answer = ctx.store.get_turn(result.request_id)
            pending = len(ctx.background)
        finally:
            await ctx.aclose()  # drains the background job
        return result, at_answer, pending

    result, at_answer, pending = anyio.run(go)
    assert result.status == "success" and "Alpha is a widget." in result.response_markdown
    (record,) = nodes(result, kind="plugin", op="recordOutcome")
    assert record["status"] == "pending" and pending == 1
    assert {n["id"]: n["status"] for n in at_answer.trace["nodes"]}[record["id"]] == "pending"
    later = stored_turn(h, result.request_id)
    finished = {n["id"]: n for n in later.trace["nodes"]}
    assert finished[record["id"]]["status"] == "success"
    assert finished[record["id"]]["output"]["result"] == "learned"
    assert finished[record["id"]]["durationMs"] > 0
    # the same nodes and edges as the answer's trace; only the pending node changed
    assert [n["id"] for n in later.trace["nodes"]] == [n["id"] for n in result.execution_trace["nodes"]]
    assert later.trace["edges"] == result.execution_trace["edges"]
    assert later.responseMarkdown == result.response_markdown
    # one sd-plugin: no pre-seed plan to ask for (frame_run.plans_seeds)
    assert [c["op"] for c in h.calls("planner-a")] == ["buildPlan", "recordOutcome"]


def test_the_next_turn_plans_only_after_the_pending_outcome_ended(tmp_path):
    h = Harness(
        tmp_path,
        script({"sleepMs": 200, "track": True}, track_plans=True),
        planners=("planner-a",),
        enabled=ENABLED,
    )

    async def go():
        ctx = await h.open()
        try:
            first = await run_turn(ctx, TurnRequest(message="what is alpha?"), defer_outcome=True)
            second = await run_turn(
                ctx, TurnRequest(message="what is alpha?", session_id=first.session_id), defer_outcome=True
            )
            return first, second
        finally:
            await ctx.aclose()

    first, second = anyio.run(go)
    assert first.status == second.status == "success"
    # planner-a has 4 workers: only the wait keeps the second turn's plans off the first's outcome
    assert h.counter() == {"active": 0, "max": 1, "total": 4}
    ops = [c["op"] for c in h.calls("planner-a")]
    assert ops == ["buildPlan", "recordOutcome"] * 2


def test_a_deferred_outcome_sends_no_progress_events_and_its_failure_is_stored(tmp_path):
    h = Harness(
        tmp_path,
        script({"sleepMs": 50, "fail": {"code": "OUTCOME_DOWN", "message": "cannot learn"}}),
        planners=("planner-a",),
        enabled=ENABLED,
    )
    events: list[dict] = []

    async def go():
        ctx = await h.open()
        try:
            return await run_turn(
                ctx, TurnRequest(message="what is alpha?"), on_event=events.append, defer_outcome=True
            )
        finally:
            await ctx.aclose()

    result = anyio.run(go)
    assert result.status == "success"
    (record,) = nodes(result, kind="plugin", op="recordOutcome")
    started = [e["node"] for e in events if e["event"] == "plugin-start"]
    ended = [e["node"] for e in events if e["event"] == "plugin-end"]
    assert record["id"] not in started + ended
    assert sorted(started) == sorted(ended) and len(started) == 4  # plan, seeds, retrieve, solve
    stored = {n["id"]: n for n in stored_turn(h, result.request_id).trace["nodes"]}
    assert stored[record["id"]]["status"] == "error"
    assert stored[record["id"]]["output"]["code"] == "OUTCOME_DOWN"


def test_a_session_deleted_while_its_outcome_runs_is_no_error(tmp_path, caplog):
    h = Harness(tmp_path, script({"sleepMs": 200}), planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            result = await run_turn(ctx, TurnRequest(message="what is alpha?"), defer_outcome=True)
            ctx.store.delete_session(result.session_id)  # its turns go with it
            await ctx.background.drain()
            return result, len(ctx.background)
        finally:
            await ctx.aclose()

    with caplog.at_level("ERROR", logger="mrpvm.kernel"):
        result, left = anyio.run(go)
    assert result.status == "success" and left == 0
    assert [c["op"] for c in h.calls("planner-a")][-1] == "recordOutcome"
    assert not [r for r in caplog.records if r.name == "mrpvm.kernel"]


def test_a_deferred_outcome_keeps_its_llm_access_until_it_ends(tmp_path):
    """The turn's LLM tokens die when the turn is over, but a recordOutcome left running is part of it:
    a planner that asks the model while recording its outcome still gets its call (and its `llm` node)."""
    with ScriptedLLM() as llm:
        llm.responder = FakeModel()
        h = LLMHarness(
            tmp_path,
            enabled=["sd-symbolic", "kb-fast", "gs-symbolic"],
            orders={"sd": ["sd-symbolic"], "kb": ["kb-fast"], "gs": ["gs-symbolic"], "val": []},
            planners=["llm-planner"],
            upstream=llm,
            wrappers=["llm-planner"],
        )

        async def go():
            ctx, kb_id = await h.open()
            try:
                result = await run_turn(ctx, TurnRequest(message=QUESTION, kb=kb_id), defer_outcome=True)
                await ctx.background.drain()
                ledger = ctx.llm.tokens.ledger(result.request_id)
                return result, ctx.store.get_turn(result.request_id), ledger, ctx.llm.tokens.live_tokens()
            finally:
                await ctx.aclose()

        result, stored, ledger, live = anyio.run(go)
        models = upstream_models(llm)
    assert result.status == "success" and result.planner_plugin == "llm-planner"
    (pending,) = nodes(result, kind="plugin", op="recordOutcome")
    assert pending["status"] == "pending"
    by_id = {n["id"]: n for n in stored.trace["nodes"]}
    record = by_id[pending["id"]]
    assert record["status"] == "success", record["output"]
    assert LLM_MARK in record["output"]["result"]
    parents = {e["dst"]: e["src"] for e in stored.trace["edges"] if e["kind"] == "parent"}
    assert [n["kind"] for n in stored.trace["nodes"] if parents.get(n["id"]) == record["id"]] == ["llm"]
    assert models == [role_model("goal-fast")]
    assert ledger is None and live == 0  # expired once the outcome ended


def _observation(plugin: str, index: int = 1) -> dict:
    return {"index": index, "plugin": plugin, "success": 1.0, "latencyMs": 5.0}


def test_a_deferred_outcome_ending_after_the_commit_stores_its_fold_and_trace(tmp_path):
    """The last call to end after the commit folds its observations and stores the turn's trace again
    (one store transaction); a set naming a plugin the outcome did not call is refused, trace still stored."""
    good = {"sleepMs": 150, "observations": [_observation("kb-a"), _observation("gs-a", 2)]}
    stranger = {"sleepMs": 150, "observations": [_observation("kb-elsewhere")]}
    rules = script([{"when": {"promptContains": "alpha"}, **good}, stranger])
    h = Harness(tmp_path, rules, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            ask = [
                run_turn(ctx, TurnRequest(message=f"what is {w}?"), defer_outcome=True)
                for w in ("alpha", "beta")
            ]
            first, second = await ask[0], await ask[1]
            await ctx.background.drain()
            return first, second, ctx.store.learned("planner-a", None)
        finally:
            await ctx.aclose()

    first, second, learned = anyio.run(go)
    assert sorted(s.pluginId for s in learned) == ["gs-a", "kb-a"]
    (record,) = nodes(first, kind="plugin", op="recordOutcome")
    stored = {n["id"]: n for n in stored_turn(h, first.request_id).trace["nodes"]}[record["id"]]
    assert stored["status"] == "success" and stored["output"]["observationsStored"] == 2
    (record,) = nodes(second, kind="plugin", op="recordOutcome")
    stored = {n["id"]: n for n in stored_turn(h, second.request_id).trace["nodes"]}[record["id"]]
    assert stored["status"] == "success" and "kb-elsewhere" in stored["output"]["observationsRejected"]
    assert "observationsStored" not in stored["output"]
