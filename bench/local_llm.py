"""The local LLM option measured: llama.cpp server start, per-call latency, and whole turns.

Needs `make local-llm`. Figures:

- load          LocalLLMServer start until GET /v1/models answers (process start + model load)
- short call    a 1-line question, max_tokens 32 (distinct prompts: no KV-prefix reuse)
- plugin call   the seed prompt sd-llm-fast sends (~600 tokens), max_tokens 1200
- turn          `ask` with sd-llm-fast/gs-llm-fast/val-llm first (symbolic fallbacks), one KB of 3 facts:
                duration, LLM calls, every plugin call and LLM call from the trace

    .venv/bin/python bench/local_llm.py [--calls N] [--threads N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
SEED_PROMPT = ROOT / "plugins" / "sd_llm_common" / "prompts" / "seed_format.md"
KB_TEXT = (
    "SQLite WAL mode does not work over a network filesystem, because all processes using the database "
    "must share memory.\n\nWAL mode allows readers and a writer to run at the same time. A checkpoint "
    "moves WAL content back into the database file.\n"
)
ORDERS = {
    "sd": ["sd-llm-fast", "sd-symbolic"],
    "kb": ["kb-fast"],
    "gs": ["gs-llm-fast", "gs-symbolic"],
    "val": ["val-llm"],
}


async def timed_call(client: httpx.AsyncClient, server, messages, max_tokens: int) -> dict:
    started = time.perf_counter()
    response = await client.post(
        f"{server.base_url}/chat/completions",
        headers={"Authorization": f"Bearer {server.api_key}"},
        json={"messages": messages, "max_tokens": max_tokens, "temperature": 0},
    )
    response.raise_for_status()
    usage = response.json()["usage"]
    return {
        "ms": (time.perf_counter() - started) * 1000,
        "prompt": usage["prompt_tokens"],
        "completion": usage["completion_tokens"],
    }


def summary(rows: list[dict]) -> dict:
    return {
        "median_ms": round(statistics.median(r["ms"] for r in rows)),
        "max_ms": round(max(r["ms"] for r in rows)),
        "prompt_tokens": round(statistics.median(r["prompt"] for r in rows)),
        "completion_tokens": round(statistics.median(r["completion"] for r in rows)),
    }


async def turn(server, home: Path) -> dict:
    from mrpvm.kernel.engine import TurnRequest, run_turn
    from mrpvm.knowledge.context import open_context
    from mrpvm.knowledge.ingest import ingest_source

    home.mkdir(parents=True)
    (home / "config.json").write_text(json.dumps({"plugins": {"stageOrders": ORDERS, "plannerOrder": []}}))
    enabled = ",".join(dict.fromkeys(p for ps in ORDERS.values() for p in ps))
    ctx = await open_context(
        server.kernel_environ({"MRPVM_HOME": str(home), "MRPVM_ENABLED_PLUGINS": enabled})
    )
    try:
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "wal.md", KB_TEXT)
        result = await run_turn(
            ctx, TurnRequest(message="Does WAL mode work on a network filesystem?", kb=kb.id)
        )
    finally:
        await ctx.aclose()
    nodes = result.execution_trace["nodes"]
    return {
        "ms": round(result.duration_ms),
        "status": result.status,
        "llm_calls": result.llm_calls,
        "sd": result.seed_detector_plugin,
        "gs": result.goal_solver_plugin,
        "plugins": [
            (
                n["pluginId"],
                n.get("op"),
                n["status"],
                round(n.get("durationMs") or 0),
                (n.get("output") or {}).get("code"),
            )
            for n in nodes
            if n["kind"] == "plugin"
        ],
        "llm": [
            (
                n["pluginId"],
                round(n["output"]["latencyMs"]),
                n["output"].get("promptTokens"),
                n["output"].get("completionTokens"),
            )
            for n in nodes
            if n["kind"] == "llm"
        ],
    }


async def main(args) -> dict:
    from mrpvm.shells.local_llm import LocalLLMServer, assemble_model

    model = assemble_model()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MRPVM_HOME": tmp, "MRPVM_LOCAL_LLM_MODEL": str(model)}
        async with LocalLLMServer(env, n_threads=args.threads) as server:
            out: dict = {
                "load_s": round(server.load_s, 2),
                "threads": server.n_threads,
                "n_ctx": server.n_ctx,
            }
            async with httpx.AsyncClient(trust_env=False, timeout=300) as client:
                short = [
                    await timed_call(
                        client, server, [{"role": "user", "content": f"Fact {i}: name a colour."}], 32
                    )
                    for i in range(args.calls)
                ]
                system = SEED_PROMPT.read_text()
                plugin = [
                    await timed_call(
                        client,
                        server,
                        [
                            {"role": "system", "content": f"Request {i}.\n{system}"},
                            {
                                "role": "user",
                                "content": 'Turn:\n"""\nDoes WAL mode work on a network filesystem?\n"""',
                            },
                        ],
                        1200,
                    )
                    for i in range(args.calls)
                ]
            out["short_call"] = summary(short)
            out["plugin_call"] = summary(plugin)
            out["turn"] = await turn(server, Path(tmp) / "home")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = anyio.run(main, args)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print(f"load            {result['load_s']} s  (threads {result['threads']}, n_ctx {result['n_ctx']})")
        for name in ("short_call", "plugin_call"):
            r = result[name]
            print(
                f"{name:15} median {r['median_ms']} ms, max {r['max_ms']} ms "
                f"({r['prompt_tokens']} prompt + {r['completion_tokens']} completion tokens)"
            )
        t = result["turn"]
        print(
            f"turn            {t['ms']} ms, {t['llm_calls']} LLM calls, sd {t['sd']}, gs {t['gs']}, {t['status']}"
        )
        for row in t["plugins"]:
            print("  plugin", *row)
        for row in t["llm"]:
            print("  llm   ", *row)
