"""Ingest over HTTP into a running daemon (the lexical plugins), per checkout, alternated: what a server
user waits for (upstream MRP-VM's figure for node-crypto.md is 0.25 s in its server, 0.44 s with its save).

    python3 bench/ingest_daemon.py DOC --checkout A [--checkout B …] [--rounds 3] [--sources 3] [--json]

Each round starts a daemon in a fresh home per checkout, creates a KB, then POSTs the document `--sources`
times under different names into it: the first POST meets the new KB (its kb workers start with its
folder bound), the later ones find every worker warm (the steady state of a server). Wall seconds per
POST; prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfkit as pk  # noqa: E402

LEXICAL = "sd-symbolic,kb-fast,kb-thinkingdb,gs-symbolic,planner-default"


async def one_round(checkout: str, doc: Path, sources: int) -> dict:
    os.environ["PERF_OURS"] = checkout
    pk.OURS = Path(checkout).resolve()
    pk.MRPVM = pk.OURS / ".venv" / "bin" / "mrpvm"
    home = pk.new_home("ingdm-")
    daemon = pk.start_ours(home, {"MRPVM_ENABLED_PLUGINS": LEXICAL})
    try:
        client = pk.Client(daemon.port)
        text = doc.read_text()
        await client.json("POST", "/kbs", {"name": "k"})
        sid = (await client.json("POST", "/sessions", {"kb": "k"}))["session_id"]
        walls, units = [], 0
        for i in range(sources):
            t = asyncio.get_running_loop().time()
            reply = await client.json(
                "POST",
                f"/sessions/{sid}/workspace/sources",
                {"text": f"{text}\n\nCopy {i}.\n", "source_name": f"{i}-{doc.name}"},
            )
            walls.append(round(asyncio.get_running_loop().time() - t, 3))
            units = sum(s.get("unit_count", 0) for s in reply.get("sources", []))
        await client.aclose()
        return {"walls": walls, "units": units, "load": pk.loadavg()}
    finally:
        daemon.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("doc")
    ap.add_argument("--checkout", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sources", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    runs: dict[str, list[dict]] = {c: [] for c in a.checkout}
    for r in range(a.rounds):
        for c in a.checkout if r % 2 == 0 else list(reversed(a.checkout)):
            res = asyncio.run(one_round(c, Path(a.doc), a.sources))
            runs[c].append(res)
            if not a.json:
                print(
                    f"round {r + 1} {c}: POST walls {res['walls']} s, {res['units']} units, load {res['load']}"
                )
    summary = {
        c: {
            "first_s_median": statistics.median(x["walls"][0] for x in rs),
            "warm_s_median": statistics.median(w for x in rs for w in x["walls"][1:])
            if a.sources > 1
            else None,
        }
        for c, rs in runs.items()
    }
    print(json.dumps({"runs": runs, "summary": summary}) if a.json else json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
