"""Symbolic chat turns through the HTTP daemon at concurrency 1 and 8: latency percentiles and throughput.

Starts `mrpvm serve --port 0` (symbolic plugins only: planner-default, sd-symbolic, kb-fast, gs-symbolic;
MRPVM_HOME in a temp dir, removed at the end), gives each client session a small context (three facts),
warms the workers, then runs non-streaming `POST /chat/completions` turns over keep-alive connections.
Latency is what the client sees (HTTP + engine + plugins + commit); `engine_p50_ms` is the engine's own
turn duration and `http_overhead_p50_ms` the client latency minus the turn's time in the daemon
(its Server-Timing header).

The client is a minimal HTTP/1.1 keep-alive client (one write per request, Content-Length replies), so
the figures are the daemon's rather than a client library's. The same turns through `httpx` at
concurrency 1 are reported too (`*_httpx` keys): the difference is httpx's own per-request cost.

    .venv/bin/python bench/daemon_load.py [--turns N] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

FACTS = "The zorblax is a teal bird.\n\nThe zorblax lives in Norway.\n\nThe zorblax eats blue fish.\n"
QUESTIONS = ["What does the zorblax eat?", "Where does the zorblax live?"]
PLUGINS = "sd-symbolic,planner-default,kb-fast,gs-symbolic"
TURNS_PER_SESSION = 10

Post = Callable[[str, dict], Awaitable[tuple[int, dict[str, str], bytes]]]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def start_daemon(home: str, extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env |= {
        "MRPVM_HOME": home,
        "MRPVM_ENABLED_PLUGINS": PLUGINS,
        "MRPVM_PLUGIN_ALLOWLIST": "",
        "MRPVM_WRAPPER_FOLDERS": "",
        **(extra_env or {}),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "mrpvm.shells.cli.main", "serve", "--port", "0"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("mrpvm: serving on "):
            # keep reading stderr so a chatty daemon never blocks on a full pipe
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, line.split()[3]
    proc.kill()
    proc.wait(30)
    raise SystemExit("the daemon did not start")


class RawClient:
    """One keep-alive HTTP/1.1 connection: a request is one write; replies must carry Content-Length."""

    def __init__(self, url: str):
        host, _, port = url.split("//", 1)[1].rstrip("/").rpartition(":")
        self.host, self.port = host.strip("[]"), int(port)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: dict) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = json.dumps(body).encode()
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nhost: {self.host}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(data)}\r\n\r\n".encode()
            + data
        )
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        headers = {}
        for line in head[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        return status, headers, await self.reader.readexactly(int(headers["content-length"]))

    async def aclose(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()


def httpx_post(client: httpx.AsyncClient) -> Post:
    async def post(path: str, body: dict) -> tuple[int, dict[str, str], bytes]:
        reply = await client.post(path, json=body)
        return reply.status_code, dict(reply.headers), reply.content

    return post


async def checked(post: Post, path: str, body: dict) -> tuple[dict[str, str], dict[str, Any]]:
    status, headers, data = await post(path, body)
    if status >= 300:
        raise SystemExit(f"POST {path} answered {status}: {data[:300]!r}")
    return headers, json.loads(data)


async def session(post: Post) -> str:
    sid = (await checked(post, "/sessions", {}))[1]["session_id"]
    await checked(post, f"/sessions/{sid}/context", {"text": FACTS})
    return sid


async def run_level(posts: list[Post], turns: int) -> dict:
    """One client per post function, each on its own sessions; a client starts a fresh session every
    TURNS_PER_SESSION turns (outside the timing) so every session stays small."""
    concurrency = len(posts)
    warm = await session(posts[0])
    for q in QUESTIONS:  # warm-up: start the workers, walk every path once
        await checked(posts[0], "/chat/completions", {"message": q, "session_id": warm, "stream": False})
    latencies: list[float] = []
    engine: list[float] = []
    overhead: list[float] = []
    per_client = max(1, turns // concurrency)
    paused = [0.0]

    async def worker(offset: int) -> None:
        post = posts[offset]
        sid = ""
        for i in range(per_client):
            if i % TURNS_PER_SESSION == 0:
                pause = time.perf_counter()
                sid = await session(post)
                paused[0] += time.perf_counter() - pause if concurrency == 1 else 0.0
            body = {"message": QUESTIONS[(i + offset) % 2], "session_id": sid, "stream": False}
            start = time.perf_counter()
            status, headers, data = await post("/chat/completions", body)
            latencies.append((time.perf_counter() - start) * 1000.0)
            reply = json.loads(data)
            if status != 200 or reply["status"] != "success":
                raise SystemExit(f"a bench turn did not succeed: {status} {reply.get('status')}")
            engine.append(reply["duration_ms"])
            overhead.append(latencies[-1] - float(headers["server-timing"].split("dur=")[1]))

    began = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    elapsed = time.perf_counter() - began - paused[0]  # at concurrency 1, session setup is not turn time
    return {
        "turns": len(latencies),
        "p50_ms": round(statistics.median(latencies), 3),
        "p90_ms": round(percentile(latencies, 0.9), 3),
        "turns_per_s": round(len(latencies) / elapsed, 1),
        "engine_p50_ms": round(statistics.median(engine), 3),
        "http_overhead_p50_ms": round(statistics.median(overhead), 3),
    }


async def measure(turns: int, url: str) -> dict:
    clients = [RawClient(url) for _ in range(8)]
    try:
        c1 = await run_level([clients[0].post], turns)
        c8 = await run_level([c.post for c in clients], turns)
    finally:
        for client in clients:
            await client.aclose()
    async with httpx.AsyncClient(base_url=url, timeout=30.0) as client:
        c1_httpx = await run_level([httpx_post(client)], turns)
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
        "turn_p50_ms_c1_httpx": c1_httpx["p50_ms"],
        "http_overhead_p50_ms_c1_httpx": c1_httpx["http_overhead_p50_ms"],
        "turns_c1": c1["turns"],
        "turns_c8": c8["turns"],
        "goal_turn_p50_ms_c1": 5.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="turns per concurrency level")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="mrpvm-daemon-bench-")
    proc = None
    try:
        proc, url = start_daemon(home)
        figures = asyncio.run(measure(args.turns, url))
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
        shutil.rmtree(home, ignore_errors=True)
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
    print(
        f"  the same through httpx at concurrency 1: p50 {figures['turn_p50_ms_c1_httpx']:.2f} ms "
        f"(overhead {figures['http_overhead_p50_ms_c1_httpx']:.2f} ms)"
    )


if __name__ == "__main__":
    main()
