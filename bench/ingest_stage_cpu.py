"""CPU seconds of each stage of a lexical ingest, in one process: what each role does to a source, without
the processes, pipes and sandbox around it (bench/ingest_breakdown.py times those, in wall seconds).

    CHECKOUT/.venv/bin/python bench/ingest_stage_cpu.py FILE [--json] [--profile STAGE]

Stages, in the order an ingest runs them, each through the same functions the real roles call:

- sd_run            sd-symbolic's worker: decode the normalizePersistentContext request, build the KU tree
                    (and, asked for the compact reply, analyse its units for the kb-plugins), forked
                    children's CPU included
- sd_render         sd-symbolic's worker: the reply's bytes (the SDK's CNL render of a large reply, or the
                    compact MessagePack reply when the checkout's sd-symbolic declares it)
- kernel_parse      the kernel: parse and validate that reply (as the supervisor does for a large reply)
- kernel_tree       the kernel: merge and finish the tree (knowledge/ku_tree.py)
- kernel_units_file the kernel: analyse every unit once (or take sd-symbolic's shipped analysis) and encode
                    the units file (protocol/handoff.py)
- kernel_commit     the kernel: the store's transaction of the source and its units (SQLite, a fresh home)
- <kb>_decode       each kb-plugin: decode the units file
- <kb>_upsert       each kb-plugin: its index write (tantivy + SQLite; kb-thinkingdb's facts), as the SDK
                    runs onSourceText

CPU seconds (time.process_time), and each stage's wall seconds beside them (`_wall_s`: a stage waiting on
the disk or a forked child shows there), so two checkouts can be compared on a loaded machine: run each with its
own venv, alternated, and compare the same stage. --profile STAGE prints a cProfile of that stage.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.kernel.records import SourceRecord
from mrpvm.kernel.store import Store
from mrpvm.knowledge.ku_tree import finish_tree, merge_chunk_trees
from mrpvm.plugins.kb_common.store import KBStore
from mrpvm.plugins.kb_thinkingdb.facts import write_facts
from mrpvm.plugins.sd_symbolic.__main__ import plugin as sd_symbolic
from mrpvm.protocol import analysis
from mrpvm.protocol.cnl import parse_document, render_document
from mrpvm.protocol.envelope import Budget, NormalizePayload, Request, encode_request
from mrpvm.protocol.handoff import decode_handoff, encode_handoff

try:  # what the roles run since the GC pauses (issue 22); an older checkout runs without them
    from mrpvm.plugins.sdk.runtime import render_reply
    from mrpvm.protocol.gc_pause import freeze_startup_objects, paused_gc
except ImportError:
    render_reply = render_document
    paused_gc = contextlib.nullcontext  # type: ignore[assignment]

    def freeze_startup_objects() -> None:
        pass


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--profile", default="", help="a stage name: print its cProfile")
    a = ap.parse_args()
    text = Path(a.file).read_text()
    name = Path(a.file).name
    source_id = "src-" + "".join(c if c.isalnum() else "-" for c in name.lower())
    cpu: dict[str, float] = {}
    wall: dict[str, float] = {}

    def stage(key: str, fn: Callable[[], Any]) -> Any:
        profile = cProfile.Profile() if key == a.profile else None
        start, children, t0 = time.process_time(), _children_cpu(), time.perf_counter()
        if profile is not None:
            profile.enable()
        out = fn()
        if profile is not None:
            profile.disable()
        # with what a forked child (sd-symbolic's second half, halves.py) spent
        cpu[key] = round(time.process_time() - start + _children_cpu() - children, 6)
        wall[key] = round(time.perf_counter() - t0, 6)
        if profile is not None:
            pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return out

    freeze_startup_objects()  # as a worker does after its imports
    manifest = json.loads((PROJECT_ROOT / "manifests" / "sd-symbolic.json").read_text())  # the checkout run
    form = manifest.get("replyForm", "cnl")  # what the kernel asks this checkout's sd-symbolic for
    asked: dict[str, Any] = {} if form == "cnl" else {"replyForm": form}
    request = Request(
        prompt=f"Normalize source {name} (part 1)",
        context=[],
        op="normalizePersistentContext",
        payload=NormalizePayload(
            sourceId=source_id, sourceName=name, sourceType="text", text=text, scope="kb", **asked
        ),
        budget=Budget(deadlineMs=600_000),
    )
    body = encode_request(request)
    doc = stage("sd_run", lambda: sd_symbolic.run(body)[0])
    compact = getattr(sd_symbolic, "compact", False)  # the checkout's sd-symbolic answers MessagePack
    if compact:
        from mrpvm.protocol.cnl_compact import read_compact

        cnl: Any = stage("sd_render", lambda: sd_symbolic.reply_bytes(doc))
    else:
        cnl = stage("sd_render", lambda: render_reply(doc))

    def parse() -> Any:
        if compact:
            return read_compact(cnl, "normalizePersistentContext")
        with paused_gc():
            return parse_document(cnl, op="normalizePersistentContext"), None

    parsed, shipped = stage("kernel_parse", parse)
    shipping = {"shipped": shipped} if shipped is not None else {}  # the analysis sd-symbolic shipped
    units, _ = stage(
        "kernel_tree",
        lambda: finish_tree(source_id, merge_chunk_trees(source_id, [parsed.units]), source_name=name),
    )
    units_file = stage("kernel_units_file", lambda: encode_handoff(source_id, name, text, units, **shipping))
    with tempfile.TemporaryDirectory() as home:  # the kernel's store commit of the source (SQLite)
        kernel_store = Store.open(home)
        kb = kernel_store.create_kb("docs")
        record = SourceRecord(id=source_id, kbId=kb.id, name=name, hash="h", bytes=len(text))
        stage("kernel_commit", lambda: kernel_store.replace_source(kb.id, record, units, text))
        kernel_store.close()
    for plugin_id, hook in (("kb-fast", None), ("kb-thinkingdb", write_facts)):
        analysis._TERMS_CACHE.clear()  # each plugin is its own process
        handed = stage(f"{plugin_id}_decode", lambda: decode_handoff(units_file, source_id))
        with tempfile.TemporaryDirectory() as root:
            store = KBStore(root)

            def upsert(store: KBStore = store, hook: Any = hook, handed: Any = handed) -> Any:
                with paused_gc():
                    return store.upsert(
                        source_id, name, handed.units, hook, summary={}, analysis=handed.analysis
                    )

            stage(f"{plugin_id}_upsert", upsert)
            store.close()
    out = {
        "file": a.file,
        "units": len(units),
        "reply_form": "msgpack" if compact else "cnl",
        "reply_bytes": len(cnl if compact else cnl.encode()),
        "units_file_bytes": len(units_file),
    }
    out |= {f"{k}_cpu_s": v for k, v in cpu.items()}
    out |= {f"{k}_wall_s": v for k, v in wall.items()}
    print(json.dumps(out) if a.json else json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
