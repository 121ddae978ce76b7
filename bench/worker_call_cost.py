#!/usr/bin/env python3
"""What one warm-worker call costs the plugin's process, and which request fields it pays for.

    CHECKOUT/.venv/bin/python bench/worker_call_cost.py DIR/planner-default.buildPlan.*.json
        [--calls 2000] [--gap 0.005] [--fields]

Bodies come from `daemon_kb_load.py --requests DIR` (daemon_requests.py); the plugin is found from the file
name as in replay_request.py. Prints the plugin's CPU per call three ways:
- in-process: `Plugin.run` plus the reply's bytes (`reply_bytes`), hot, no process boundary;
- in-process with `--gap` seconds asleep between calls: no process boundary either, but the caches this
  process left are evicted by whatever runs meanwhile (session 32: this alone is 2-3x the hot figure, and
  within ~0.1-0.2 ms of the spaced worker's: a worker's extra cost in a daemon is mostly that refill);
- worker, back to back: the plugin started as a worker (`MRPVM_WORKER=1`, not sandboxed) and driven over
  its pipes with framed requests, the next sent as soon as a reply is read (its /proc CPU);
- worker, with `--gap` seconds between calls (as a daemon's worker waits between turns).
The difference is what a call costs beyond its work: reading and writing the frames, and the wake-up and
cold caches of a process that slept while others ran. `--fields`: the decode of each top-level payload
field (the request's decode with the field left out, against the whole request), e.g. what a buildPlan's
`descriptors` and `learned` cost the planner to read.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from typing import Any

from mrpvm.protocol.envelope import RequestError, decode_request
from mrpvm.protocol.framing import encode_frame


def _proc_cpu(pid: int) -> float:
    """Seconds the process's main thread has run (/proc/PID/schedstat: ns, not /proc/PID/stat's 10 ms
    ticks, which a few hundred sub-millisecond calls would round away)."""
    with open(f"/proc/{pid}/schedstat") as fh:
        return int(fh.read().split()[0]) / 1e9


class _Worker:
    """The plugin as a warm worker over pipes (no sandbox), one framed request at a time."""

    def __init__(self, module: str):
        env = dict(os.environ, MRPVM_WORKER="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0
        )
        self.seq = 0

    def call(self, body: bytes) -> None:
        self.seq += 1
        request = json.loads(body)
        request["id"] = self.seq
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(encode_frame(json.dumps(request).encode()))
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            header += self.proc.stdout.read(1)
        length = int(header.split(b":", 1)[1].split(b"\r", 1)[0])
        got = b""
        while len(got) < length:
            got += self.proc.stdout.read(length - len(got))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def worker_ms(module: str, bodies: list[bytes], calls: int, gap: float) -> float:
    worker = _Worker(module)
    try:
        for body in bodies * 3:  # warm: imports done, caches filled
            worker.call(body)
        before = _proc_cpu(worker.proc.pid)
        for i in range(calls):
            worker.call(bodies[i % len(bodies)])
            if gap:
                time.sleep(gap)
        return (_proc_cpu(worker.proc.pid) - before) * 1000 / calls
    finally:
        worker.close()


def in_process_ms(plugin: Any, bodies: list[bytes], calls: int, gap: float = 0.0) -> float:
    """CPU ms per call in this process (the thread's own clock, so a pause costs nothing itself); `gap`
    seconds asleep between calls, as a worker sleeps while the daemon and the other workers run."""
    for body in bodies * 3:
        plugin.run(body)
    spent = 0.0
    for i in range(calls):
        start = time.thread_time()
        doc, _failure, _ = plugin.run(bodies[i % len(bodies)])
        if doc is not None:
            plugin.reply_bytes(doc)
        spent += time.thread_time() - start
        if gap:
            time.sleep(gap)
    return spent * 1000 / calls


def _round_us(bodies: list[bytes], plugin_type: str, repeat: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for body in bodies:
            decode_request(body, plugin_type)
    return (time.perf_counter() - start) * 1e6 / (repeat * len(bodies))


def field_costs(bodies: list[bytes], plugin_type: str, rounds: int = 25) -> None:
    """Each payload field's share of the request's decode: the request without it and the whole request
    decoded in alternate rounds (µs, the best round of each)."""
    sizes = {k: len(json.dumps(v)) for k, v in json.loads(bodies[0]).get("payload", {}).items()}
    whole = min(_round_us(bodies, plugin_type) for _ in range(rounds))
    print(f"  decode of the whole request: {whole:.1f} µs ({len(bodies[0])} bytes)")
    for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
        without = []
        for body in bodies:
            request = json.loads(body)
            request["payload"].pop(name)
            without.append(json.dumps(request).encode())
        best_whole = best_without = float("inf")
        for _ in range(rounds):
            best_whole = min(best_whole, _round_us(bodies, plugin_type))
            best_without = min(best_without, _round_us(without, plugin_type))
        print(f"  payload.{name}: {size} bytes, {best_whole - best_without:.1f} µs of the decode")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bodies", nargs="+")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--gap", type=float, default=0.005)
    ap.add_argument("--fields", action="store_true")
    a = ap.parse_args()
    plugin_id, op = os.path.basename(a.bodies[0]).split(".")[:2]
    module = f"mrpvm.plugins.{plugin_id.replace('-', '_')}"
    try:
        plugin = importlib.import_module(f"{module}.__main__").plugin
    except ModuleNotFoundError:
        sys.exit(f"{a.bodies[0]}: no built-in plugin {plugin_id!r} (files are named PLUGIN.OP.N.json)")
    if plugin.on_worker_start is not None:
        plugin.on_worker_start()
    bodies = [open(p, "rb").read() for p in a.bodies]  # noqa: SIM115
    for path, body in zip(a.bodies, bodies, strict=True):
        try:
            decode_request(body, plugin.type)
        except RequestError as err:  # timing a refusal would measure the wrong thing
            sys.exit(f"{path}: not a request {plugin_id} accepts: {err}")
    inside = in_process_ms(plugin, bodies, a.calls)
    paused = in_process_ms(plugin, bodies, max(1, a.calls // 4), a.gap)
    tight = worker_ms(module, bodies, a.calls, 0.0)
    spaced = worker_ms(module, bodies, max(1, a.calls // 4), a.gap)
    apart = f"{a.gap * 1000:.0f} ms apart"
    print(
        f"{plugin_id}.{op}: {len(bodies)} bodies; CPU ms per call: in-process {inside:.3f}, "
        f"in-process {apart} {paused:.3f} (+{paused - inside:.3f}), "
        f"worker back to back {tight:.3f} (+{tight - inside:.3f}), worker {apart} "
        f"{spaced:.3f} (+{spaced - inside:.3f})"
    )
    if a.fields:
        field_costs(bodies, plugin.type)


if __name__ == "__main__":
    main()
