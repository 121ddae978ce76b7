"""Loading session context starts no kb-plugin: the `session-kus-committed` notice to a kb-plugin with
no running worker is held until right before the kernel's next call to it, and dropped if none comes."""

from __future__ import annotations

import anyio
from engine_support import Harness, intent, unit
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.knowledge.ingest import load_session_context

PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
SCRIPT = {
    "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
    "sd-a": {
        "detectSeeds": {"intents": [intent("what is alpha")]},
        "normalizePersistentContext": {"units": [unit("facts::chunk-000::unit-001", "Alpha is a widget.")]},
    },
    "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "kb-b": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
}
ENABLED = ["planner-a", "sd-a", "kb-a", "kb-b", "gs-a"]


def test_a_held_notice_reaches_only_the_plugin_the_turn_calls_and_comes_first(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            session = ctx.store.create_session()
            added = await load_session_context(ctx, session.id, "Alpha is a widget.", "facts.md", "sd-a")
            after_load = {p: ctx.supervisor.health()[p]["spawns"] for p in ("kb-a", "kb-b")}
            result = await run_turn(ctx, TurnRequest(message="what is alpha?", session_id=session.id))
            return added, after_load, result, ctx.supervisor.health()
        finally:
            await ctx.aclose()

    added, after_load, result, health = anyio.run(go)
    assert len(added) == 1 and after_load == {"kb-a": 0, "kb-b": 0}  # loading started no kb-plugin
    assert result.status == "success"
    kb_a = [(c["op"], c.get("event")) for c in h.calls("kb-a")]
    assert kb_a[0] == ("onSessionEvent", "session-kus-committed")  # held, then delivered first
    assert ("retrieve", None) in kb_a
    assert h.calls("kb-b") == [] and health["kb-b"]["spawns"] == 0  # never called: never started


def test_a_running_plugin_hears_of_loaded_context_at_once(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            await ctx.warm()
            session = ctx.store.create_session()
            await load_session_context(ctx, session.id, "Alpha is a widget.", "facts.md", "sd-a")
            return [c["plugin"] for c in h.calls(op="onSessionEvent")]
        finally:
            await ctx.aclose()

    assert sorted(anyio.run(go)) == ["kb-a", "kb-b"]
