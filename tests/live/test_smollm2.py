"""Live, with SmolLM2-135M-Instruct on llama.cpp: grounded citations, fallback on unusable output, the
LLM call budget, and the planner learning from outcomes (make local-llm; CI runs these).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from mrpvm.kernel.engine import TurnRequest, run_turn
from mrpvm.kernel.store import Store
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.protocol.envelope import Pins
from mrpvm.shells import local_llm as local

pytestmark = pytest.mark.live

KB_TEXT = (
    "# SQLite WAL mode\n\n"
    "WAL mode does not work over a network filesystem, because all processes using the database must "
    "share memory.\n\n"
    "A checkpoint moves the content of the WAL file back into the database file. By default SQLite runs "
    "a checkpoint when the WAL file reaches 1000 pages.\n"
)
QUESTIONS = (
    "Does WAL mode work on a network filesystem?",
    "When does SQLite run a checkpoint by default?",
    "What does a checkpoint do?",
)
# A lookup SmolLM2-135M answers from its evidence (checked against the local build: temperature 0).
PORT_TEXT = (
    "# Foo server\n\nThe Foo server listens on port 8080 by default.\n\n"
    "The Foo server writes its log to /var/log/foo.log.\n"
)
PORT_QUESTION = "Which port does the Foo server listen on by default?"
SYMBOLIC = ["sd-symbolic", "kb-fast", "gs-symbolic", "planner-default"]
# Generous deadlines: a loaded 2-core machine can take a minute per call; these tests are about behaviour.
PATIENT = {"MRPVM_PLUGIN_TIMEOUT_MS": "240000", "MRPVM_REQUEST_TIMEOUT_MS": "900000"}


async def _session(
    server: local.LocalLLMServer,
    home: Path,
    enabled: list[str],
    config: dict | None = None,
    kb_text: str = KB_TEXT,
):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(config or {}))
    environ = server.kernel_environ(
        {"MRPVM_HOME": str(home), "MRPVM_ENABLED_PLUGINS": ",".join(enabled), **PATIENT}
    )
    ctx = await open_context(environ)
    kb = ctx.store.create_kb("docs")
    await ingest_source(ctx, kb, "doc.md", kb_text)  # sd-symbolic: no LLM at ingest
    return ctx, kb.id


def _plugin_nodes(result, op: str) -> list[dict]:
    return [n for n in result.execution_trace["nodes"] if n["kind"] == "plugin" and n.get("op") == op]


def _given_evidence(result) -> set[str]:
    """Every unit id a knowledge view handed to the goal solvers in this turn."""
    ids: set[str] = set()
    for group in result.response_document["groups"]:
        ids |= set(group.get("evidenceIds") or [])
    return ids


def test_gs_llm_fast_answers_citing_only_units_it_was_given(local_llm, tmp_path):
    """A lookup SmolLM2 answers at temperature 0 (greedy: the same completion on every run): gs-llm-fast's
    answer is the turn's, names the fact, cites only units it was given, and the kernel measures it as
    supported (a refusal or a structured error fails this test)."""

    async def main():
        ctx, kb = await _session(
            local_llm, tmp_path / "home", ["sd-symbolic", "kb-fast", "gs-llm-fast"], kb_text=PORT_TEXT
        )
        try:
            return await run_turn(ctx, TurnRequest(message=PORT_QUESTION, kb=kb, pins=Pins(gs="gs-llm-fast")))
        finally:
            await ctx.aclose()

    result = anyio.run(main)
    [solve] = _plugin_nodes(result, "solve")
    assert solve["pluginId"] == "gs-llm-fast"
    assert solve["status"] == "success", solve["output"]
    assert result.goal_solver_plugin == "gs-llm-fast" and result.llm_calls == 1
    cited = solve["output"]["sources"]
    assert cited and set(cited) <= _given_evidence(result)
    answer = result.response_document["groups"][0]["answerMarkdown"]
    assert "8080" in answer and "[E" not in answer
    [llm] = [n for n in result.execution_trace["nodes"] if n["kind"] == "llm"]
    assert llm["status"] == "success"


def test_a_cut_completion_is_a_structured_error_and_the_next_candidate_answers(local_llm, tmp_path):
    """A server capped at 2 tokens per completion: every answer is cut, so gs-llm-fast fails with the
    reason and gs-symbolic, next in the order, answers."""
    config = {"plugins": {"stageOrders": {"gs": ["gs-llm-fast", "gs-symbolic"]}, "plannerOrder": []}}
    environ = {**local_llm.environ, "MRPVM_HOME": str(tmp_path / "server-home")}

    async def main(server: local.LocalLLMServer):
        enabled = ["sd-symbolic", "kb-fast", "gs-llm-fast", "gs-symbolic"]
        ctx, kb = await _session(server, tmp_path / "home", enabled, config)
        try:
            return await run_turn(ctx, TurnRequest(message=QUESTIONS[0], kb=kb))
        finally:
            await ctx.aclose()

    with start_blocking_portal() as portal:
        server = local.LocalLLMServer(environ, model=local_llm.model, max_tokens=2)
        portal.call(server.start)
        try:
            result = portal.call(main, server)
        finally:
            portal.call(server.stop)
    solves = _plugin_nodes(result, "solve")
    assert [(n["pluginId"], n["status"]) for n in solves] == [
        ("gs-llm-fast", "error"),
        ("gs-symbolic", "success"),
    ]
    failed = solves[0]["output"]
    reason = failed.get("message") or failed.get("result") or ""
    assert failed["code"] == "INVALID_MODEL_OUTPUT" and "cut at its max_tokens limit" in reason, failed
    assert result.goal_solver_plugin == "gs-symbolic"
    assert result.response_document["groups"][0]["answerMarkdown"].strip()


def test_the_llm_call_budget_holds_with_a_real_server(local_llm, tmp_path):
    config = {
        "engine": {"budget": {"maxLLMCalls": 1}},
        "plugins": {
            "stageOrders": {"sd": ["sd-llm-fast", "sd-symbolic"], "gs": ["gs-llm-fast", "gs-symbolic"]},
            "plannerOrder": [],
        },
    }
    enabled = ["sd-llm-fast", "sd-symbolic", "kb-fast", "gs-llm-fast", "gs-symbolic", "val-llm"]

    async def main():
        ctx, kb = await _session(local_llm, tmp_path / "home", enabled, config)
        try:
            return await run_turn(ctx, TurnRequest(message=QUESTIONS[1], kb=kb))
        finally:
            await ctx.aclose()

    result = anyio.run(main)
    upstream = [
        n for n in result.execution_trace["nodes"] if n["kind"] == "llm" and not n["output"].get("cacheHit")
    ]
    assert result.llm_calls <= 1 and len(upstream) <= 1
    nodes = [n for n in result.execution_trace["nodes"] if n["kind"] == "plugin"]
    # sd, gs and val would make at least 3 calls: the later ones found none left and were not served
    limited = [
        n
        for n in nodes
        if n["pluginId"] in ("sd-llm-fast", "gs-llm-fast", "val-llm")
        and (
            n["status"] in ("unsupported", "skipped-budget")
            or n["output"].get("code") == "LLM_BUDGET_EXHAUSTED"
        )
    ]
    assert limited, [(n["pluginId"], n["status"]) for n in nodes]
    assert result.response_document["groups"][0]["answerMarkdown"].strip()


def test_the_planner_records_move_after_outcomes(local_llm, tmp_path):
    enabled = [*SYMBOLIC, "gs-llm-fast", "val-llm"]
    home = tmp_path / "home"

    async def main():
        ctx, kb = await _session(local_llm, home, enabled)
        try:
            before = ctx.store.learned("planner-default", kb)
            for question in QUESTIONS[:2]:
                await run_turn(ctx, TurnRequest(message=question, kb=kb))
        finally:
            await ctx.aclose()  # drains the planners' recordOutcome, which runs after each turn
        return kb, before

    kb, before = anyio.run(main)
    assert before == []
    with Store.open(home) as store:  # the records live in the store, shared by every node
        after = store.learned("planner-default", kb)
    solvers = [s for s in after if s.pluginId.startswith("gs-")]
    assert solvers, after
    overall = [s for s in solvers if s.task == ""]
    assert overall and all(s.samples >= 1 for s in overall)
    assert any(s.successRate != 0.5 for s in overall)  # the EWMA moved from its prior
    assert any("/" in s.task for s in solvers)  # learned per act and answer type too
