"""Batched recordOutcome (kernel/engine/outcome_batch.py; protocol/SPEC.md, Outcome batches).

A planner whose manifest sets `outcomeBatch` gets the daemon's deferred outcomes several to a call; each
outcome's observations are folded by their own outcome, in order, in one transaction; nothing pending is
lost on shutdown; a later turn of the same session never waits for the batch timer; a reply that does
not attribute its observations is refused whole. A planner without the opt-in gets one outcome per call.
"""

from __future__ import annotations

import json
import shutil

import anyio
import pytest
from engine_support import ENGINE_PLUGINS, Harness, intent, nodes
from mrpvm.kernel.engine import TurnRequest, outcome_batch, run_turn
from mrpvm.kernel.errors import ValidationFailed
from mrpvm.kernel.store import Store
from mrpvm.knowledge.context import open_context
from mrpvm.protocol.document import Observation

ENABLED = ["planner-a", "sd-a", "kb-a", "gs-a"]
PLAN = {"seedDetectorOrder": ["sd-a"], "kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]}
KB_A = {"index": 1, "plugin": "kb-a", "success": 1.0, "latencyMs": 5.0, "alpha": 0.5}
HANG_GUARD_S = 120  # a flush that never came would hang the test forever; this fails it instead


def script(record_outcome: dict) -> dict:
    return {
        "planner-a": {"buildPlan": {"plan": PLAN}, "recordOutcome": record_outcome},
        "sd-a": {"detectSeeds": {"intents": [intent("what is alpha")]}},
        "kb-a": {"retrieve": {"select": "all"}, "onSessionEvent": {}},
        "gs-a": {"solve": {"answer": "Alpha is a widget.", "sources": "evidence"}},
    }


class BatchHarness(Harness):
    """The scripted plugins, with planner-a's manifest declaring `outcomeBatch` (None: as shipped)."""

    def __init__(self, tmp, rules: dict, batch: int | None):
        super().__init__(tmp, rules, planners=("planner-a",), enabled=ENABLED)
        self.plugins = tmp / "plugins"
        shutil.copytree(ENGINE_PLUGINS, self.plugins, ignore=shutil.ignore_patterns("__pycache__"))
        if batch is not None:
            path = self.plugins / "planner-a.json"
            path.write_text(json.dumps({**json.loads(path.read_text()), "outcomeBatch": batch}))

    async def open(self):
        return await open_context(self.environ, manifests_dir=self.plugins, extra_env=self.extra_env)


def ask_concurrently(h: Harness, n: int, *, drain: bool = True, same_session: bool = False):
    """`n` turns (new sessions, or one session in sequence) in one kernel context; the context is then
    closed (`aclose`: the daemon's shutdown), with the background drained first when `drain`."""

    async def go():
        ctx = await h.open()
        try:
            with anyio.fail_after(HANG_GUARD_S):
                if same_session:
                    results = []
                    session = None
                    for k in range(n):
                        turn = TurnRequest(message=f"what is alpha {k}?", session_id=session)
                        results.append(await run_turn(ctx, turn, defer_outcome=True))
                        session = results[-1].session_id
                else:
                    results = []

                    async def one(k: int) -> None:
                        turn = TurnRequest(message=f"what is alpha {k}?")
                        results.append(await run_turn(ctx, turn, defer_outcome=True))

                    async with anyio.create_task_group() as tg:
                        for k in range(n):
                            tg.start_soon(one, k)
                if drain:
                    await ctx.background.drain()
        finally:
            with anyio.fail_after(HANG_GUARD_S):
                await ctx.aclose()
        return results

    return anyio.run(go)


def learned(h: Harness) -> dict:
    store = Store.open(h.home)
    try:
        return {(s.pluginId, s.task): s for s in store.learned("planner-a", None)}
    finally:
        store.close()


def stored_node(h: Harness, result) -> dict:
    (record,) = nodes(result, kind="plugin", op="recordOutcome")
    store = Store.open(h.home)
    try:
        trace = store.get_turn(result.request_id).trace
    finally:
        store.close()
    return {n["id"]: n for n in trace["nodes"]}[record["id"]]


@pytest.fixture
def long_wait(monkeypatch):
    """The batch timer out of reach: a batch goes out only when full, hurried, or flushed."""
    monkeypatch.setattr(outcome_batch, "BATCH_WAIT_S", 3600.0)


def test_a_full_batch_is_one_call_and_every_outcome_is_folded_in_order(tmp_path, long_wait):
    h = BatchHarness(tmp_path, script({"observationsEach": [KB_A], "successStep": True}), batch=3)
    results = ask_concurrently(h, 3)
    (call,) = h.calls("planner-a", "recordOutcome")
    assert sorted(call["outcomes"]) == sorted(r.request_id for r in results)
    record = learned(h)[("kb-a", "")]
    assert record.samples == 3
    # folded in the batch's order: success 0.1, 0.2, 0.3 with alpha 0.5 from the prior 0.5
    rate = 0.5
    for success in (0.1, 0.2, 0.3):
        rate = 0.5 * rate + 0.5 * success
    assert record.successRate == pytest.approx(rate)
    position = {rid: n for n, rid in enumerate(call["outcomes"])}
    for result in results:  # one node per turn, finished from the batch's reply, with its own fold
        node = stored_node(h, result)
        assert node["status"] == "success" and node["output"]["batch"] == 3
        assert node["output"]["observationsStored"] == 1
    assert set(position) == {r.request_id for r in results}


def test_shutdown_sends_the_pending_outcomes_and_keeps_their_records(tmp_path, long_wait):
    h = BatchHarness(tmp_path, script({"observationsEach": [KB_A]}), batch=8)
    results = ask_concurrently(h, 2, drain=False)  # straight to aclose with two outcomes pending
    (call,) = h.calls("planner-a", "recordOutcome")
    assert len(call["outcomes"]) == 2
    assert learned(h)[("kb-a", "")].samples == 2
    assert all(stored_node(h, r)["output"]["observationsStored"] == 1 for r in results)


def test_a_later_turn_of_the_session_does_not_wait_for_the_timer(tmp_path, long_wait):
    """The second turn is about to call the planner while the first turn's outcome waits: it is sent at
    once (a batch of one, an ordinary call), folded, then the second turn plans."""
    h = BatchHarness(tmp_path, script({"observationsEach": [KB_A]}), batch=8)
    ask_concurrently(h, 2, drain=False, same_session=True)
    ops = [(c["op"], c.get("outcomes")) for c in h.calls("planner-a")]
    assert [op for op, _ in ops] == ["buildPlan", "recordOutcome", "buildPlan", "recordOutcome"]
    assert learned(h)[("kb-a", "")].samples == 2


def test_a_planner_without_the_opt_in_gets_one_outcome_per_call(tmp_path, long_wait):
    h = BatchHarness(tmp_path, script({"observationsEach": [KB_A]}), batch=None)
    results = ask_concurrently(h, 3)
    calls = h.calls("planner-a", "recordOutcome")
    assert sorted(c["outcomes"][0] for c in calls) == sorted(r.request_id for r in results)
    assert all(len(c["outcomes"]) == 1 for c in calls)
    assert learned(h)[("kb-a", "")].samples == 3
    assert all("batch" not in stored_node(h, r)["output"] for r in results)


def test_a_batch_reply_that_does_not_name_its_outcomes_is_refused_whole(tmp_path, long_wait):
    h = BatchHarness(tmp_path, script({"observationsEach": [KB_A], "omitOutcome": True}), batch=2)
    results = ask_concurrently(h, 2)
    (call,) = h.calls("planner-a", "recordOutcome")
    assert len(call["outcomes"]) == 2
    assert learned(h) == {}  # nothing half-stored
    for result in results:
        output = stored_node(h, result)["output"]
        assert "observation-outcome" in output["observationsRejected"]
        assert "observationsStored" not in output


def test_a_stranger_in_one_outcome_refuses_the_whole_batch(tmp_path, long_wait):
    elsewhere = {**KB_A, "plugin": "kb-elsewhere"}
    h = BatchHarness(tmp_path, script({"observationsEach": [KB_A, elsewhere]}), batch=2)
    results = ask_concurrently(h, 2)
    assert learned(h) == {}
    assert all("kb-elsewhere" in stored_node(h, r)["output"]["observationsRejected"] for r in results)


def test_attribution_rules():
    seen = [
        Observation(index=1, plugin="kb-a", outcome="r2"),
        Observation(index=2, plugin="kb-a", outcome="r1"),
    ]
    assert [[o.index for o in g] for g in outcome_batch.attribute(seen, ["r1", "r2"])] == [[2], [1]]
    # a single outcome's reply may leave the name out, or name its own request
    plain = [Observation(index=1, plugin="kb-a")]
    assert outcome_batch.attribute(plain, ["r1"]) == [plain]
    assert outcome_batch.attribute(seen[1:], ["r1"]) == [seen[1:]]
    for bad, ids in ((plain, ["r1", "r2"]), (seen, ["r1"]), (seen, ["r1", "r3"])):
        with pytest.raises(ValidationFailed, match="observation-outcome"):
            outcome_batch.attribute(bad, ids)


def test_a_failed_batch_call_is_recorded_as_dropped_on_every_turn(tmp_path, long_wait):
    h = BatchHarness(tmp_path, script({"fail": {"code": "OUTCOME_DOWN", "message": "cannot learn"}}), batch=2)
    results = ask_concurrently(h, 2)
    (call,) = h.calls("planner-a", "recordOutcome")
    assert len(call["outcomes"]) == 2 and learned(h) == {}
    for result in results:
        node = stored_node(h, result)
        assert node["status"] == "error" and node["output"]["code"] == "OUTCOME_DOWN"
        assert "OUTCOME_DOWN" in node["output"]["dropped"]
