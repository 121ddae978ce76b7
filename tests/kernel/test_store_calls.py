"""A turn's learned-records read and observations write (kernel/engine/store_calls.py): inline on the
embedded store, where a thread hop costs more than the statement (issue 22), on a worker thread on
PostgreSQL, where each is a server round trip the event loop must not wait for."""

from __future__ import annotations

import threading

import anyio
from mrpvm.kernel.engine.store_calls import store_call
from mrpvm.kernel.store import Store
from mrpvm.protocol.document import Observation


def test_store_calls_run_inline_only_on_the_embedded_store(tmp_path, store_env):
    with Store.open(tmp_path, store_env) as store:
        seen: list[threading.Thread] = []

        def record() -> int:
            seen.append(threading.current_thread())
            obs = Observation(index=1, plugin="kb-fast", task="", success=1.0, latencyMs=3.0)
            return store.record_observations("planner-default", None, [obs])

        async def main() -> tuple[int, list]:
            stored = await store_call(store, record)
            return stored, await store_call(store, store.learned, "planner-default", None, ["kb-fast"])

        stored, learned = anyio.run(main)
        assert stored == 1
        assert [(s.pluginId, s.samples) for s in learned] == [("kb-fast", 1)]
        inline = seen == [threading.main_thread()]
        assert inline == (store.backend == "sqlite")
