"""Shared learning in the store (kernel/store_learning.py), on both backends: the EWMA fold of a planner's
observations, no update lost when two nodes fold at once, the legacy utility.json imported once, a KB's
records deleted with it, and the engine's round trip (recordOutcome observations -> buildPlan `learned`)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import msgspec
import pytest
from mrpvm.kernel.errors import ValidationFailed
from mrpvm.kernel.planner_import import IMPORTED_SUFFIX, LEGACY_FILE, import_planner_files
from mrpvm.kernel.records import TurnRecord
from mrpvm.kernel.store import Store
from mrpvm.kernel.store_learning import MAX_OBSERVATIONS
from mrpvm.protocol.document import Observation

PLANNER = "planner-default"


def obs(
    plugin: str, success: float, *, task: str = "", ms: float = 10.0, suf: float | None = None
) -> Observation:
    return Observation(index=1, plugin=plugin, task=task, success=success, latencyMs=ms, sufficiency=suf)


def by_key(store: Store, kb_id: str | None = None) -> dict[tuple[str, str], object]:
    return {(s.pluginId, s.task): s for s in store.learned(PLANNER, kb_id)}


def test_observations_fold_into_ewma_records(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        store.record_observations(PLANNER, None, [obs("kb-fast", 1.0, ms=10.0, suf=1.0)])
        store.record_observations(PLANNER, None, [obs("kb-fast", 0.0, ms=20.0)])  # no sufficiency
        store.record_observations(PLANNER, None, [obs("kb-fast", 1.0, task="define", ms=4.0)])
        (overall,) = [s for s in store.learned(PLANNER, None) if s.task == ""]
        assert overall.samples == 2
        assert overall.successRate == pytest.approx(0.7 * (0.7 * 0.5 + 0.3 * 1.0) + 0.3 * 0.0)
        assert overall.latencyMs == pytest.approx(0.7 * 10.0 + 0.3 * 20.0)  # the first sample, then EWMA
        assert overall.sufficiency == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)  # the second left it as it was
        define = by_key(store)[("kb-fast", "define")]
        assert define.samples == 1 and define.sufficiency == 0.5 and define.latencyMs == 4.0
        # per KB scope, and only the plugins asked for
        assert store.learned(PLANNER, "kb_other") == [] and store.learned("planner-depth", None) == []
        assert store.learned(PLANNER, None, ["gs-symbolic"]) == []


ROUNDS = 60
EARLY, LATE = obs("kb-fast", 1.0, ms=5.0), obs("kb-fast", 1.0, task="define", ms=5.0)  # in key order


def singles(store: Store) -> None:
    for _ in range(ROUNDS):
        store.record_observations(PLANNER, None, [EARLY, LATE])


def batches(store: Store) -> None:
    """Batches of two outcomes whose records come in reverse key order across the batch."""
    for _ in range(ROUNDS):
        store.record_outcomes_and_traces(PLANNER, None, [([LATE], "req_a", None), ([EARLY], "req_b", None)])


def fold_on_two_nodes_at_once(tmp_path, store_env, folds: list[Callable[[Store], None]]) -> None:
    """Two stores (two nodes; SQLite: two connections to one file) run `folds` from their own threads at
    once; every fold lands, and the result is what the same folds give one after the other."""
    homes = [tmp_path / "a", tmp_path / ("b" if store_env else "a")]
    stores = [Store.open(h, store_env | {"MRPVM_NODE_ID": f"node-{i}"}) for i, h in enumerate(homes)]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(fold: Callable[[Store], None], store: Store) -> None:
        try:
            start.wait()
            fold(store)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=pair) for pair in zip(folds, stores, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        records = by_key(stores[1])
        for key in (("kb-fast", ""), ("kb-fast", "define")):
            assert records[key].samples == 2 * ROUNDS
            # all samples equal: the EWMA does not depend on their order, only on their number
            assert records[key].successRate == pytest.approx(1 - 0.5 * 0.7 ** (2 * ROUNDS))
            assert records[key].latencyMs == pytest.approx(5.0)
    finally:
        for store in stores:
            store.close()


def test_two_nodes_folding_at_once_lose_no_update(tmp_path, store_env):
    fold_on_two_nodes_at_once(tmp_path, store_env, [singles, singles])


def test_a_batch_and_a_single_fold_at_once_never_deadlock(tmp_path, store_env):
    """A batch of outcomes (kernel/engine/outcome_batch.py) folded by one node while another folds single
    outcomes of the same records: both take the records in one key order (PostgreSQL: row locks; a batch
    folded outcome by outcome deadlocked here), so every fold lands."""
    fold_on_two_nodes_at_once(tmp_path, store_env, [batches, singles])


def test_a_batch_folds_each_records_samples_in_outcome_order(tmp_path, store_env):
    """A batch's observations are folded in one key order, and a record's samples keep the outcomes'
    order (the EWMA depends on it): the same records as the outcomes folded one by one."""
    outcomes = [
        [obs("kb-fast", 0.0, ms=2.0), obs("gs-symbolic", 1.0)],
        [obs("kb-fast", 1.0, ms=8.0)],
        [],
        [obs("kb-fast", 0.0, ms=4.0, task="define"), obs("gs-symbolic", 0.0)],
    ]
    with Store.open(tmp_path / "batch", store_env) as batched:
        counts = batched.record_outcomes_and_traces(
            PLANNER, None, [(o, f"req_{n}", None) for n, o in enumerate(outcomes)]
        )
        got = by_key(batched)
    with Store.open(tmp_path / "one", store_env) as single:
        if store_env:  # the same database: start from no records
            single.restore_learning([])
        for o in outcomes:
            single.record_observations(PLANNER, None, o)
        want = by_key(single)
    assert counts == [2, 1, 0, 2]
    assert got == want and got[("kb-fast", "")].successRate == pytest.approx(0.7 * (0.7 * 0.5) + 0.3)


def test_bad_observation_sets_are_refused_whole(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        with pytest.raises(ValidationFailed, match="at most 512"):
            store.record_observations(PLANNER, None, [obs("kb-fast", 1.0)] * 513)
        assert store.learned(PLANNER, None) == []
        assert store.record_observations(PLANNER, None, []) == 0


def legacy_table(samples: int, rate: float) -> bytes:
    stat = {"successRate": rate, "latencyMs": 8.0, "llmCalls": 0.0, "sufficiency": 0.5, "samples": samples}
    return msgspec.json.encode(
        {
            "version": 1,
            "alpha": 0.3,
            "outcomes": samples,
            "plugins": {
                "kb-fast": {"overall": stat, "acts": {"explain": stat}},
                "kb-untried": {"overall": {}},
            },
        }
    )


def test_a_legacy_utility_file_is_imported_once_and_merged_by_samples(tmp_path, store_env):
    with Store.open(tmp_path / "a", store_env) as store:
        kb = store.create_kb("docs")
        session_file = tmp_path / "a" / "artifacts" / "_session" / PLANNER / LEGACY_FILE
        kb_file = tmp_path / "a" / "artifacts" / kb.id / PLANNER / LEGACY_FILE
        gone_file = tmp_path / "a" / "artifacts" / "kb_deleted" / PLANNER / LEGACY_FILE
        foreign = tmp_path / "a" / "artifacts" / "_session" / "planner-foreign" / LEGACY_FILE
        for path, data in (
            (session_file, legacy_table(4, 0.9)),
            (kb_file, legacy_table(2, 0.1)),
            (gone_file, legacy_table(2, 0.1)),
            (foreign, b"[1, 2, 3]"),
        ):
            path.parent.mkdir(parents=True)
            path.write_bytes(data)
        store.record_observations(PLANNER, None, [obs("kb-fast", 0.0, ms=8.0)])  # learned meanwhile: 1 sample
        assert import_planner_files(store, tmp_path / "a", [PLANNER, "planner-foreign"]) == 2
        assert not session_file.exists() and session_file.with_name(LEGACY_FILE + IMPORTED_SUFFIX).exists()
        assert gone_file.exists() and foreign.exists()  # a deleted KB's file and a foreign format: left
        merged = by_key(store)[("kb-fast", "")]
        assert merged.samples == 5
        assert merged.successRate == pytest.approx((4 * 0.9 + 1 * (0.7 * 0.5)) / 5)
        assert by_key(store)[("kb-fast", "explain")].samples == 4
        assert ("kb-untried", "") not in by_key(store)  # no samples: nothing to learn
        assert by_key(store, kb.id)[("kb-fast", "")].successRate == pytest.approx(0.1)
        # the same file again (a restored copy, or a second node holding the same file): imported never twice
        session_file.write_bytes(legacy_table(4, 0.9))
        assert import_planner_files(store, tmp_path / "a", [PLANNER]) == 0
        assert by_key(store)[("kb-fast", "")].samples == 5 and not session_file.exists()
        # deleting the KB deletes what was learned in its scope
        store.delete_kb(kb.id)
        assert store.learned(PLANNER, kb.id) == [] and by_key(store)[("kb-fast", "")].samples == 5


def test_a_snapshot_restores_the_records_exactly(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        store.record_observations(
            PLANNER, None, [obs("kb-fast", 1.0), obs("gs-symbolic", 0.2, task="define")]
        )
        snapshot = store.learning_snapshot()
        store.record_observations(PLANNER, "kb_x", [obs("kb-fast", 0.0)])
        store.record_observations(PLANNER, None, [obs("kb-fast", 0.0)])
        store.restore_learning(snapshot)
        assert store.learning_snapshot() == snapshot


def test_a_schema_7_store_migrates_to_the_current_version_keeping_its_nodes(tmp_path, store_env):
    """The migration as both backends run it (SQLite's user_version, PostgreSQL's version table under its
    advisory lock): a store left at version 7 by an older kernel gains the learning tables and keeps its
    nodes."""
    from mrpvm.kernel.db import open_database
    from mrpvm.kernel.db.pg_schema import PG_MIGRATIONS
    from mrpvm.kernel.store_rows import MIGRATIONS, SCHEMA_VERSION

    assert SCHEMA_VERSION >= 8 and len(MIGRATIONS) == len(PG_MIGRATIONS) == SCHEMA_VERSION
    assert all(
        MIGRATIONS[v] is PG_MIGRATIONS[v] for v in range(7, SCHEMA_VERSION)
    )  # one text for both from 8 on
    database = open_database(tmp_path, store_env.get("MRPVM_STORE_URL", ""))
    try:
        database.migrate((MIGRATIONS if database.kind == "sqlite" else PG_MIGRATIONS)[:7])
        assert database.schema_version() == 7
        with database.transaction() as conn:
            conn.execute("INSERT INTO nodes (id, started_at, seen_at) VALUES ('old', ?, ?)", ("x", "x"))
    finally:
        database.close()
    with Store.open(tmp_path, store_env) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert [(n.id, n.forgottenAt) for n in store.node_records()] == [("old", None)]
        store.record_observations(PLANNER, None, [obs("kb-fast", 1.0)])
        assert store.validator_counts() == {} and len(store.learned(PLANNER, None)) == 1


def test_a_deleted_kbs_outcome_arriving_late_is_not_stored(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        kb = store.create_kb("docs")
        assert store.record_observations(PLANNER, kb.id, [obs("kb-fast", 1.0)]) == 1
        store.delete_kb(kb.id)
        assert store.record_observations(PLANNER, kb.id, [obs("kb-fast", 1.0)]) == 0  # recordOutcome ran late
        assert store.learning_snapshot() == []


def _committed_turn(store: Store, request_id: str) -> None:
    session = store.create_session()
    trace = {"nodes": [{"id": "n1", "status": "pending"}], "edges": []}
    store.commit_turn(
        TurnRecord(
            requestId=request_id,
            sessionId=session.id,
            userMessage="q",
            responseMarkdown="## Answer",
            responseDocument={},
            trace=trace,
        ),
        [],
    )


def test_a_late_outcome_folds_and_rewrites_its_turns_trace_in_one_transaction(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        _committed_turn(store, "req-1")
        seen: list[int] = []

        def trace_of(stored: int) -> dict:
            seen.append(stored)
            return {"nodes": [{"id": "n1", "status": "success", "output": {"observationsStored": stored}}]}

        observations = [obs("kb-fast", 1.0), obs("gs-symbolic", 0.0)]
        assert store.record_outcome_and_trace(PLANNER, None, observations, "req-1", trace_of) == 2
        assert seen == [2] and set(by_key(store)) == {("kb-fast", ""), ("gs-symbolic", "")}
        assert store.get_turn("req-1").trace["nodes"][0]["output"] == {"observationsStored": 2}
        # a refused set changes neither the records nor the trace (one transaction, rolled back)
        too_many = [obs(f"kb-{n}", 1.0) for n in range(MAX_OBSERVATIONS + 1)]
        with pytest.raises(ValidationFailed):
            store.record_outcome_and_trace(PLANNER, None, too_many, "req-1", lambda n: {"nodes": []})
        assert store.get_turn("req-1").trace["nodes"][0]["status"] == "success" and len(by_key(store)) == 2
        # the trace builder failing rolls the fold back too
        with pytest.raises(RuntimeError):
            store.record_outcome_and_trace(PLANNER, None, [obs("kb-x", 1.0)], "req-1", _fail)
        assert ("kb-x", "") not in by_key(store)
        # a turn no longer stored (its session deleted meanwhile) keeps the fold
        assert store.record_outcome_and_trace(PLANNER, None, [obs("kb-y", 1.0)], "req-gone", trace_of) == 1
        assert ("kb-y", "") in by_key(store)


def _fail(stored: int) -> dict:
    raise RuntimeError("trace not serialisable")
