"""What process isolation costs: one SDK echo plugin called in-process, through a warm worker, and one-shot.

The request is ~2 KB (a prompt and 10 context items of ~150 chars). Figures:

- inprocess    plugin.handle(body) in this process (decode, handler, render; bench only: the kernel never
               imports plugins)
- worker       Supervisor.call through a warm worker: encode, frame, pipe, plugin, pipe, parse + validate CNL
- oneshot      Supervisor.call on the one-shot manifest: start, stdin JSON, EOF, CNL, reap
- throughput   8 concurrent callers on a pool of 2 workers
- oneshot_bare the same one-shot process started with subprocess.run, no supervisor and no sandbox (our
               overhead = the gap; with the sandbox it includes starting bubblewrap)
- pipe_rtt     a bare blocking pipe ping-pong of the same bytes between two Python processes (the floor set
               by this machine's scheduler; it varies with load from other processes)

    .venv/bin/python bench/plugin_overhead.py [--json] [--calls N] [--sandbox auto|off]

`--sandbox off` measures the same without the plugin sandbox: the difference is the sandbox's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ECHO = ROOT / "tests" / "support" / "plugins" / "echo_gs.py"
HINTS = {
    "expectedLatencyMs": 1,
    "expectedLLMCalls": 0,
    "relativeCost": 0.1,
    "supportedActs": [],
    "topicTags": [],
    "preferredDepth": "shallow",
    "fallbackRole": "bench",
    "evidenceStyle": [],
    "confidenceWhenMatched": 0.5,
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values: list[float], scale: float) -> dict[str, float]:
    return {f"p{int(q * 100)}": round(percentile(values, q) * scale, 1) for q in (0.5, 0.9, 0.99)}


def build_request():
    from mrpvm.protocol.envelope import ContextItem, Request

    claim = (
        "The component caches parsed manifests and re-reads them only when their modification time changes."
    )
    context = [
        ContextItem(
            title=f"bench-doc::chunk-{i:03d}::unit-001",
            sourceLink="bench-doc",
            text=f"Role: Description\nTopic: manifest cache {i}\nClaim: {claim}",
        )
        for i in range(10)
    ]
    return Request(
        prompt="How does the component decide when to re-read a manifest?", context=context, op="solve"
    )


def plugin_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="mrpvm-plugin-overhead-"))
    shutil.copy(ECHO, folder / "echo_gs.py")
    for plugin_id, worker in (("echo-worker", True), ("echo-oneshot", False)):
        manifest = {
            "id": plugin_id,
            "type": "gs-plugin",
            "command": "python",
            "args": ["echo_gs.py"],
            "worker": worker,
            "concurrency": 2,
            "timeoutMs": 10000,
            "plannerHints": HINTS,
        }
        (folder / f"{plugin_id}.json").write_text(json.dumps(manifest))
    return folder


def bench_inprocess(body: bytes, calls: int) -> list[float]:
    sys.path.insert(0, str(ECHO.parent))
    from echo_gs import plugin  # bench only: the kernel never imports plugin code

    for _ in range(200):
        plugin.handle(body)
    times = []
    clock = time.perf_counter
    for _ in range(calls):
        start = clock()
        plugin.handle(body)
        times.append(clock() - start)
    return times


def bench_pipe(payload: bytes, calls: int) -> list[float]:
    code = "import os\nwhile True:\n d=os.read(0,1<<16)\n if not d: break\n os.write(1,d)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
    )
    assert proc.stdin and proc.stdout
    out, inp = proc.stdout.fileno(), proc.stdin.fileno()
    times = []
    for i in range(calls + 200):
        start = time.perf_counter()
        os.write(inp, payload)
        got = 0
        while got < len(payload):
            got += len(os.read(out, 1 << 16))
        if i >= 200:
            times.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait()
    return times


async def time_worker_calls(sup, request, calls: int) -> list[float]:
    """Seconds per warm-worker round trip, after 300 calls of warm-up."""
    for _ in range(300):
        await sup.call("echo-worker", request)
    clock = time.perf_counter
    times = []
    for _ in range(calls):
        start = clock()
        await sup.call("echo-worker", request)
        times.append(clock() - start)
    return times


async def bench_supervisor(
    calls: int, oneshots: int, throughput_calls: int, sandbox_mode: str = "auto"
) -> dict[str, list[float] | float]:
    import msgspec
    from mrpvm.kernel.config import SandboxConfig
    from mrpvm.kernel.registry import Registry
    from mrpvm.kernel.supervisor import Supervisor, scrubbed_env
    from mrpvm.kernel.supervisor.sandbox import Sandbox
    from mrpvm.protocol.envelope import Budget, encode_request

    folder = plugin_folder()
    request = build_request()
    out: dict[str, list[float] | float] = {}
    try:
        registry = Registry.load(folder)
        sandbox = Sandbox(SandboxConfig(mode=sandbox_mode))  # type: ignore[arg-type]
        out["sandboxed"] = float(sandbox.active)
        async with Supervisor(registry, sandbox=sandbox) as sup:
            clock = time.perf_counter
            out["worker"] = await time_worker_calls(sup, request, calls)

            await sup.warm("echo-worker")
            per_caller = throughput_calls // 8

            async def caller() -> None:
                for _ in range(per_caller):
                    await sup.call("echo-worker", request)

            start = clock()
            async with asyncio.TaskGroup() as group:
                for _ in range(8):
                    group.create_task(caller())
            out["throughput"] = per_caller * 8 / (clock() - start)

            await sup.call("echo-oneshot", request)
            times = []
            for _ in range(oneshots):
                start = clock()
                await sup.call("echo-oneshot", request)
                times.append(clock() - start)
            out["oneshot"] = times

            entry = registry.get("echo-oneshot")  # the same process without the supervisor around it
            body = encode_request(msgspec.structs.replace(request, budget=Budget(deadlineMs=10000)))
            env = scrubbed_env()
            times = []
            for _ in range(oneshots):
                start = clock()
                subprocess.run(
                    entry.argv, input=body, capture_output=True, cwd=entry.folder, env=env, check=True
                )
                times.append(clock() - start)
            out["oneshot_bare"] = times
        async with Supervisor(registry, spin_us=0, sandbox=sandbox) as sup:  # no busy-polling the reply
            out["worker_nospin"] = await time_worker_calls(sup, request, calls)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--calls", type=int, default=5000, help="round trips per warm measurement")
    parser.add_argument("--oneshots", type=int, default=40, help="one-shot calls")
    parser.add_argument("--throughput-calls", type=int, default=16000, help="calls in the throughput run")
    parser.add_argument(
        "--sandbox",
        choices=["auto", "off"],
        default="auto",
        help="plugin sandbox (kernel/supervisor/sandbox.py): auto = bubblewrap where available",
    )
    args = parser.parse_args()

    from mrpvm.protocol.envelope import encode_request

    request = build_request()
    body = encode_request(request)
    inprocess = bench_inprocess(body, args.calls)
    pipe = bench_pipe(body, args.calls)
    sup = asyncio.run(bench_supervisor(args.calls, args.oneshots, args.throughput_calls, args.sandbox))
    worker, nospin, oneshot = sup["worker"], sup["worker_nospin"], sup["oneshot"]
    assert isinstance(worker, list) and isinstance(nospin, list) and isinstance(oneshot, list)
    figures = {
        "request_bytes": len(body),
        "inprocess": summary(inprocess, 1e6),
        "pipe_rtt": summary(pipe, 1e6),
        "worker": summary(worker, 1e6),
        "worker_nospin": summary(nospin, 1e6),
        "oneshot": summary(oneshot, 1e3),
        "oneshot_bare": summary(sup["oneshot_bare"], 1e3),  # type: ignore[arg-type]
        "throughput_calls_s": round(float(sup["throughput"])),  # type: ignore[arg-type]
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "sandboxed": bool(sup["sandboxed"]),
    }
    if args.json:
        flat = {
            "inprocess_p50_us": figures["inprocess"]["p50"],
            "worker_p50_us": figures["worker"]["p50"],
            "worker_p99_us": figures["worker"]["p99"],
            "oneshot_p50_ms": figures["oneshot"]["p50"],
            "throughput_calls_s": figures["throughput_calls_s"],
            "inprocess_p99_us": figures["inprocess"]["p99"],
            "worker_p90_us": figures["worker"]["p90"],
            "worker_nospin_p50_us": figures["worker_nospin"]["p50"],
            "worker_nospin_p99_us": figures["worker_nospin"]["p99"],
            "oneshot_p90_ms": figures["oneshot"]["p90"],
            "oneshot_p99_ms": figures["oneshot"]["p99"],
            "oneshot_bare_p50_ms": figures["oneshot_bare"]["p50"],
            "pipe_rtt_p50_us": figures["pipe_rtt"]["p50"],
            "request_bytes": figures["request_bytes"],
            "load_avg_1m": figures["load_avg_1m"],
            "sandboxed": figures["sandboxed"],
        }
        print(json.dumps(flat))
        return
    mode = "sandboxed (bubblewrap)" if figures["sandboxed"] else "not sandboxed"
    print(
        f"request: {len(body)} bytes (10 context items); plugins {mode}; load average {figures['load_avg_1m']}"
    )
    print(f"{'':28}{'p50':>10}{'p90':>10}{'p99':>10}")
    rows = [
        ("in-process handle (µs)", figures["inprocess"]),
        ("bare pipe ping-pong (µs)", figures["pipe_rtt"]),
        ("warm worker call (µs)", figures["worker"]),
        ("  without spin (µs)", figures["worker_nospin"]),
        ("one-shot call (ms)", figures["oneshot"]),
        ("  bare subprocess.run (ms)", figures["oneshot_bare"]),
    ]
    for label, row in rows:
        print(f"{label:28}{row['p50']:>10}{row['p90']:>10}{row['p99']:>10}")
    print(f"throughput, 8 callers on a pool of 2: {figures['throughput_calls_s']} calls/s")


if __name__ == "__main__":
    main()
