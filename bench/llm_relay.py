"""What the LLM plugins' private network costs (kernel/supervisor/llm_relay.py).

A sandboxed plugin that declares usesLLM starts behind the relay (one extra `python -I -S` exec and two
forks) and its HTTP calls to the kernel's LLM endpoint cross the relay (TCP inside its namespace, then
the endpoint's Unix socket). Figures:

- oneshot_plain_ms   a sandboxed one-shot echo plugin without usesLLM (no relay): start, answer, reap
- oneshot_relay_ms   the same plugin declaring usesLLM: the relay starts first
- http_direct_us     one HTTP request (new connection, GET /v1/models, 401) from a plugin to the endpoint
                     with the sandbox off (the plugin shares the host's network)
- http_relay_us      the same from a sandboxed LLM plugin, through the relay

    .venv/bin/python bench/llm_relay.py [--json] [--oneshots N] [--requests N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ECHO = ROOT / "tests" / "support" / "plugins" / "echo_gs.py"
sys.path.insert(0, str(ROOT / "bench"))
from plugin_overhead import HINTS, build_request, summary  # noqa: E402

# A worker plugin that times N GETs to the port its prompt names, then answers the timings (µs).
TIMER = """
import json, socket, time
from mrpvm.plugins.sdk import Call, Plugin


def solve(call: Call):
    port, count = (int(x) for x in call.prompt.split(":"))
    times = []
    for _ in range(count):
        start = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(f"GET /v1/models HTTP/1.0\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n".encode())
            while conn.recv(65536):
                pass
        times.append((time.perf_counter() - start) * 1e6)
    return call.reply("success", "high", result="timed", answer=json.dumps(times))


plugin = Plugin("http-timer", "gs-plugin", {"solve": solve})

if __name__ == "__main__":
    plugin.main()
"""


def plugin_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="mrpvm-llm-relay-bench-"))
    shutil.copy(ECHO, folder / "echo_gs.py")
    (folder / "timer.py").write_text(TIMER)
    specs = {
        "echo-plain": ("echo_gs.py", False, False),
        "echo-llm": ("echo_gs.py", False, True),
        "timer": ("timer.py", True, True),
    }
    for plugin_id, (script, worker, uses_llm) in specs.items():
        manifest = {
            "id": plugin_id,
            "type": "gs-plugin",
            "command": "python",
            "args": [script],
            "worker": worker,
            "usesLLM": uses_llm,
            "maxLLMCalls": 1 if uses_llm else 0,
            "timeoutMs": 60000,
            "plannerHints": HINTS,
        }
        (folder / f"{plugin_id}.json").write_text(json.dumps(manifest))
    return folder


async def measure(oneshots: int, requests: int) -> dict[str, list[float]]:
    from mrpvm.kernel.config import SandboxConfig
    from mrpvm.kernel.context import llm_route
    from mrpvm.kernel.llm import LLMBridge
    from mrpvm.kernel.registry import Registry
    from mrpvm.kernel.supervisor import Supervisor
    from mrpvm.kernel.supervisor.sandbox import Sandbox
    from mrpvm.protocol.envelope import Request

    folder = plugin_folder()
    request = build_request()
    out: dict[str, list[float]] = {}
    try:
        registry = Registry.load(folder)
        env = {"MRPVM_LLM_BASE_URL": "http://127.0.0.1:9/v1"}  # never called: /v1/models needs a token first
        async with LLMBridge.from_environ(env) as bridge:
            port = (bridge.endpoint_address or ("", 0))[1]
            for mode in ("require", "off"):
                sandbox = Sandbox(SandboxConfig(mode=mode))  # type: ignore[arg-type]
                async with Supervisor(registry, sandbox=sandbox) as sup:
                    sup.route_llm(llm_route(bridge))
                    if mode == "require":
                        for plugin_id in ("echo-plain", "echo-llm"):
                            await sup.call(plugin_id, request)
                            times = []
                            for _ in range(oneshots):
                                start = time.perf_counter()
                                await sup.call(plugin_id, request)
                                times.append(time.perf_counter() - start)
                            out[plugin_id] = times
                    ask = Request(prompt=f"{port}:{requests}", context=[], op="solve")
                    await sup.call("timer", Request(prompt=f"{port}:20", context=[], op="solve"))  # warm
                    result = await sup.call("timer", ask)
                    out[f"http-{mode}"] = json.loads(result.document.answer or "[]")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--oneshots", type=int, default=30)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    got = asyncio.run(measure(args.oneshots, args.requests))
    figures = {
        "oneshot_plain_ms": summary(got["echo-plain"], 1e3),
        "oneshot_relay_ms": summary(got["echo-llm"], 1e3),
        "http_direct_us": summary(got["http-off"], 1.0),
        "http_relay_us": summary(got["http-require"], 1.0),
    }
    if args.json:
        print(json.dumps(figures))
        return
    for name, values in figures.items():
        print(f"{name:18} " + "  ".join(f"{k} {v}" for k, v in values.items()))


if __name__ == "__main__":
    main()
