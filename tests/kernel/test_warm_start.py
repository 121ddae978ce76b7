"""A one-turn process (a cold `mrpvm ask`) starts the workers its turn is expected to call before its first
call (kernel/engine/warm_start.py): the planner the turn will lead with, the sd- and gs-plugin of the latest
turn it led (else the configured first ones), the kb-plugin likewise (a home's first ask: the configured first);
plugins the turn would not plan never. The plan still decides every call, and the session notices of its source wait for each plugin's
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


def test_the_guess_follows_pins_then_the_ranking_and_last_turn_then_the_configured_order(tmp_path):
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
    assert fresh == ["sd-a", "planner-a", "kb-a", "gs-a"]  # no history: the configured first kb-plugin
    # the planner is the one the turn will lead with (no records: the configured first), whatever led last
    assert history == ["sd-a", "planner-a", "kb-b", "gs-b"]
    assert pinned == ["sd-b", "planner-a", "kb-a", "gs-a"]
    assert unusable == ["sd-a", "planner-a", "kb-a", "gs-a"]  # kb-c is not enabled; gs-llm is never planned


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
    assert started == ["sd-a", "planner-a", "kb-a", "gs-a"] and set(spawned.values()) == {1}
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
    assert seen == {"store_open": True, "started": ["sd-a", "planner-a", "kb-a", "gs-a"]}
    assert spawns == {"planner-a": 1, "sd-a": 1, "gs-a": 1, "kb-a": 1}

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


def test_the_planner_guessed_is_the_one_the_turn_will_lead_with_and_its_own_last_kb_plugin(tmp_path):
    """After weak answers the lead moves to the next planner on evidence (kernel/engine/planner_rank.py):
    the guess follows that ranking, not the planner of the last turn, and takes the kb-plugin of the
    latest turn that planner led (its plans put it first), not the last turn's."""
    h = Harness(tmp_path, SCRIPT, enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            before = expected_plugins(ctx, Pins(), {"planner": "planner-a", "kb": "kb-b"})
            for _ in range(3):  # planner-a answered weakly three times: planner-b now leads
                ctx.store.record_planner_outcome("planner-a", False, 10.0)
            after = expected_plugins(ctx, Pins(), {"planner": "planner-a", "kb": "kb-b"})
            pinned = expected_plugins(ctx, Pins(planner="planner-a"), {"planner": "planner-a", "kb": "kb-b"})
            return before, after, pinned
        finally:
            await ctx.aclose()

    before, after, pinned = anyio.run(go)
    assert before == ["sd-a", "planner-a", "kb-b", "gs-a"]
    assert after[:2] == ["sd-a", "planner-b"]
    assert pinned[:2] == ["sd-a", "planner-a"]


def test_the_usual_plugins_of_a_planner_come_from_the_turns_it_led(tmp_path):
    script = {**SCRIPT, "planner-b": SCRIPT["planner-a"]}
    h = Harness(tmp_path, script, enabled=ENABLED)
    plan_a = {**PLAN, "kbPluginOrder": ["kb-a"]}
    h.write_script({**script, "planner-a": {"buildPlan": {"plan": plan_a}, "recordOutcome": {}}})
    h.ask("what is alpha?", pins=Pins(planner="planner-a"))
    h.write_script(script)
    h.ask("what is alpha?", pins=Pins(planner="planner-b"))

    async def go():
        ctx = await h.open()
        try:
            store = ctx.store
            return store.usual_turn_plugins(), store.usual_turn_plugins(led_by="planner-a")
        finally:
            await ctx.aclose()

    last, led_by_a = anyio.run(go)
    assert (
        last["planner"] == "planner-b" and last["kb"] == "kb-b"
    )  # one turn each: the tie goes to the latest
    assert led_by_a["planner"] == "planner-a" and led_by_a["kb"] == "kb-a"


def test_the_kb_guess_is_the_one_most_recent_turns_used_not_the_latest_fallback(tmp_path):
    """A turn's kb-plugin is the one whose view answered: after a weak first view, the fallback's. The next
    plan mostly puts the usual kb-plugin first again, so that is the one a one-turn process starts early."""
    h = Harness(tmp_path, SCRIPT, enabled=ENABLED)
    weak_first = {
        "retrieve": {"status": "insufficient", "select": 1},
        "onSessionEvent": {},
    }  # kb-b's view answers

    def ask_with(order: list[str], kb_a: dict | None = None) -> str | None:
        plan = {**PLAN, "kbPluginOrder": order}
        planner = {"buildPlan": {"plan": plan}, "recordOutcome": {}}
        h.write_script({**SCRIPT, "kb-a": kb_a or SCRIPT["kb-a"], "planner-a": planner})
        return h.ask("what is alpha?", pins=Pins(planner="planner-a")).kb_plugin

    answered = [
        ask_with(["kb-a", "kb-b"]),
        ask_with(["kb-a", "kb-b"]),
        ask_with(["kb-a", "kb-b"], weak_first),
    ]

    async def go():
        ctx = await h.open()
        try:
            return ctx.store.usual_turn_plugins(led_by="planner-a"), expected_plugins(ctx, Pins())
        finally:
            await ctx.aclose()

    usual, expected = anyio.run(go)
    assert answered == ["kb-a", "kb-a", "kb-b"]  # the latest turn's answer came from the fallback
    assert usual["kb"] == "kb-a"  # the old guess (the latest turn's) was kb-b
    assert "kb-a" in expected and "kb-b" not in expected


def test_after_its_turn_a_one_turn_process_records_what_the_next_turn_will_start(tmp_path):
    """A weak answer moves the lead: the record the next process launches from names the planner that will
    lead it, with the launch this process used or the one already recorded."""
    from mrpvm.kernel.engine.warm_start import record_next
    from mrpvm.kernel.supervisor import early_launch

    h = Harness(tmp_path, SCRIPT, enabled=ENABLED)

    async def go():
        ctx = await h.open()
        try:
            started = prestart_turn(ctx, Pins())
            session = ctx.store.create_session()
            await load_session_context(ctx, session.id, "Alpha is a widget.", "facts.md", "sd-a")
            await run_turn(ctx, TurnRequest(message="what is alpha?", session_id=session.id))
            at_prestart = list(early_launch.recorded(ctx.home)["workers"])
            ctx.supervisor.prestart("planner-b")  # its launch is known to this process
            for _ in range(3):
                ctx.store.record_planner_outcome("planner-a", False, 10.0)
            recorded = record_next(ctx, Pins())
            return started, at_prestart, recorded, list(early_launch.recorded(ctx.home)["workers"])
        finally:
            await ctx.aclose()

    started, at_prestart, recorded, workers = anyio.run(go)
    assert "planner-a" in started and at_prestart == started
    assert "planner-b" in recorded and "planner-a" not in recorded and workers == recorded


def test_a_second_kb_plugin_most_recent_turns_called_starts_beside_the_first(tmp_path):
    """Where most recent turns' first kb view was weak, their fallback kb-plugin was called too: a one-turn
    process starts it with the others instead of once the first view has failed (on the turn's critical
    path). Not when the kb stage is pinned (the turn calls only the pin), nor from turns another planner led."""
    h = Harness(tmp_path, SCRIPT, enabled=ENABLED)
    weak_first = {"retrieve": {"status": "insufficient", "select": 1}, "onSessionEvent": {}}

    def ask_with(kb_a: dict | None = None) -> str | None:
        plan = {**PLAN, "kbPluginOrder": ["kb-a", "kb-b"]}
        planner = {"buildPlan": {"plan": plan}, "recordOutcome": {}}
        h.write_script({**SCRIPT, "kb-a": kb_a or SCRIPT["kb-a"], "planner-a": planner})
        return h.ask("what is alpha?", pins=Pins(planner="planner-a")).kb_plugin

    answered = [ask_with(weak_first), ask_with(weak_first), ask_with()]

    async def go():
        ctx = await h.open()
        try:
            store = ctx.store
            return (
                store.usually_called_plugins(led_by="planner-a"),
                store.usually_called_plugins(led_by="planner-b"),
                expected_plugins(ctx, Pins()),
                expected_plugins(ctx, Pins(kb="kb-a")),
            )
        finally:
            await ctx.aclose()

    called, other_planner, expected, pinned = anyio.run(go)
    assert answered == ["kb-b", "kb-b", "kb-a"]  # two of three turns needed the fallback
    assert {"kb-a", "kb-b"} <= set(called) and other_planner == []
    assert {"kb-a", "kb-b"} <= set(expected)  # the old guess started one kb-plugin only
    assert pinned == ["sd-a", "planner-a", "kb-a", "gs-a"]


def test_the_plugins_usually_called_are_those_two_thirds_of_the_turns_called(tmp_path):
    """One turn alone is no usual; one fallback in two or three turns is too rare; a trace that does not read
    as one counts as no call."""
    h = Harness(tmp_path, SCRIPT, enabled=ENABLED)
    weak_first = {"retrieve": {"status": "insufficient", "select": 1}, "onSessionEvent": {}}
    plan = {**PLAN, "kbPluginOrder": ["kb-a", "kb-b"]}
    planner = {"buildPlan": {"plan": plan}, "recordOutcome": {}}

    def called() -> list[str]:
        async def go():
            ctx = await h.open()
            try:
                return ctx.store.usually_called_plugins(led_by="planner-a")
            finally:
                await ctx.aclose()

        return anyio.run(go)

    seen = []
    for kb_a in (weak_first, SCRIPT["kb-a"], SCRIPT["kb-a"]):
        h.write_script({**SCRIPT, "kb-a": kb_a, "planner-a": planner})
        h.ask("what is alpha?", pins=Pins(planner="planner-a"))
        seen.append(called())
    assert seen[0] == []  # every plugin (kb-b too) was called by the only turn: one turn is no usual
    assert "kb-a" in seen[1] and "kb-b" not in seen[1] + seen[2]  # one of two, of three: too rare

    async def go():
        ctx = await h.open()
        try:
            before = ctx.store.usually_called_plugins(led_by="planner-a")
            conn = ctx.store._conn()
            latest = conn.execute("SELECT request_id FROM turns ORDER BY created_at DESC LIMIT 1").fetchone()
            conn.execute("UPDATE turns SET trace = ? WHERE request_id = ?", (b"not json", latest[0]))
            return before, ctx.store.usually_called_plugins(led_by="planner-a")
        finally:
            await ctx.aclose()

    before, damaged = anyio.run(go)
    assert sorted(before) == ["gs-a", "kb-a", "planner-a", "sd-a"]  # kb-b: one turn of three
    assert sorted(damaged) == sorted(before)  # still called in two of three
