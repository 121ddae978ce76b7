"""The store keeps what `learned` read (kernel/store_learning.py) and reads again once the records may have
changed: a fold, an import, a restore or a KB's deletion in this process, or a commit by any other
connection (another process, another Store on the same file, another thread), on both backends
(PostgreSQL keeps nothing: every read goes to the server)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from mrpvm.kernel.store import Store
from mrpvm.kernel.store_learning import LearnedRow
from mrpvm.protocol.document import Observation

PLANNER = "planner-default"


def obs(plugin: str, success: float, *, task: str = "") -> Observation:
    return Observation(index=1, plugin=plugin, task=task, success=success, latencyMs=10.0)


def samples(store: Store, kb_id: str | None = None) -> dict[tuple[str, str], int]:
    return {(s.pluginId, s.task): s.samples for s in store.learned(PLANNER, kb_id)}


FOLD_ELSEWHERE = """
import sys
from pathlib import Path
from mrpvm.kernel.store import Store
from mrpvm.protocol.document import Observation
with Store.open(Path(sys.argv[1]), {}) as store:
    store.record_observations(sys.argv[2], None, [Observation(index=1, plugin="kb-fast", success=1.0)])
"""


def test_a_repeated_read_is_served_from_the_cache_on_sqlite(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        store.record_observations(PLANNER, None, [obs("kb-fast", 1.0), obs("gs-symbolic", 0.0)])
        first, again = store.learned(PLANNER, None), store.learned(PLANNER, None)
        assert first == again and len(first) == 2
        assert (first[0] is again[0]) == (store.backend == "sqlite")
        # the plugin filter applies to the kept records, per call
        assert [s.pluginId for s in store.learned(PLANNER, None, ["gs-symbolic"])] == ["gs-symbolic"]
        assert len(store.learned(PLANNER, None)) == 2


def test_this_process_writes_are_seen_by_the_next_read(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        kb = store.create_kb("docs")
        assert samples(store, kb.id) == {}
        store.record_observations(PLANNER, kb.id, [obs("kb-fast", 1.0)])  # a fold
        assert samples(store, kb.id) == {("kb-fast", ""): 1}
        store.record_outcomes_and_traces(PLANNER, kb.id, [([obs("kb-fast", 0.0)], "", None)])  # a batch
        assert samples(store, kb.id) == {("kb-fast", ""): 2}
        snapshot = store.learning_snapshot()
        store.record_observations(PLANNER, kb.id, [obs("kb-fast", 1.0, task="define")])
        assert samples(store, kb.id) == {("kb-fast", ""): 2, ("kb-fast", "define"): 1}
        store.restore_learning(snapshot)  # a restore
        assert samples(store, kb.id) == {("kb-fast", ""): 2}
        stat = store.learned(PLANNER, kb.id)[0]
        store.import_learned("digest-1", PLANNER, None, [stat])  # an import (the session scope)
        assert samples(store) == {("kb-fast", ""): 2}
        store.delete_kb(kb.id)  # a KB's deletion
        assert samples(store, kb.id) == {}


def test_another_processs_fold_is_seen_by_the_next_read(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        store.record_observations(PLANNER, None, [obs("kb-fast", 0.0)])
        assert samples(store) == {("kb-fast", ""): 1}
        if store.backend == "sqlite":
            subprocess.run([sys.executable, "-c", FOLD_ELSEWHERE, str(tmp_path), PLANNER], check=True)
        else:  # another node: a second store on the same server
            with Store.open(tmp_path, store_env) as other:
                other.record_observations(PLANNER, None, [obs("kb-fast", 1.0)])
        assert samples(store) == {("kb-fast", ""): 2}


def test_another_store_or_thread_writing_is_seen_by_the_next_read(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store, Store.open(tmp_path, store_env) as other:
        store.record_observations(PLANNER, None, [obs("kb-fast", 0.0)])
        assert samples(store) == samples(other) == {("kb-fast", ""): 1}
        other.record_observations(PLANNER, None, [obs("kb-fast", 1.0)])  # its own connection
        assert samples(store) == samples(other) == {("kb-fast", ""): 2}
        worker = threading.Thread(
            target=store.record_observations, args=(PLANNER, None, [obs("kb-fast", 1.0)])
        )  # the same store, the thread's own connection
        worker.start()
        worker.join()
        assert samples(store) == samples(other) == {("kb-fast", ""): 3}
        # a restore in the other store empties the records this one read
        other.restore_learning([])
        assert samples(store) == {} and store.learning_snapshot() == []


def test_a_read_racing_a_write_never_keeps_stale_records(tmp_path, store_env):
    """Reads on one thread while another folds: once the writer is done, the reader sees its last fold."""
    with Store.open(tmp_path, store_env) as store:
        done = threading.Event()
        folds = 40

        def write() -> None:
            for _ in range(folds):
                store.record_observations(PLANNER, None, [obs("kb-fast", 1.0)])
                time.sleep(0)
            done.set()

        worker = threading.Thread(target=write)
        worker.start()
        while not done.is_set():
            store.learned(PLANNER, None)
        worker.join()
        assert samples(store) == {("kb-fast", ""): folds}
        rows = store.learning_snapshot()
        assert [r.stat.samples for r in rows] == [folds] and isinstance(rows[0], LearnedRow)
