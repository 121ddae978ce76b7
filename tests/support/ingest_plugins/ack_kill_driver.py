"""A kernel process for the half-landed-ingest test: ingests one source with the built-in plugins and
stops (announced on stdout, then asleep) at one point, where the test SIGKILLs it.

    python ack_kill_driver.py HOME SOURCE_FILE POINT

POINT: `normalizing` (the sd-plugin is working: nothing stored yet), `committed` (the store transaction
is done, no acknowledgement recorded), `acked-one` (one kb-plugin's acknowledgement recorded, the others
not), `indexed` (every kb-plugin indexed the source, whose commit has not run: knowledge/in_flight.py),
`done` (the ingest finished). Prints `at POINT` when there.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import anyio
from mrpvm.kernel import store as store_module
from mrpvm.knowledge import in_flight, index_ledger, ingest
from mrpvm.knowledge.context import open_context

ENABLED = "sd-symbolic,planner-default,kb-fast,kb-balanced,gs-symbolic"
POINT = sys.argv[3]


def stop_here() -> None:
    print(f"at {POINT}", flush=True)
    time.sleep(600)


_normalize = ingest.normalize_text
_replace = store_module.Store.replace_source
_ack = index_ledger.record_ack
_first_ack = threading.Lock()


async def normalize_then_stop(*args, **kwargs):
    if POINT == "normalizing":
        await anyio.to_thread.run_sync(stop_here)
    return await _normalize(*args, **kwargs)


_notify = in_flight.notify_source


async def notify_then_stop(*args, **kwargs):
    told = await _notify(*args, **kwargs)
    if POINT == "indexed":
        await anyio.to_thread.run_sync(stop_here)
    return told


def replace_then_stop(self, *args, **kwargs):
    if POINT == "indexed":  # the commit waits for the kill
        time.sleep(600)
    stored = _replace(self, *args, **kwargs)
    if POINT == "committed":
        stop_here()
    return stored


def ack_then_stop(*args, **kwargs):
    with _first_ack:  # the first acknowledgement is written, the others wait behind it forever
        done = _ack(*args, **kwargs)
        if POINT == "acked-one":
            stop_here()
    return done


ingest.normalize_text = normalize_then_stop
store_module.Store.replace_source = replace_then_stop  # type: ignore[method-assign]
index_ledger.record_ack = ack_then_stop
in_flight.notify_source = notify_then_stop


async def main() -> None:
    home, source = sys.argv[1:3]
    env = dict(os.environ, MRPVM_HOME=home, MRPVM_ENABLED_PLUGINS=ENABLED)
    ctx = await open_context(env)
    try:
        kb = ctx.store.find_kb("docs") or ctx.store.create_kb("docs")
        await ingest.ingest_source(ctx, kb, "relay.md", Path(source).read_text())
        if POINT == "done":
            await anyio.to_thread.run_sync(stop_here)
    finally:
        await ctx.aclose()


if __name__ == "__main__":
    anyio.run(main)
