"""The kernel's CNL reply parse, in-process, per plugin op: CPU µs per reply on recorded replies.

    CHECKOUT/.venv/bin/python bench/reply_parse.py DIR [--rounds 15] [--passes 40]

DIR holds `<plugin>.<op>.<n>[.reply].md` (`daemon_kb_load.py --requests DIR` writes them:
daemon_requests.py; tests/protocol/replies holds a few). Each reply runs through `parse_document(text, op)`
as `Supervisor._call` does, the fast path's unit memory warm (a daemon's is); the figure is the best of `--rounds` rounds of `--passes`
passes, so that two checkouts run one after the other on a shared machine can be compared. Also prints
how many replies the fast path takes and, with the turn's calls per op from DIR/calls.json, µs a turn.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time

from mrpvm.protocol import cnl
from mrpvm.protocol.cnl_fastpath import parse_fast


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--passes", type=int, default=40)
    a = ap.parse_args()
    by_op: dict[tuple[str, str], list[str]] = {}
    for path in sorted(glob.glob(os.path.join(a.dir, "*.md"))):
        plugin, op = os.path.basename(path).split(".")[:2]
        with open(path, encoding="utf-8") as f:
            by_op.setdefault((plugin, op), []).append(f.read())
    calls_path = os.path.join(a.dir, "calls.json")
    calls = json.load(open(calls_path)) if os.path.exists(calls_path) else {}  # noqa: SIM115
    turns = max((v["calls"] for k, v in calls.items() if k.endswith(".buildPlan")), default=0)
    total = 0.0
    for (plugin, op), texts in sorted(by_op.items()):
        for text in texts:
            cnl.parse_document(text, op)
        best = float("inf")
        for _ in range(a.rounds):
            t = time.process_time()
            for _ in range(a.passes):
                for text in texts:
                    cnl.parse_document(text, op)
            best = min(best, (time.process_time() - t) / (a.passes * len(texts)))
        fast = sum(parse_fast(text, op) is not None for text in texts)
        per_turn = ""
        count = calls.get(f"{plugin}.{op}", {}).get("calls", 0)
        if turns and count:
            share = best * 1e6 * count / turns
            total += share
            per_turn = f", {share:.1f} µs a turn ({count / turns:.2f} calls)"
        print(f"{plugin}.{op}: {len(texts)} replies, fast path {fast}, {best * 1e6:.1f} µs a reply{per_turn}")
    if turns:
        print(f"all ops: {total:.1f} µs a turn ({turns} turns)")


if __name__ == "__main__":
    main()
