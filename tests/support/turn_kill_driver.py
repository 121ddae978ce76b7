"""A kernel process for tests/kernel/test_store_crash.py: runs one chat turn over the scripted engine plugins.

    python turn_kill_driver.py MESSAGE [SESSION_ID]

The environment carries MRPVM_HOME, the enabled plugins and MRPVM_TEST_SCRIPT/LOG (passed on to the
plugins); MRPVM_TEST_PAUSE_IN_COMMIT makes the store hold the turn's transaction open (see
kernel/store.py). Prints `opened` once the kernel is up and `committed REQUEST_ID SESSION_ID STATUS` after
the turn; the test kills it in between.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.knowledge.context import open_context

ENGINE_PLUGINS = Path(__file__).resolve().parent / "engine_plugins"


async def main() -> None:
    message = sys.argv[1]
    session_id = sys.argv[2] if len(sys.argv) > 2 else None
    ctx = await open_context(manifests_dir=ENGINE_PLUGINS)
    try:
        print("opened", flush=True)
        result = await run_turn(ctx, TurnRequest(message=message, session_id=session_id))
        print("committed", result.request_id, result.session_id, result.status, flush=True)
    finally:
        await ctx.aclose()


if __name__ == "__main__":
    anyio.run(main)
