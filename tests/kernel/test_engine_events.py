"""run_turn's optional progress listener: turn-start, then a start/end pair per plugin call, matching the trace."""

from __future__ import annotations

import anyio
from engine_support import Harness, intent, unit
from mrpvm.kernel.engine import TurnRequest, run_turn

SCRIPT = {
    "planner-a": {"buildPlan": {"plan": {"kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}}},
    "sd-a": {
        "detectSeeds": {
            "intents": [intent("what is alpha")],
            "units": [unit("session::t::unit-000", "Alpha is a widget")],
        }
    },
    "kb-a": {"retrieve": {"select": "all"}},
    "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
    "val-a": {"validate": {"status": "accepted"}},
}


def run(h: Harness, listener) -> object:
    async def go():
        ctx = await h.open()
        try:
            return await run_turn(ctx, TurnRequest(message="what is alpha?"), on_event=listener)
        finally:
            await ctx.aclose()

    return anyio.run(go)


def test_events_pair_every_plugin_call_of_the_trace(tmp_path):
    events: list[dict] = []
    result = run(Harness(tmp_path, SCRIPT), events.append)
    assert events[0]["event"] == "turn-start"
    assert events[0]["requestId"] == result.request_id and events[0]["sessionId"] == result.session_id
    starts = [e for e in events if e["event"] == "plugin-start"]
    ends = {e["node"]: e for e in events if e["event"] == "plugin-end"}
    assert starts and {e["node"] for e in starts} == set(ends)
    for start in starts:  # each start comes before its end
        assert events.index(start) < events.index(ends[start["node"]])
    traced = {
        n["id"]: n
        for n in result.execution_trace["nodes"]
        if n["kind"] == "plugin" and not n.get("status", "").startswith("skipped") and not n.get("ref")
    }
    assert set(ends) == set(traced)
    for node_id, end in ends.items():
        assert (end["pluginId"], end["op"], end["status"]) == (
            traced[node_id]["pluginId"],
            traced[node_id]["op"],
            traced[node_id]["status"],
        )
    assert {e["requestId"] for e in events} == {result.request_id}


def test_a_failing_listener_does_not_break_the_turn(tmp_path):
    heard: list[str] = []

    def listener(event: dict) -> None:
        heard.append(event["event"])
        raise RuntimeError("listener bug")

    result = run(Harness(tmp_path, SCRIPT), listener)
    assert result.status == "success" and "Alpha is a widget." in result.response_markdown
    assert heard == ["turn-start"]  # dropped after its first failure
