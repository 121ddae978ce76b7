"""A deferred recordOutcome's trace rewrite re-encodes only the calls still running at the commit.

The commit encodes the turn's trace once (`TraceRecorder.to_json(keep=True)`) and keeps where each call
still running sits in those bytes; once the call ends, `json_again` encodes that node alone and copies
the rest — byte for byte what a whole encode gives (the store and the HTTP answer see the same JSON). A
node or an edge added since (an LLM call recorded late) falls back to a whole encode.
"""

from __future__ import annotations

import anyio
import msgspec
import pytest
from mrpvm.kernel import trace as trace_module
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.kernel.trace import Trace, TraceNode, TraceRecorder
from test_engine_outcome_batch import KB_A, BatchHarness, script, stored_node


def _turn_with_open_calls() -> tuple[TraceRecorder, TraceNode, TraceNode]:
    """An invented turn at its commit: finished calls (one whose output quotes a node's JSON opening in a
    string), a batched outcome `pending` and a single outcome call with no status yet."""
    trace = TraceRecorder("req_t", "ses_t")
    root = trace.node("frame", "turn")
    call = trace.plugin_node("retrieve", root.id, "f1", "kb-q", "kb-plugin", "retrieve", {"prompt": "Wo?"})
    trace.complete(call, "success", 3.25, {"units": 2, "notes": '{"id":"n4","kind":"plugin"} in text'})
    batched = trace.plugin_node("outcome", root.id, "f1", "planner-q", "planner-plugin", "recordOutcome", {})
    batched.status = "pending"
    single = trace.plugin_node("outcome", root.id, "f1", "planner-r", "planner-plugin", "recordOutcome", {})
    trace.node("event", "commit", parent=root.id, status="success")
    trace.edge(root.id, call.id, "uses")
    return trace, batched, single


def _end(node: TraceNode, stored: int) -> None:
    node.status = "success"
    node.durationMs = 41.5
    node.output = {**node.output, "batch": 3, "observationsStored": stored, "ünïcode": "…"}


def test_the_rewrite_is_the_whole_encode_once_the_open_calls_end():
    trace, batched, single = _turn_with_open_calls()
    at_commit = trace.to_json(keep=True)
    assert trace.json_again() == at_commit  # nothing changed yet
    _end(batched, 4)
    assert trace.json_again() == trace.to_json()
    _end(single, 0)
    assert trace.json_again() == trace.to_json()
    assert msgspec.json.decode(trace.json_again()) == trace.to_builtins()


def test_an_outcome_call_ended_before_the_commit_whose_fold_ends_after_it_is_encoded_again():
    """A deferred recordOutcome whose call answered before the commit but whose fold (outcome.learn: a
    store write in a thread) ends after it: the fold's count, written to the ended node, is in the rewrite."""
    trace = TraceRecorder("req_f", "ses_f")
    root = trace.node("frame", "turn")
    outcome = trace.plugin_node("outcome", root.id, "f1", "planner-s", "planner-plugin", "recordOutcome", {})
    trace.complete(outcome, "success", 7.5, {"observations": 2})
    trace.node("event", "commit", parent=root.id, status="success")
    trace.to_json(keep=True)
    outcome.output["observationsStored"] = 2  # the fold ends after the commit
    assert trace.json_again() == trace.to_json()
    assert msgspec.json.decode(trace.json_again())["nodes"][1]["output"]["observationsStored"] == 2


@pytest.mark.parametrize("late", ["node", "edge"])
def test_something_added_after_the_commit_means_a_whole_encode(late):
    trace, batched, _ = _turn_with_open_calls()
    trace.to_json(keep=True)
    _end(batched, 1)
    if late == "node":
        trace.llm_call(
            parent=batched.id,
            frame_id="f1",
            plugin_id="planner-q",
            model="m",
            status="success",
            duration_ms=2,
        )
    else:
        trace.edge(batched.id, "n1", "reuses")
    assert trace.json_again() == trace.to_json()


def test_the_rewrite_encodes_the_open_nodes_not_the_trace(monkeypatch):
    trace, batched, single = _turn_with_open_calls()
    trace.to_json(keep=True)
    _end(batched, 2)
    _end(single, 1)
    encoded: list[type] = []
    real = trace_module._ENCODER

    class Counting:
        def encode(self, obj: object) -> bytes:
            encoded.append(type(obj))
            return real.encode(obj)

    monkeypatch.setattr(trace_module, "_ENCODER", Counting())
    again = trace.json_again()
    monkeypatch.setattr(trace_module, "_ENCODER", real)
    assert again == trace.to_json()
    assert encoded == [TraceNode, TraceNode]  # the two open calls, not the ~20 KB trace
    assert Trace not in encoded


def test_a_daemon_turns_stored_trace_is_the_whole_encode(tmp_path, monkeypatch):
    """Turns with batched deferred outcomes: every rewrite the store takes equals a whole encode of the
    turn's trace at that moment, and the stored node is the finished one."""
    rewrites: list[tuple[bytes, bytes]] = []
    real = TraceRecorder.json_again

    def checked(self: TraceRecorder) -> bytes:
        again = real(self)
        rewrites.append((again, self.to_json()))
        return again

    monkeypatch.setattr(TraceRecorder, "json_again", checked)
    h = BatchHarness(tmp_path, script({"observationsEach": [KB_A]}), batch=2)

    async def go() -> list:
        ctx = await h.open()
        try:
            with anyio.fail_after(120):
                results = []

                async def one(k: int) -> None:
                    turn = TurnRequest(message=f"what is alpha {k}?")
                    results.append(await run_turn(ctx, turn, defer_outcome=True))

                async with anyio.create_task_group() as tg:
                    for k in range(2):
                        tg.start_soon(one, k)
                await ctx.background.drain()
                return results
        finally:
            with anyio.fail_after(120):
                await ctx.aclose()

    results = anyio.run(go)
    assert len(rewrites) == 2 and all(again == whole for again, whole in rewrites)
    for result in results:
        node = stored_node(h, result)
        assert node["status"] == "success" and node["output"]["observationsStored"] == 1
