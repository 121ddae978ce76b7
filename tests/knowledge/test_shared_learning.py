"""Every node learns from every node's outcomes (issue 23), on both backends: a turn on node A leaves its
planner's observations in the shared store; node B's planner is handed them in `buildPlan` and ranks by
them; a legacy utility.json in a home is imported when a kernel opens there.

PostgreSQL: two homes (two machines) sharing one database; SQLite: two node ids on one home."""

from __future__ import annotations

import os

import anyio
import msgspec
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.kernel.planner_import import IMPORTED_SUFFIX, LEGACY_FILE
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from test_ingest_acks import ENABLED, FACT, QUESTION, TEXT

PLANNER = "planner-default"


def node(home, store_env: dict[str, str], node_id: str, work):
    async def main():
        env = dict(os.environ, MRPVM_HOME=str(home), MRPVM_ENABLED_PLUGINS=ENABLED, MRPVM_NODE_ID=node_id)
        ctx = await open_context(env | store_env)
        try:
            return await work(ctx)
        finally:
            await ctx.aclose()  # waits for the turn's recordOutcome

    return anyio.run(main)


def outcome_nodes(result) -> list[dict]:
    return [n for n in result.execution_trace["nodes"] if n.get("op") == "recordOutcome"]


def test_a_turn_on_one_node_teaches_the_planner_on_another(tmp_path, store_env):
    home_a, home_b = tmp_path / "a", tmp_path / ("b" if store_env else "a")
    legacy = home_a / "artifacts" / "_session" / PLANNER / LEGACY_FILE
    legacy.parent.mkdir(parents=True)
    stat = {"successRate": 0.2, "latencyMs": 50.0, "llmCalls": 0.0, "sufficiency": 0.3, "samples": 9}
    legacy.write_bytes(msgspec.json.encode({"plugins": {"kb-balanced": {"overall": stat}}}))

    async def on_a(ctx):
        # the kernel opening imported the file learned on this machine before the store kept records
        imported = {(s.pluginId, s.task): s.samples for s in ctx.store.learned(PLANNER, None)}
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "relay.md", TEXT)
        result = await run_turn(ctx, TurnRequest(message=QUESTION, kb=kb.id))
        return imported, kb.id, result

    imported, kb_id, first = node(home_a, store_env, "node-a", on_a)
    assert imported == {("kb-balanced", ""): 9}
    assert not legacy.exists() and legacy.with_name(LEGACY_FILE + IMPORTED_SUFFIX).exists()
    assert FACT in first.response_markdown
    (recorded,) = outcome_nodes(first)
    assert recorded["status"] == "success"

    async def on_b(ctx):
        learned = ctx.store.learned(PLANNER, kb_id)
        result = await run_turn(ctx, TurnRequest(message=QUESTION, kb=kb_id))
        return learned, result, ctx.store.learned(PLANNER, kb_id)

    learned, second, after = node(home_b, store_env, "node-b", on_b)
    samples = {(s.pluginId, s.task): s.samples for s in learned}
    used = [key for key in samples if key[0] in (first.kb_plugin, first.goal_solver_plugin)]
    assert used and all(samples[key] >= 1 for key in used)  # node a's outcome, seen by node b
    plan_notes = " ".join(
        str(n.get("output", {})) for n in second.execution_trace["nodes"] if n.get("op") == "buildPlan"
    )
    assert "utility" in plan_notes  # node b's planner ranked with the records it was handed
    grown = {(s.pluginId, s.task): s.samples for s in after}
    assert all(grown[key] > samples[key] for key in used)  # and node b's outcome added to them
