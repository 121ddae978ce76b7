"""Symbolic chat turns/s and latency for 1 daemon on SQLite, 1 daemon on PostgreSQL and 3 daemons sharing one
PostgreSQL (README "Running on several machines").

Starts a throwaway PostgreSQL cluster (tests/support/pg_support.py: initdb + pg_ctl in a temp folder, a Unix
socket; needs Debian's `postgresql`), then for each setup the daemons (bench/daemon_load.py's start, each
on its own home: separate artifacts, as on separate machines), gives each client session three facts,
warms up, and runs `--turns` non-streaming turns at concurrency `--clients`, the clients spread over the
daemons round-robin (what a balancer without stickiness does). On one 2-core machine three daemons
compete for the same cores, so the 3-daemon figure measures the store's overhead and contention, not the
scale-out a second machine gives.

    .venv/bin/python bench/store_nodes.py [--turns N] [--clients C] [--json]
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))
from daemon_load import FACTS, QUESTIONS, percentile, start_daemon  # noqa: E402


def run_setup(name: str, daemons: int, env: dict[str, str], turns: int, clients: int) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix=f"mrpvm-bench-{name}-"))
    procs = [
        start_daemon(str(tmp / f"home{i}"), {**env, "MRPVM_NODE_ID": f"node-{i}"}) for i in range(daemons)
    ]
    urls = [url for _, url in procs]
    latencies: list[float] = []
    failures = 0

    async def client(n: int, count: int) -> None:
        nonlocal failures
        async with httpx.AsyncClient(base_url=urls[n % len(urls)], timeout=120) as http:
            session = (await http.post("/sessions", json={})).json()["session_id"]
            await http.post(f"/sessions/{session}/context", json={"text": FACTS})
            await http.post("/chat/completions", json={"message": QUESTIONS[0], "session_id": session})
            for turn in range(count):
                started = time.perf_counter()
                url = urls[(n + turn) % len(urls)]  # no stickiness: the next daemon answers the next turn
                reply = await http.post(
                    url + "/chat/completions", json={"message": QUESTIONS[turn % 2], "session_id": session}
                )
                latencies.append((time.perf_counter() - started) * 1000)
                failures += reply.status_code != 200

    async def main() -> float:
        per = [turns // clients + (1 if i < turns % clients else 0) for i in range(clients)]
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for n in range(clients):
                group.start_soon(client, n, per[n])
        return time.perf_counter() - started

    try:
        wall = anyio.run(main)
    finally:
        for proc, _ in procs:
            proc.send_signal(signal.SIGTERM)
        for proc, _ in procs:
            proc.wait(60)
    return {
        f"turns_{name}": len(latencies),
        f"failed_{name}": failures,
        f"turns_per_s_{name}": round(len(latencies) / wall, 2),
        f"p50_ms_{name}": round(percentile(latencies, 0.5), 1),
        f"p99_ms_{name}": round(percentile(latencies, 0.99), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=240)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from pg_support import Cluster

    cluster = Cluster()
    figures: dict[str, float] = {}
    try:
        figures |= run_setup("sqlite_1", 1, {}, args.turns, args.clients)
        for name, daemons in (("pg_1", 1), ("pg_3", 3)):
            database = cluster.new_database()
            figures |= run_setup(
                name, daemons, {"MRPVM_STORE_URL": cluster.url(database)}, args.turns, args.clients
            )
    finally:
        cluster.stop()
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:>22}: {value}")


if __name__ == "__main__":
    main()
