"""A one-turn process holds its source's session notices until each kb-plugin's next call; once loading is
done, those of the kb-plugins whose workers were started anyway are delivered in the background
(`Supervisor.release_held_to_started`), beside the turn's first stages, instead of delaying the plugin's first
call. The others stay held; the plugin's next call still waits for a delivery under way; none is sent twice."""

from __future__ import annotations

import anyio
from engine_support import Harness, intent, unit
from mrpvm.kernel.engine import TurnRequest, prestart_turn, run_turn
from mrpvm.knowledge.ingest import load_session_context
from mrpvm.protocol.envelope import Pins

PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-b"], "goalSolverOrder": ["gs-a"]}
SCRIPT = {
    "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
    "sd-a": {
        "detectSeeds": {"intents": [intent("what is the quokka's diet")]},
        "normalizePersistentContext": {"units": [unit("zoo::chunk-000::unit-001", "Quokkas eat leaves.")]},
    },
    "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "kb-b": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
    "gs-a": {"solve": {"answer": "Quokkas eat leaves.", "sources": "evidence"}},
}
ENABLED = ["planner-a", "sd-a", "kb-a", "kb-b", "gs-a"]


def test_the_notices_of_started_kb_plugins_go_out_before_their_first_call_the_others_stay_held(tmp_path):
    h = Harness(tmp_path, SCRIPT, planners=("planner-a",), enabled=ENABLED)

    async def one_ask(question: str):
        ctx = await h.open()
        try:
            started = prestart_turn(ctx, Pins(kb="kb-b"))  # kb-b started, kb-a not
            session = ctx.store.create_session()
            await load_session_context(
                ctx, session.id, "Quokkas eat leaves.", "zoo.md", "sd-a", defer_notices=True
            )
            released = ctx.supervisor.release_held_to_started()
            with anyio.fail_after(30):  # the delivery runs on its own: wait for it, not for a turn call
                while not h.calls("kb-b", "onSessionEvent"):
                    await anyio.sleep(0.02)
            before_turn = [(c["plugin"], c["op"]) for c in h.calls()]
            result = await run_turn(ctx, TurnRequest(message=question, session_id=session.id))
            return started, released, before_turn, result
        finally:
            await ctx.aclose()

    started, released, before_turn, result = anyio.run(one_ask, "what do quokkas eat?")
    assert "kb-b" in started and "kb-a" not in started
    assert released == ["kb-b"]
    assert ("kb-b", "onSessionEvent") in before_turn and ("kb-b", "retrieve") not in before_turn
    assert result.status == "success" and result.kb_plugin == "kb-b"
    assert [c["event"] for c in h.calls("kb-b", "onSessionEvent")] == ["session-kus-committed"]  # once
    assert h.calls("kb-a") == []  # never started, never called: its notice stayed held


def test_a_call_waits_for_a_delivery_under_way_and_nothing_held_runs_twice():
    from mrpvm.kernel.supervisor.held import HeldWork

    ran: list[str] = []

    async def go():
        work = HeldWork()
        gate = anyio.Event()

        async def job() -> None:
            await gate.wait()
            ran.append("notice")

        work.hold("kb-x", job)
        assert work.start_where(lambda plugin_id: plugin_id == "kb-x") == ["kb-x"]
        assert not work.start("kb-x") and work.start_where(lambda _: True) == []
        assert work.pending("kb-x")
        async with anyio.create_task_group() as tg:
            tg.start_soon(work.release, "kb-x")  # the plugin's call: waits for the run under way
            await anyio.sleep(0.05)
            assert ran == []
            gate.set()
        assert ran == ["notice"] and not work.pending("kb-x")
        await work.release("kb-x")  # nothing left: returns at once
        assert ran == ["notice"]

    anyio.run(go)


def test_a_delivery_under_way_when_the_kernel_closes_is_cancelled_not_left_running():
    from mrpvm.kernel.supervisor.held import HeldWork

    async def scenario() -> tuple[bool, bool, int]:
        work = HeldWork()
        never = anyio.Event()
        work.hold("kb-a", never.wait)  # a notice whose delivery never ends by itself
        work.hold("kb-b", never.wait)  # held, never started
        assert work.start("kb-a")
        await anyio.sleep(0)  # the delivery is running
        dropped = work.drop()
        for _ in range(3):  # the task ends on its next step, its done callback on the step after
            await anyio.sleep(0)
        return work.pending("kb-a"), work.pending("kb-b"), dropped

    pending_a, pending_b, dropped = anyio.run(scenario)
    assert (pending_a, pending_b, dropped) == (False, False, 1)
