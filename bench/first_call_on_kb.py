#!/usr/bin/env python3
"""A daemon's first call of a planner on a KB created after the daemon started (issue 22, session 28 perf44).

    PERF_OURS=CHECKOUT python3 bench/first_call_on_kb.py LABEL

A fresh home and daemon; a KB, a session, examples/tessel-build.md ingested; two turns (planner-default
leads), then the same two with planner-depth pinned. Prints each turn's wall ms and its buildPlan ms. Before
KernelContext.warm_kb, a plugin's first call naming the new KB's artifacts folder retired its warm sandboxed
workers and waited for fresh ones (planner-depth buildPlan 410-510 ms); after, ~20-30 ms.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfkit as pk  # noqa: E402

TURNS = [
    ("How do I build the project?", None),
    ("What does the build produce?", None),
    ("How do I build the project?", "planner-depth"),
    ("What does the build produce?", "planner-depth"),
]


async def main() -> None:
    home = pk.new_home("first-call-")
    d = pk.start_ours(home, {})
    try:
        c = pk.Client(d.port)
        await c.json("POST", "/kbs", {"name": "k"})
        sid = (await c.json("POST", "/sessions", {"kb": "k"}))["session_id"]
        text = (pk.OURS / "examples" / "tessel-build.md").read_text()
        await c.json("POST", f"/sessions/{sid}/workspace/sources", {"text": text, "source_name": "t.md"})
        out = []
        for q, pin in TURNS:
            body: dict = {"message": q, "session_id": sid, "stream": False}
            if pin:
                body["planner_plugin"] = pin
            t = time.perf_counter()
            _, _, payload = await c.request("POST", "/chat/completions", body)
            nodes = json.loads(payload)["execution_trace"]["nodes"]
            plans = [
                (f"{n['pluginId']}.{n['op']}", round(n.get("durationMs") or 0.0, 1))
                for n in nodes
                if n.get("kind") == "plugin" and n.get("op") == "buildPlan"
            ]
            out.append((pin or "-", round((time.perf_counter() - t) * 1e3), plans))
            await asyncio.sleep(2)
        await c.aclose()
        print(sys.argv[1] if len(sys.argv) > 1 else "ours", out, flush=True)
    finally:
        d.stop()


if __name__ == "__main__":
    asyncio.run(main())
