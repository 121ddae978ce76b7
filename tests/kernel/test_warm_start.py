"""A one-turn process (a cold `mrpvm ask`) starts the workers its turn is expected to call before its first
call (kernel/engine/warm_start.py): the planner, sd- and gs-plugin of the home's last turn (else the
configured first ones), the kb-plugin only from that history or a pin; plugins the turn would not plan
never. The plan still decides every call, and the session notices of its source wait for each plugin's
next call instead of for a worker still starting."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest
from engine_support import ENGINE_PLUGINS, Harness, intent, unit
from mrpvm.kernel.engine import TurnRequest, prestart_turn, run_turn
from mrpvm.kernel.engine.warm_start import expected_plugins
from mrpvm.kernel.errors import StoreError, UnknownPluginError
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import load_session_context
from mrpvm.protocol.envelope import Pins

PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-b"], "goalSolverOrder": ["gs-a"]}
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
ENABLED = ["planner-a", "planner-b", "sd-a", "sd-b", "kb-a", "kb-b", "gs-a", "gs-b", "gs-llm"]


def test_the_guess_follows_pins_then_the_last_turn_then_the_configured_order(tmp_path):
    h = Harness(tmp_path, SCRIPT, enabled=ENABLED, orders={"gs": ["gs-llm", "gs-a", "gs-b"]})

    async def go():
        ctx = await h.open()
        try:
            return (
                expected_plugins(ctx, Pins(), {}),
                expected_plugins(ctx, Pins(), {"planner": "planner-b", "kb": "kb-b", "gs": "gs-b"}),
                expected_plugins(ctx, Pins(kb="kb-a", sd="sd-b"), {"kb": "kb-b"}),
                expected_plugins(ctx, Pins(), {"kb": "kb-c", "gs": "gs-llm", "sd": "no-such-plugin"}),
            )
        finally:
            await ctx.aclose()

    fresh, history, pinned, unusable = anyio.run(go)
    # no LLM endpoint: gs-llm, first in the configured order, is never planned, so never guessed
    assert fresh == ["sd-a", "planner-a", "gs-a"]  # no history: no kb-plugin is guessed
    assert history == ["sd-a", "planner-b", "kb-b", "gs-b"]
    assert pinned == ["sd-b", "planner-a", "kb-a", "gs-a"]
    assert unusable == ["sd-a", "planner-a", "gs-a"]  # kb-c is not enabled; gs-llm would not be planned


def test_a_cold_turn_starts_its_workers_first_and_its_calls_use_them(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def one_ask(question: str):
        ctx = await h.open()
        try:
            started = prestart_turn(ctx, Pins())  # before any call: the supervisor binds to this loop
            spawned = {p: ctx.supervisor.health()[p]["spawns"] for p in started}
            session = ctx.store.create_session()
            await load_session_context(
                ctx, session.id, "Alpha is a widget.", "facts.md", "sd-a", defer_notices=True
            )
            notices_at_load = h.calls(op="onSessionEvent")
            result = await run_turn(ctx, TurnRequest(message=question, session_id=session.id))
            return started, spawned, notices_at_load, result, ctx.supervisor.health()
        finally:
            await ctx.aclose()

    started, spawned, _, result, _ = anyio.run(one_ask, "what is alpha?")
    assert started == ["sd-a", "planner-a", "gs-a"] and set(spawned.values()) == {1}
    assert result.status == "success" and result.kb_plugin == "kb-b"

    h.log_path.unlink()
    started, _, notices_at_load, result, health = anyio.run(one_ask, "what is alpha again?")
    assert started == ["sd-a", "planner-a", "kb-b", "gs-a"]  # the last turn's kb-plugin, started first
    assert notices_at_load == []  # kb-b runs, yet its notice waited for its next call
    kb_b = [(c["op"], c.get("event")) for c in h.calls("kb-b")]
    assert kb_b[0] == ("onSessionEvent", "session-kus-committed") and ("retrieve", None) in kb_b
    assert result.status == "success"
    assert all(health[p]["spawns"] == 1 for p in started)  # every call used the worker started first
    assert health["kb-a"]["spawns"] == 0


def test_a_pin_naming_no_plugin_of_its_stage_fails_before_any_worker_starts(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            with pytest.raises(UnknownPluginError, match="no kb-plugin 'gs-a' to pin for kb"):
                prestart_turn(ctx, Pins(kb="gs-a"))
            return ctx.supervisor.pids()
        finally:
            await ctx.aclose()

    assert anyio.run(go) == []


def test_the_opened_hook_starts_workers_before_the_context_is_returned_and_a_failing_hook_closes_it(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)
    seen: dict[str, object] = {}

    def hook(ctx):
        seen["store_open"] = ctx.store is not None
        seen["started"] = prestart_turn(ctx, Pins())

    async def go():
        ctx = await open_context(h.environ, manifests_dir=ENGINE_PLUGINS, extra_env=h.extra_env, opened=hook)
        try:
            return {p: ctx.supervisor.health()[p]["spawns"] for p in ("planner-a", "sd-a", "gs-a", "kb-a")}
        finally:
            await ctx.aclose()

    spawns = anyio.run(go)
    assert seen == {"store_open": True, "started": ["sd-a", "planner-a", "gs-a"]}
    assert spawns == {"planner-a": 1, "sd-a": 1, "gs-a": 1, "kb-a": 0}

    closed: list[object] = []

    def bad_pin(ctx):
        closed.append(ctx)
        prestart_turn(ctx, Pins(kb="gs-a"))

    async def failing():
        with pytest.raises(UnknownPluginError):
            await open_context(h.environ, manifests_dir=ENGINE_PLUGINS, extra_env=h.extra_env, opened=bad_pin)
        ctx = closed[0]
        with pytest.raises(StoreError, match="is closed"):  # the store was closed with the context
            ctx.store.create_session()
        return ctx.supervisor.pids()

    assert anyio.run(failing) == []


def test_the_warm_start_module_loads_without_the_turns_modules():
    code = (
        "import sys\n"
        "import mrpvm.kernel.engine.warm_start\n"
        "print('mrpvm.kernel.engine.turn' in sys.modules)\n"
        "from mrpvm.kernel.engine import run_turn, TurnRequest\n"
        "print('mrpvm.kernel.engine.turn' in sys.modules, run_turn.__module__, TurnRequest.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split("\n")[:2] == ["False", "True mrpvm.kernel.engine.turn TurnRequest"]


def test_a_one_turn_process_records_its_workers_and_the_next_one_adopts_those_launched_first(tmp_path):
    from mrpvm.kernel.supervisor import early_launch

    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def one_ask(question: str):
        ctx = await h.open()
        try:
            launched = early_launch.launch(ctx.home, early_launch.key_of(None, None, None, None))
            pids = early_launch.launched()
            started = prestart_turn(ctx, Pins())
            adopted = {p: pid for p, pid in pids.items() if pid in ctx.supervisor.pids()}
            left = early_launch.launched()
            session = ctx.store.create_session()
            await load_session_context(ctx, session.id, "Alpha is a widget.", "facts.md", "sd-a")
            result = await run_turn(ctx, TurnRequest(message=question, session_id=session.id))
            return launched, started, adopted, left, result, ctx.supervisor.health()
        finally:
            await ctx.aclose()

    launched, started, _, _, result, _ = anyio.run(one_ask, "what is alpha?")
    assert launched == [] and result.status == "success"  # nothing recorded yet
    assert set(early_launch.recorded(h.home)["workers"]) == set(started)
    anyio.run(one_ask, "what is alpha?")  # records the kb-plugin of the last turn too
    launched, started, adopted, left, result, health = anyio.run(one_ask, "what is alpha again?")
    assert launched == started == ["sd-a", "planner-a", "kb-b", "gs-a"]
    assert set(adopted) == set(started) and left == {}  # every launched process became the turn's worker
    assert result.status == "success" and all(health[p]["spawns"] == 1 for p in started)
