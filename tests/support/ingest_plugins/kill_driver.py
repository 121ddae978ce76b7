"""A kernel process for the SIGKILL test: re-ingests one source, alternating two versions, until killed.

    python kill_driver.py HOME MANIFESTS_DIR VERSION_A_FILE VERSION_B_FILE START_INDEX [SD_PLUGIN]

Prints (flushed) `normalizing N`, `writing N` right before the store transaction, `written N` after it,
and `committed N HASH` once the kb-plugins were told. SQLite writes are slowed by a progress handler (real writes, just slower), so a kill sent after
`writing` lands inside the transaction.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path

import anyio
from mrpvm.kernel import store as store_module
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source

_original_conn = store_module.Store._conn
_original_replace = store_module.Store.replace_source


def _slow_conn(self: store_module.Store) -> sqlite3.Connection:
    conn = _original_conn(self)
    if not getattr(conn, "_slowed", False):
        conn.set_progress_handler(lambda: time.sleep(0.0005) or 0, 1000)
    return conn


def _announced_replace(self, kb_id, source, units, *args, **kwargs):
    print(f"writing {os.environ['DRIVER_INDEX']}", flush=True)
    stored = _original_replace(self, kb_id, source, units, *args, **kwargs)
    print(f"written {os.environ['DRIVER_INDEX']}", flush=True)
    return stored


store_module.Store._conn = _slow_conn  # type: ignore[method-assign]
store_module.Store.replace_source = _announced_replace  # type: ignore[method-assign]


async def main() -> None:
    home, manifests, file_a, file_b, start = sys.argv[1:6]
    sd = sys.argv[6] if len(sys.argv) > 6 else "test-sd-big"
    versions = [Path(file_a).read_text(), Path(file_b).read_text()]
    env = dict(os.environ, MRPVM_HOME=home, MRPVM_ENABLED_PLUGINS=f"{sd},test-kb")
    ctx = await open_context(env, manifests_dir=Path(manifests))
    try:
        kb = ctx.store.find_kb("docs") or ctx.store.create_kb("docs")
        index = int(start)
        while True:
            os.environ["DRIVER_INDEX"] = str(index)
            print(f"normalizing {index}", flush=True)
            result = await ingest_source(ctx, kb, "source.md", versions[index % 2], sd_plugin=sd)
            print(f"committed {index} {result.hash}", flush=True)
            index += 1
    finally:
        await ctx.aclose()


if __name__ == "__main__":
    anyio.run(main)
