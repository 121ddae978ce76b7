"""Two of the daemon's per-turn costs measured in-process on a copy of a daemon home (CPU µs, best of rounds).

    .venv/bin/python bench/daemon_cuts.py HOME [--turns 300] [--reads 2000] [--rounds 5]

- trace: what a turn spends encoding its trace (~20 KB) at the commit and in its HTTP answer, for the last
  `--turns` stored traces: `before` = the dict built from the structs, encoded for the store, encoded
  again in the answer; `after` = encoded once from the structs (`TraceRecorder.to_json`), the answer
  copying those bytes in (`msgspec.Raw`).
- learned: one `Store.learned` read of the busiest (planner, KB) in the home: `miss` = read from the
  database (what every read cost before), `hit` = kept from the last read (the data version checked).

HOME is a `daemon_kb_load.py --home` folder (its mrpvm.db is copied first; the copy is removed at the end).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
from mrpvm.kernel.store import Store
from mrpvm.kernel.trace import Trace

ENCODER = msgspec.json.Encoder()


def best_us(fn: Callable[[], object], rounds: int, per: int) -> float:
    out = []
    for _ in range(rounds):
        t = time.process_time()
        fn()
        out.append((time.process_time() - t) * 1e6 / per)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("home")
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("mrpvm.db", "mrpvm.db-wal"):
            if (Path(a.home) / name).exists():
                shutil.copy(Path(a.home) / name, Path(tmp) / name)
        with Store.open(Path(tmp), {}) as store:
            conn = store._conn()
            rows = conn.execute("SELECT trace FROM turns ORDER BY rowid DESC LIMIT ?", (a.turns,)).fetchall()
            traces = [msgspec.json.decode(r[0], type=Trace) for r in rows]

            def before() -> None:
                for t in traces:
                    built = msgspec.to_builtins(t)
                    ENCODER.encode(built)  # the commit's row
                    ENCODER.encode({"execution_trace": built})  # the HTTP answer

            def after() -> None:
                for t in traces:
                    raw = ENCODER.encode(t)  # the commit's row
                    ENCODER.encode({"execution_trace": msgspec.Raw(raw)})  # the HTTP answer

            assert all(ENCODER.encode(msgspec.to_builtins(t)) == ENCODER.encode(t) for t in traces)
            size = sum(len(r[0]) for r in rows) / max(1, len(rows))
            print(f"trace: {len(traces)} traces, {size / 1000:.1f} KB on average")
            print(f"  before {best_us(before, a.rounds, len(traces)):.1f} µs a turn")
            print(f"  after  {best_us(after, a.rounds, len(traces)):.1f} µs a turn")

            busiest = conn.execute(
                "SELECT planner_id, kb_key, count(*) FROM planner_utility GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1"
            ).fetchone()
            if busiest is None:
                return
            planner, kb, records = busiest
            ids = sorted({r[0] for r in conn.execute("SELECT plugin_id FROM planner_utility")})

            def misses() -> None:
                for _ in range(a.reads):
                    store._learning_written()  # as a fold would: the next read goes to the database
                    store.learned(planner, kb or None, ids)

            def hits() -> None:
                for _ in range(a.reads):
                    store.learned(planner, kb or None, ids)

            print(f"learned: {planner} / {kb or '(no KB)'}: {records} records")
            print(f"  miss {best_us(misses, a.rounds, a.reads):.1f} µs a read")
            print(f"  hit  {best_us(hits, a.rounds, a.reads):.1f} µs a read")


if __name__ == "__main__":
    main()
