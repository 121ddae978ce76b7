"""The units file's encode alone, and beside the store's commit in another thread (one process, as an ingest's
kernel runs them): how long the kb calls' last step takes in wall when the commit's thread shares the GIL with it.

    CHECKOUT/.venv/bin/python bench/handoff_beside_commit.py FILE [--rounds 5] [--json]

Builds the source's units once (sd-symbolic in-process, its compact reply parsed as the kernel does), then per
round, alternated: "alone" (the encode, then the commit: the order knowledge/in_flight.py uses since session
24) and "beside" (the commit's thread started, then the encode in a second thread: the order before). Prints
the encode's wall and CPU (its thread's) and the commit's wall per round; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import Store
from mrpvm.knowledge.ku_tree import finish_tree, merge_chunk_trees
from mrpvm.plugins.sd_symbolic.__main__ import plugin as sd_symbolic
from mrpvm.protocol.cnl_compact import read_compact
from mrpvm.protocol.envelope import Budget, NormalizePayload, Request, encode_request
from mrpvm.protocol.gc_pause import paused_gc
from mrpvm.protocol.handoff import encode_handoff


def units_of(text: str, name: str, source_id: str) -> tuple[list[Any], Any]:
    request = Request(
        prompt=f"Normalize source {name} (part 1)",
        context=[],
        op="normalizePersistentContext",
        payload=NormalizePayload(
            sourceId=source_id, sourceName=name, sourceType="text", text=text, scope="kb", replyForm="msgpack"
        ),
        budget=Budget(deadlineMs=600_000),
    )
    doc = sd_symbolic.run(encode_request(request))[0]
    parsed, shipped = read_compact(sd_symbolic.reply_bytes(doc), "normalizePersistentContext")
    units, _ = finish_tree(source_id, merge_chunk_trees(source_id, [parsed.units]), source_name=name)
    return units, shipped


def one_round(beside: bool, text: str, name: str, source_id: str, units: list[Any], shipped: Any) -> dict:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as home:
        store = Store.open(home)
        kb = store.create_kb("docs")
        record = SourceRecord(id=source_id, kbId=kb.id, name=name, hash="h", bytes=len(text))

        def commit() -> None:
            t = time.perf_counter()
            store.replace_source(kb.id, record, units, text)
            out["commit_wall_s"] = time.perf_counter() - t

        def encode() -> None:
            t, c = time.perf_counter(), time.thread_time()
            encode_handoff(source_id, name, text, units, shipped=shipped)
            out["encode_wall_s"], out["encode_cpu_s"] = time.perf_counter() - t, time.thread_time() - c

        with paused_gc():  # as `mrpvm ingest` runs a source
            if beside:
                committing = threading.Thread(target=commit)
                committing.start()
                encoding = threading.Thread(target=encode)
                encoding.start()
                encoding.join()
                committing.join()
            else:
                encoding = threading.Thread(target=encode)
                encoding.start()
                encoding.join()
                commit()
        store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    text = Path(a.file).read_text()
    name = Path(a.file).name
    source_id = "src-" + "".join(c if c.isalnum() else "-" for c in name.lower())
    units, shipped = units_of(text, name, source_id)
    rows: dict[str, list[dict]] = {"alone": [], "beside": []}
    for _ in range(a.rounds):
        for mode in ("beside", "alone"):
            row = one_round(mode == "beside", text, name, source_id, units, shipped)
            rows[mode].append(row)
            if not a.json:
                print(mode, {k: round(v, 4) for k, v in row.items()}, flush=True)
    summary = {
        mode: {key: round(statistics.median(r[key] for r in got), 4) for key in got[0]}
        for mode, got in rows.items()
    }
    print(json.dumps({"units": len(units), "median": summary}, indent=None if a.json else 2))


if __name__ == "__main__":
    main()
