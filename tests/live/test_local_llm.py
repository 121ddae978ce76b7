"""Live: the kernel's LLM bridge and a whole turn against the real llama.cpp server (SmolLM2-135M-Instruct).

The model is tiny, so what it writes is often not valid CNL or a grounded answer: these tests prove the
transport (real calls, tokens counted, cache, budget) and that a turn with the LLM plugins still answers
— with the model's output or by falling back — with every LLM call in the trace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.kernel.llm import CallBudget, LLMBridge
from mrpvm.kernel.store import Store
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.protocol.envelope import Pins
from mrpvm.shells.cli.ask import REFUSED_EXIT
from mrpvm.shells.local_llm import MODEL_ALIAS

pytestmark = pytest.mark.live

KB_TEXT = (
    "SQLite WAL mode does not work over a network filesystem, because all processes using the database "
    "must share memory.\n\nWAL mode allows readers and a writer to run at the same time. A checkpoint "
    "moves WAL content back into the database file.\n"
)
QUESTION = "Does WAL mode work on a network filesystem?"
LLM_PLUGINS = ("sd-llm-fast", "gs-llm-fast", "val-llm")
ENABLED = ["sd-llm-fast", "sd-symbolic", "kb-fast", "gs-llm-fast", "gs-symbolic", "val-llm"]
LLM_FIRST = {
    "sd": ["sd-llm-fast", "sd-symbolic"],
    "kb": ["kb-fast"],
    "gs": ["gs-llm-fast", "gs-symbolic"],
    "val": ["val-llm"],
}
# What an LLM plugin may answer when the model's text is unusable (the engine then falls back).
MODEL_FAILURES = {
    "INVALID_MODEL_OUTPUT",
    "UNGROUNDED_ANSWER",
    "CONTEXT_WINDOW_TOO_SMALL",
    "TIMEOUT",
    "LLM_TIMEOUT",
}


def test_the_bridge_completes_real_calls_counts_tokens_caches_and_enforces_the_budget(local_llm, tmp_path):
    async def main():
        store = Store.open(tmp_path / "home")
        bridge = LLMBridge.from_environ(local_llm.kernel_environ({}), store=store)
        try:
            await bridge.start()
            models = await bridge.available_models()
            budget = CallBudget(2)
            bridge.open_request("req-live", budget)
            # the token allows 4 calls (cache hits count for it); the request budget allows 2 upstream calls
            access = bridge.access("req-live", "f1", "gs-llm-fast", "goal-fast", 4, time.monotonic() + 120)
            body = {
                "model": "ignored",
                "messages": [
                    {"role": "system", "content": "Answer in one short sentence."},
                    {"role": "user", "content": "What does a checkpoint do in SQLite WAL mode?"},
                ],
                "max_tokens": 24,
                "temperature": 0,
            }
            headers = {"Authorization": f"Bearer {access.apiKey}"}
            url = f"{access.baseUrl}/chat/completions"
            async with httpx.AsyncClient(trust_env=False, timeout=120) as client:
                first = await client.post(url, json=body, headers=headers)
                again = await client.post(url, json=body, headers=headers)  # the same call: the cache
                other = {**body, "max_tokens": 8}
                second = await client.post(url, json=other, headers=headers)
                third = await client.post(url, json={**body, "max_tokens": 4}, headers=headers)
            events = bridge.drain_events("req-live")
            return models, first, again, second, third, events, budget
        finally:
            await bridge.aclose()
            store.close()

    models, first, again, second, third, events, budget = anyio.run(main)
    assert models == [MODEL_ALIAS]
    assert first.status_code == 200, first.text
    data = first.json()
    assert isinstance(data["choices"][0]["message"]["content"], str)
    assert data["usage"]["prompt_tokens"] > 0 and data["usage"]["completion_tokens"] > 0
    assert again.status_code == 200 and again.json() == data
    assert second.status_code == 200, second.text
    # the request budget (2) is spent by the two upstream calls; the cache hit was free for it
    assert third.status_code == 429 and third.json()["error"]["code"] == "llm_budget_exhausted"
    assert "req-live has used its LLM call budget" in third.json()["error"]["message"]
    assert budget.llm_calls_used == 2
    assert [(e.status, e.cacheHit) for e in events] == [
        ("success", False),
        ("cache-hit", True),
        ("success", False),
        ("refused", False),
    ]
    upstream = events[0]
    # the local server tells the kernel its model (MRPVM_LLM_MODEL): no call waits on GET /models
    assert upstream.model == MODEL_ALIAS and upstream.modelSource == "default"
    assert upstream.promptTokens == data["usage"]["prompt_tokens"]
    assert upstream.completionTokens == data["usage"]["completion_tokens"]
    assert upstream.latencyMs > 0 and upstream.attempts == 1


async def _turn(local_llm, tmp_path, pins: Pins):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"plugins": {"stageOrders": LLM_FIRST, "plannerOrder": []}}))
    environ = local_llm.kernel_environ({"MRPVM_HOME": str(home), "MRPVM_ENABLED_PLUGINS": ",".join(ENABLED)})
    ctx = await open_context(environ)
    try:
        kb = ctx.store.create_kb("docs")
        await ingest_source(ctx, kb, "wal.md", KB_TEXT)  # sd-symbolic: no LLM at ingest
        return await run_turn(ctx, TurnRequest(message=QUESTION, kb=kb.id, pins=pins))
    finally:
        await ctx.aclose()


def _nodes(result, kind: str) -> list[dict]:
    return [n for n in result.execution_trace["nodes"] if n["kind"] == kind]


def _check_llm_trace(result) -> list[dict]:
    """Every LLM plugin call that reached the model has its calls in the trace, tokens counted."""
    parents = {e["dst"]: e["src"] for e in result.execution_trace["edges"] if e["kind"] == "parent"}
    plugins = {n["id"]: n for n in _nodes(result, "plugin")}
    calls = _nodes(result, "llm")
    assert calls, "no LLM call in the trace"
    for call in calls:
        assert plugins[parents[call["id"]]]["pluginId"] in LLM_PLUGINS
        assert call["output"]["model"] == MODEL_ALIAS
        if call["status"] == "success":
            assert call["output"]["promptTokens"] > 0 and call["output"]["completionTokens"] > 0
    upstream = [c for c in calls if not c["output"]["cacheHit"]]
    assert result.llm_calls >= len(upstream)  # calls cut by a plugin timeout are counted, not traced
    for node in plugins.values():
        if node.get("pluginId") in LLM_PLUGINS and node["status"] == "error":
            assert node["output"].get("code") in MODEL_FAILURES, node["output"]
    return calls


def test_a_turn_with_the_fast_llm_plugins_pinned_still_answers(local_llm, tmp_path):
    result = anyio.run(_turn, local_llm, tmp_path, Pins(sd="sd-llm-fast", gs="gs-llm-fast"))
    assert result.response_markdown.strip()
    assert result.response_document["groups"], result.response_markdown
    calls = _check_llm_trace(result)
    used = {n["pluginId"] for n in _nodes(result, "plugin")}
    assert "sd-symbolic" not in used and "gs-symbolic" not in used  # pinned: no other sd/gs ran
    assert {c["pluginId"] for c in calls} & {"sd-llm-fast", "gs-llm-fast"}


def test_a_turn_with_llm_plugins_first_answers_by_the_model_or_by_falling_back(local_llm, tmp_path):
    result = anyio.run(_turn, local_llm, tmp_path, Pins())
    group = result.response_document["groups"][0]
    assert group["answerMarkdown"].strip()
    _check_llm_trace(result)
    solves = [(n["pluginId"], n["status"]) for n in _nodes(result, "plugin") if n.get("op") == "solve"]
    seeds = [(n["pluginId"], n["status"]) for n in _nodes(result, "plugin") if n.get("op") == "detectSeeds"]
    assert seeds[0][0] == "sd-llm-fast" and solves[0][0] == "gs-llm-fast"
    # a failed LLM plugin hands over to the symbolic one, which answers
    if seeds[0][1] == "error":
        assert ("sd-symbolic", "success") in seeds
    assert result.goal_solver_plugin in ("gs-llm-fast", "gs-symbolic")
    if result.goal_solver_plugin == "gs-symbolic":  # only when the model's answer failed or was rejected
        verdicts = [n["status"] for n in _nodes(result, "plugin") if n.get("op") == "validate"]
        assert solves[0][1] == "error" or "rejected" in verdicts


def test_mrpvm_ask_local_llm_starts_the_server_answers_and_stops_it(local_llm, tmp_path):
    home = tmp_path / "home"
    env = {
        **os.environ,
        "MRPVM_HOME": str(home),
        "MRPVM_LOCAL_LLM_MODEL": str(local_llm.model),
    }
    mrpvm = Path(sys.executable).parent / "mrpvm"
    done = subprocess.run(
        [str(mrpvm), "ask", "--local-llm", "--sd", "sd-llm-fast", "--json", QUESTION],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, REFUSED_EXIT), done.stderr  # answered, or refused (exit 3)
    assert "mrpvm: local LLM ready at http://127.0.0.1:" in done.stderr
    result = json.loads(done.stdout)
    assert result["response_markdown"].strip() and result["llm_calls"] >= 1
    calls = [n for n in result["execution_trace"]["nodes"] if n["kind"] == "llm"]
    assert calls and all(c["output"]["model"] == MODEL_ALIAS for c in calls)
    log = (home / "logs" / "local-llm.log").read_text()
    assert "Finished server process" in log  # stopped gracefully when the command ended
