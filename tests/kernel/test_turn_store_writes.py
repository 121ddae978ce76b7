"""What a turn asks of the store, per turn (issue 22, the daemon's CPU a turn).

A turn's trace is stored again once its deferred recordOutcome ends: that rewrite is encoded straight from
the trace's structs (`TraceRecorder.to_json`), byte for byte the JSON of `to_builtins()`, and the store
takes it as is; the commit stores the trace's JSON encoded once, and the turn answers those bytes (the
HTTP answer copies them in). A turn reads its KB's source versions once (the guidance units and the KB's shape come
from the same cached scan).
"""

from __future__ import annotations

import anyio
import msgspec
from engine_support import Harness, intent
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.kernel.records import TurnRecord
from mrpvm.kernel.store import Store
from mrpvm.kernel.store_rows import json_encoder
from mrpvm.kernel.trace import TraceRecorder
from mrpvm.shells.api.turns import echo

PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}


def _busy_trace() -> TraceRecorder:
    """A trace with what real turns hold: nested outputs, floats, unicode, edges, an LLM node."""
    trace = TraceRecorder("req_a", "ses_b")
    root = trace.node("frame", "turn")
    call = trace.plugin_node(
        "retrieve",
        root.id,
        "frame-1",
        "kb-x",
        "kb-plugin",
        "retrieve",
        {"prompt": "Wie groß ist …?", "context": 2},
    )
    trace.complete(
        call, "success", 12.3456, {"units": 3, "unitIds": ["u1", "u2"], "resolved": [{"index": 1}]}
    )
    trace.llm_call(
        parent=call.id, frame_id="frame-1", plugin_id="kb-x", model="m", status="success", duration_ms=0.5
    )
    trace.edge(root.id, call.id, "fallback", "the first view was weak")
    pending = trace.plugin_node(
        "outcome", root.id, "frame-1", "planner-x", "planner-plugin", "recordOutcome", {}
    )
    pending.status = "pending"
    return trace


def test_the_trace_json_is_the_json_of_its_builtins():
    trace = _busy_trace()
    assert trace.to_json() == json_encoder.encode(trace.to_builtins())
    assert msgspec.json.decode(trace.to_json()) == trace.to_builtins()


def test_the_store_takes_a_trace_already_encoded(tmp_path):
    trace = _busy_trace()
    with Store.open(tmp_path / "home") as store:
        session = store.create_session()
        record = TurnRecord(
            requestId="req_a",
            sessionId=session.id,
            userMessage="q",
            responseMarkdown="## Answer",
            responseDocument={},
            trace=trace.to_builtins(),
        )
        store.commit_turn(record, [])
        trace.trace.nodes[-1].status = "success"  # the deferred call ended
        store.update_turn_trace("req_a", trace.to_json())
        assert store.get_turn("req_a").trace == trace.to_builtins()
        assert store.record_outcome_and_trace("planner-x", None, [], "req_a", lambda n: trace.to_json()) == 0
        assert store.get_turn("req_a").trace["nodes"][-1]["status"] == "success"


def _harness(tmp_path) -> Harness:  # type: ignore[no-untyped-def]
    return Harness(
        tmp_path,
        {
            "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": {}},
            "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")]}},
            "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
            "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
        },
        planners=("planner-a",),
        enabled=["planner-a", "sd-a", "kb-a", "gs-a"],
    )


def test_a_turn_encodes_its_trace_once_and_answers_the_stored_bytes(tmp_path):
    h = _harness(tmp_path)

    async def go() -> None:
        ctx = await h.open()
        try:
            result = await run_turn(ctx, TurnRequest(message="what is alpha?"))
            stored = ctx.store._conn().execute(
                "SELECT trace FROM turns WHERE request_id = ?", (result.request_id,)
            )
            assert bytes(stored.fetchone()[0]) == result.trace_json  # as the commit stored it
            assert result.execution_trace == ctx.store.get_turn(result.request_id).trace
            assert {n["kind"] for n in result.execution_trace["nodes"]} >= {"frame", "plugin"}
            echoed = msgspec.json.decode(msgspec.json.encode(echo(result)))  # the HTTP answer's fields
            assert echoed["execution_trace"] == result.execution_trace
            assert echoed["request_id"] == result.request_id
        finally:
            await ctx.aclose()

    anyio.run(go)


def test_a_turn_reads_its_kbs_sources_once(tmp_path):
    h = _harness(tmp_path)

    async def go() -> tuple[str, list[str]]:
        ctx = await h.open()
        try:
            kb_id = ctx.store.create_kb("x").id
            read = ctx.store.list_sources
            seen: list[str] = []

            def counted(kb: str):  # type: ignore[no-untyped-def]
                seen.append(kb)
                return read(kb)

            ctx.store.list_sources = counted  # type: ignore[method-assign]
            result = await run_turn(ctx, TurnRequest(message="what is alpha?", kb=kb_id))
            assert result.status in ("success", "weak")
            return kb_id, seen
        finally:
            await ctx.aclose()

    kb_id, seen = anyio.run(go)
    assert seen == [kb_id]  # the old code read them twice (the guidance units, then the KB's shape)
