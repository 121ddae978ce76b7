"""What shared learning costs (kernel/store_learning.py): folding one outcome's observations into the
store, two nodes folding at once, and reading a planner's records for one `buildPlan`, on SQLite and on
PostgreSQL (a throwaway cluster, tests/support/pg_support.py; skipped with a note when Debian's
`postgresql` is missing), with the size the records add to a buildPlan request.

    .venv/bin/python bench/planner_learning.py [--outcomes N] [--plugins P] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))
from mrpvm.kernel.store import Store  # noqa: E402
from mrpvm.protocol.document import Observation  # noqa: E402

PLANNER = "planner-default"
ACTS = ["define", "describe", "explain", "compare", "recommend", "implement", "identify", "verify"]
KINDS = ["number", "definition", "reason", "procedure"]


def outcome(n: int, plugins: int) -> list[Observation]:
    """One turn's observations: 4 attempts (sd, kb, gs, val), each overall + act + act/answer type."""
    act, kind = ACTS[n % len(ACTS)], KINDS[n % len(KINDS)]
    out = []
    for k in range(4):
        plugin = f"plugin-{(n + k) % plugins}"
        for task in ("", act, f"{act}/{kind}"):
            out.append(
                Observation(index=len(out) + 1, plugin=plugin, task=task, success=(n % 3) / 2, latencyMs=5.0)
            )
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(env: dict[str, str], outcomes: int, plugins: int) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="mrpvm-bench-learning-"))
    stores = [Store.open(home, env | {"MRPVM_NODE_ID": f"node-{i}"}) for i in range(2)]
    try:
        folds: list[float] = []
        for n in range(outcomes):
            started = time.perf_counter()
            stores[0].record_observations(PLANNER, None, outcome(n, plugins))
            folds.append((time.perf_counter() - started) * 1000)
        barrier = threading.Barrier(2)

        def node(store: Store) -> None:
            barrier.wait()
            for n in range(outcomes):
                store.record_observations(PLANNER, None, outcome(n, plugins))

        threads = [threading.Thread(target=node, args=(s,)) for s in stores]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        concurrent_s = time.perf_counter() - started
        reads: list[float] = []
        for _ in range(50):
            started = time.perf_counter()
            learned = stores[1].learned(PLANNER, None)
            reads.append((time.perf_counter() - started) * 1000)
        samples = sum(s.samples for s in learned if s.task == "")
        return {
            "fold_p50_ms": round(percentile(folds, 0.5), 3),
            "fold_p99_ms": round(percentile(folds, 0.99), 3),
            "two_nodes_outcomes_per_s": round(2 * outcomes / concurrent_s, 1),
            "overall_samples": samples,  # 3 * outcomes * 4: no fold lost
            "records": len(learned),
            "read_p50_ms": round(percentile(reads, 0.5), 3),
            "learned_payload_bytes": len(msgspec.json.encode(learned)),
        }
    finally:
        for store in stores:
            store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outcomes", type=int, default=200)
    parser.add_argument("--plugins", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, object] = {"outcomes": args.outcomes, "observations_per_outcome": 12}
    figures["sqlite"] = measure({}, args.outcomes, args.plugins)
    try:
        from pg_support import Cluster

        cluster = Cluster()
    except Exception as err:  # noqa: BLE001 - no server binaries: report SQLite alone
        figures["postgresql"] = f"not measured: {err}"
    else:
        try:
            figures["postgresql"] = measure(
                {"MRPVM_STORE_URL": cluster.url(cluster.new_database())}, args.outcomes, args.plugins
            )
        finally:
            cluster.stop()
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
