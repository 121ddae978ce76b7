"""Children that escape their plugin: how many are still alive after N calls, with and without the sandbox.

Each call asks the fault-matrix plugin (tests/support/plugins/misbehave.py) to start a child that calls setsid
(its own session, out of the plugin's process group) and sleeps. The figure is the number of those
children alive right after the N calls (the supervisor still open, warm workers still running) and after
the supervisor closed. The sandbox (bubblewrap, pid namespace) should give 0 and 0; without it a one-shot
plugin's escaped children outlive it (the figure the issue measured: 400 after 400 turns). Counts, not
times. Children left by the unsandboxed runs are killed at the end.

    .venv/bin/python bench/orphans.py [--calls 400] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))


async def settle(marker: str, within_s: float = 3.0) -> int:
    from supervisor_support import processes_with

    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while processes_with(marker) and loop.time() < end:
        await asyncio.sleep(0.05)
    return len(processes_with(marker))


async def run(registry, plugin: str, mode: str, calls: int) -> dict[str, int | str]:
    from mrpvm.kernel.config import SandboxConfig
    from mrpvm.kernel.supervisor import Supervisor
    from mrpvm.kernel.supervisor.sandbox import Sandbox
    from supervisor_support import limits, processes_with, request

    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"  # the sleep duration: the children's fingerprint
    sandbox = Sandbox(SandboxConfig(mode=mode))  # type: ignore[arg-type]
    async with Supervisor(registry, limits=limits(), sandbox=sandbox) as sup:
        for _ in range(calls):
            await sup.call(plugin, request(f"escape:{marker}"))
        open_count = await settle(marker) if sandbox.active else len(processes_with(marker))
    closed_count = await settle(marker, 1.0)
    for pid in processes_with(marker):
        os.kill(pid, signal.SIGKILL)
    return {
        "plugin": plugin,
        "sandbox": "bubblewrap" if sandbox.active else "off",
        "calls": calls,
        "aliveAfterCalls": open_count,
        "aliveAfterClose": closed_count,
    }


async def main_async(calls: int) -> list[dict[str, int | str]]:
    from supervisor_support import build_registry

    folder = Path(tempfile.mkdtemp(prefix="mrpvm-orphans-"))
    try:
        registry = build_registry(folder / "plugins")
        rows = []
        for mode in ("auto", "off"):
            for plugin in ("bad-oneshot", "bad-worker"):
                rows.append(await run(registry, plugin, mode, calls))
        return rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = asyncio.run(main_async(args.calls))
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'plugin':14}{'sandbox':12}{'calls':>7}{'alive after calls':>20}{'alive after close':>20}")
    for row in rows:
        print(
            f"{row['plugin']:14}{row['sandbox']:12}{row['calls']:>7}"
            f"{row['aliveAfterCalls']:>20}{row['aliveAfterClose']:>20}"
        )


if __name__ == "__main__":
    main()
