"""Symbolic chat turns through the HTTP daemon at concurrency 1 and 8: latency percentiles and throughput.

Starts `mrpvm serve --port 0` (symbolic plugins only: planner-default, sd-symbolic, kb-fast, gs-symbolic;
MRPVM_HOME in a temp dir), gives each client session a small context (three facts), warms the workers, then
runs non-streaming `POST /chat/completions` turns over keep-alive connections. Latency is what the client
sees (HTTP + engine + plugins + commit); `engine_p50_ms` is the engine's own turn duration for comparison.

    .venv/bin/python bench/daemon_load.py [--turns N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import anyio
import httpx

FACTS = "The zorblax is a teal bird.\n\nThe zorblax lives in Norway.\n\nThe zorblax eats blue fish.\n"
QUESTIONS = ["What color is the zorblax?", "Where does the zorblax live?"]
PLUGINS = "sd-symbolic,planner-default,kb-fast,gs-symbolic"
TURNS_PER_SESSION = 10


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def start_daemon(home: str) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env |= {
        "MRPVM_HOME": home,
        "MRPVM_ENABLED_PLUGINS": PLUGINS,
        "MRPVM_PLUGIN_ALLOWLIST": "",
        "MRPVM_WRAPPER_FOLDERS": "",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "mrpvm.kernel.cli", "serve", "--port", "0"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("mrpvm: serving on "):
            return proc, line.split()[3]
    raise SystemExit("the daemon did not start")


async def session(client: httpx.AsyncClient) -> str:
    sid = (await client.post("/sessions", json={})).json()["session_id"]
    (await client.post(f"/sessions/{sid}/context", json={"text": FACTS})).raise_for_status()
    return sid


async def run_level(client: httpx.AsyncClient, concurrency: int, turns: int) -> dict:
    """`concurrency` clients, each on its own sessions; a client starts a fresh session every
    TURNS_PER_SESSION turns (outside the timing) so every session stays small."""
    warm = await session(client)
    for q in QUESTIONS:  # warm-up: start the workers, walk every path once
        (
            await client.post("/chat/completions", json={"message": q, "session_id": warm, "stream": False})
        ).raise_for_status()
    latencies: list[float] = []
    engine: list[float] = []
    overhead: list[float] = []
    per_client = max(1, turns // concurrency)
    busy = [0.0]

    async def worker(offset: int) -> None:
        sid = ""
        for i in range(per_client):
            if i % TURNS_PER_SESSION == 0:
                pause = time.perf_counter()
                sid = await session(client)
                busy[0] += time.perf_counter() - pause if concurrency == 1 else 0.0
            body = {"message": QUESTIONS[(i + offset) % 2], "session_id": sid, "stream": False}
            start = time.perf_counter()
            reply = await client.post("/chat/completions", json=body)
            latencies.append((time.perf_counter() - start) * 1000.0)
            reply.raise_for_status()
            data = reply.json()
            if data["status"] != "success":
                raise SystemExit(f"a bench turn did not succeed: {data['status']}")
            engine.append(data["duration_ms"])
            server_turn = float(reply.headers["server-timing"].split("dur=")[1])
            overhead.append(latencies[-1] - server_turn)

    began = time.perf_counter()
    async with anyio.create_task_group() as group:
        for n in range(concurrency):
            group.start_soon(worker, n)
    elapsed = time.perf_counter() - began - busy[0]  # at concurrency 1, session setup is not turn time
    return {
        "turns": len(latencies),
        "p50_ms": round(statistics.median(latencies), 3),
        "p90_ms": round(percentile(latencies, 0.9), 3),
        "turns_per_s": round(len(latencies) / elapsed, 1),
        "engine_p50_ms": round(statistics.median(engine), 3),
        "http_overhead_p50_ms": round(statistics.median(overhead), 3),
    }


async def measure(turns: int, url: str) -> dict:
    async with httpx.AsyncClient(
        base_url=url, timeout=30.0, limits=httpx.Limits(max_connections=16)
    ) as client:
        c1 = await run_level(client, 1, turns)
        c8 = await run_level(client, 8, turns)
    return {
        "turn_p50_ms_c1": c1["p50_ms"],
        "turn_p90_ms_c1": c1["p90_ms"],
        "turns_per_s_c1": c1["turns_per_s"],
        "engine_p50_ms_c1": c1["engine_p50_ms"],
        "http_overhead_p50_ms_c1": c1["http_overhead_p50_ms"],
        "turn_p50_ms_c8": c8["p50_ms"],
        "turn_p90_ms_c8": c8["p90_ms"],
        "turns_per_s_c8": c8["turns_per_s"],
        "engine_p50_ms_c8": c8["engine_p50_ms"],
        "turns_c1": c1["turns"],
        "turns_c8": c8["turns"],
        "goal_turn_p50_ms_c1": 5.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="turns per concurrency level")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mrpvm-daemon-bench-") as home:
        proc, url = start_daemon(home)
        try:
            figures = anyio.run(measure, args.turns, url)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"daemon turns (symbolic plugins, small session), {figures['turns_c1']} / {figures['turns_c8']} turns"
    )
    for level in ("c1", "c8"):
        print(
            f"  concurrency {level[1:]}: p50 {figures[f'turn_p50_ms_{level}']:.2f} ms, "
            f"p90 {figures[f'turn_p90_ms_{level}']:.2f} ms, {figures[f'turns_per_s_{level}']:.0f} turns/s "
            f"(engine p50 {figures[f'engine_p50_ms_{level}']:.2f} ms)"
        )
    print(
        f"  daemon overhead at concurrency 1 (client latency - the turn's time in the daemon): "
        f"p50 {figures['http_overhead_p50_ms_c1']:.2f} ms"
    )


if __name__ == "__main__":
    main()
