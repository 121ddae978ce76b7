"""What a late recordOutcome's trace store costs, in-process, on a copy of a daemon home's database.

    .venv/bin/python bench/trace_rewrite.py HOME/mrpvm.db [--turns 200] [--rounds 3]

In the daemon a recordOutcome usually ends after its turn was committed; its fold and the turn's whole trace
(~13 KB of JSON) are then stored again in one transaction (kernel/store_turns.py `record_outcome_and_trace`).
For the last `--turns` stored turns this times, in CPU µs per turn (best of `--rounds`):

- whole: the trace turned into builtins, encoded and written back (what the kernel does now);
- node: only the finished node encoded and upserted into a side table (what a trace-nodes table would cost);
- patch: SQLite's `json_set` replacing that node inside the stored text (no Python encode of the whole);
- empty: `BEGIN IMMEDIATE` + `COMMIT` alone (the floor every variant pays).

The database given is copied first; the copy is removed at the end.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

ENCODER = msgspec.json.Encoder()
Turn = tuple[str, dict[str, Any]]


def _last_node(trace: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    nodes = trace.get("nodes") or [{}]
    return len(nodes) - 1, nodes[-1]


def variants(db: sqlite3.Connection) -> dict[str, Callable[[Turn], None]]:
    db.execute(
        "CREATE TABLE IF NOT EXISTS bench_trace_nodes (request_id TEXT, node_id TEXT, node TEXT,"
        " PRIMARY KEY (request_id, node_id))"
    )

    def whole(turn: Turn) -> None:
        rid, trace = turn
        text = ENCODER.encode(msgspec.to_builtins(trace))
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE turns SET trace = ? WHERE request_id = ?", (text, rid))
        db.execute("COMMIT")

    def last_node_written(turn: Turn, sql: str, params: Callable[[str, int, dict, bytes], tuple]) -> None:
        """One transaction writing the turn's last trace node (encoded) by `sql`."""
        rid, trace = turn
        index, last = _last_node(trace)
        text = ENCODER.encode(msgspec.to_builtins(last))
        db.execute("BEGIN IMMEDIATE")
        db.execute(sql, params(rid, index, last, text))
        db.execute("COMMIT")

    def node(turn: Turn) -> None:
        last_node_written(
            turn,
            "INSERT OR REPLACE INTO bench_trace_nodes VALUES (?, ?, ?)",
            lambda rid, _index, last, text: (rid, str(last.get("id", "")), text),
        )

    def patch(turn: Turn) -> None:
        last_node_written(
            turn,
            "UPDATE turns SET trace = json_set(trace, ?, json(?)) WHERE request_id = ?",
            lambda rid, index, _last, text: (f"$.nodes[{index}]", text, rid),
        )

    def empty(turn: Turn) -> None:
        db.execute("BEGIN IMMEDIATE")
        db.execute("COMMIT")

    return {"whole": whole, "node": node, "patch": patch, "empty": empty}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("database", type=Path)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.db"
        shutil.copyfile(a.database, copy)
        db = sqlite3.connect(copy, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")  # as kernel/db/sqlite.py
        rows = db.execute(
            "SELECT request_id, trace FROM turns ORDER BY rowid DESC LIMIT ?", (a.turns,)
        ).fetchall()
        if not rows:
            raise SystemExit(f"{a.database}: no stored turns")
        turns = [(rid, msgspec.json.decode(text)) for rid, text in rows]
        sizes = sorted(len(text) for _, text in rows)
        print(f"{len(turns)} turns, trace median {sizes[len(sizes) // 2]} bytes")
        best: dict[str, float] = {}
        for _ in range(a.rounds):
            for name, write in variants(db).items():
                t0 = time.process_time()
                for turn in turns:
                    write(turn)
                per_turn = (time.process_time() - t0) / len(turns) * 1e6
                best[name] = min(best.get(name, per_turn), per_turn)
        db.close()
    for name, us in best.items():
        print(f"{name:6s} {us:7.1f} µs CPU per turn")


if __name__ == "__main__":
    main()
