"""A daemon's warm pools bind a KB's artifacts folders before the first turn on it calls anything: a plugin first
called on that KB later (a second planner once the lead moves to it) finds its workers ready, not retired."""

from __future__ import annotations

import anyio
from engine_support import Harness, intent
from mrpvm.kernel.engine import TurnRequest, run_turn

PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
SCRIPT = {
    "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
    "planner-b": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
    "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")]}},
    "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
}
ENABLED = ["planner-a", "planner-b", "sd-a", "kb-a", "gs-a"]


def turns_on_a_kb(tmp_path, *, daemon: bool) -> tuple[list[tuple[str, str | None]], dict[str, str]]:
    """Two turns on a new KB; the supervisor's `warm` calls that named a folder, and each plugin's folder."""
    h = Harness(tmp_path, SCRIPT, planners=("planner-a", "planner-b"), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        asked: list[tuple[str, str | None]] = []
        warm = ctx.supervisor.warm

        async def recording(plugin_id, workers=None, artifacts=None):
            if artifacts is not None:
                asked.append((plugin_id, artifacts))
            return await warm(plugin_id, workers, artifacts)

        ctx.supervisor.warm = recording  # type: ignore[method-assign]
        try:
            if daemon:
                await ctx.warm()
            kb = ctx.store.create_kb("docs")
            for _ in range(2):
                result = await run_turn(ctx, TurnRequest(message="what is alpha?", kb=kb.id))
                assert result.status == "success"
            return asked, {p: str(ctx.artifacts_dir(kb.id, p)) for p in ENABLED}
        finally:
            await ctx.aclose()

    return anyio.run(go)


def test_a_daemon_binds_a_kbs_folders_into_every_warm_pool_once_at_its_first_turn(tmp_path):
    asked, folders = turns_on_a_kb(tmp_path, daemon=True)
    assert sorted(asked) == sorted(folders.items())  # planner-b too, which neither turn called


def test_a_process_that_did_not_warm_its_pools_starts_nothing_for_a_kb(tmp_path):
    asked, _ = turns_on_a_kb(tmp_path, daemon=False)  # a one-turn `mrpvm ask` starts only what it calls
    assert asked == []
