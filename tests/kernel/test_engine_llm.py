"""The engine's LLM paths end to end: real LLM plugins (sd-llm-*, gs-llm-*, val-llm) and symbolic ones as
subprocesses, the kernel's bridge and loopback endpoint, and the scripted OpenAI-compatible server as the
upstream (counted there). Plugin orders come from the home config (kernel defaults, no planner) unless a
test enables planners.
"""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from llm_engine_support import (
    LLM_MARK,
    FakeModel,
    LLMHarness,
    ask,
    calls,
    dead_url,
    llm_nodes,
    plugin_nodes,
    role_model,
    upstream_models,
)
from llm_server import ScriptedLLM, garbage, sleep, status
from mrpvm.kernel.supervisor import scrubbed_env
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.protocol.envelope import Pins
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

ALL_FAST = ["sd-llm-fast", "sd-symbolic", "kb-fast", "gs-llm-fast", "gs-symbolic", "val-llm"]
LLM_FIRST = {
    "sd": ["sd-llm-fast", "sd-symbolic"],
    "kb": ["kb-fast"],
    "gs": ["gs-llm-fast", "gs-symbolic"],
    "val": ["val-llm"],
}
THREE_QUESTIONS = "What is WAL mode? What does a checkpoint do? Does WAL mode work on a network filesystem?"


def run(harness: LLMHarness, body, *, kb: bool = True):
    """Open the harness's context, run `await body(ctx, kb_id)`, close; returns what body returns."""

    async def main():
        ctx, kb_id = await harness.open(kb=kb)
        try:
            return await body(ctx, kb_id)
        finally:
            await ctx.aclose()

    return anyio.run(main)


def answered_by_symbolic(result) -> None:
    group = result.response_document["groups"][0]
    assert result.status == "success"
    assert (result.seed_detector_plugin, result.goal_solver_plugin) == ("sd-symbolic", "gs-symbolic")
    assert "network filesystem" in group["answerMarkdown"] and LLM_MARK not in group["answerMarkdown"]


# --------------------------------------------------------------------------- the LLM combos


def test_fast_combo_answers_with_sources_traces_every_call_and_hits_the_cache_on_repeat(tmp_path):
    with ScriptedLLM() as llm:
        llm.responder = FakeModel()
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders=LLM_FIRST, upstream=llm)

        async def body(ctx, kb_id):
            first = await ask(ctx, kb_id)
            seen = llm.count
            again = await ask(ctx, kb_id)  # a fresh session, the same question
            return first, seen, again

        first, seen, again = run(h, body)
        models = upstream_models(llm)
    # one call each: seeds, answer, validation — each role's own model
    assert models[:3] == [role_model("seed-fast"), role_model("goal-fast"), role_model("validation")]
    assert seen == 3 and first.llm_calls == 3
    assert (first.seed_detector_plugin, first.goal_solver_plugin, first.status) == (
        "sd-llm-fast",
        "gs-llm-fast",
        "success",
    )
    group = first.response_document["groups"][0]
    assert LLM_MARK in group["answerMarkdown"] and group["validation"] == "accepted"
    cited = group["kbSources"]  # the ids the model listed under ## Sources, resolved to the KB's units
    assert cited and all(c["id"].startswith("wal-") and c["sourceName"] == "wal.md" for c in cited)
    # every LLM call is a trace node under the plugin node that made it
    for plugin, role in [
        ("sd-llm-fast", "seed-fast"),
        ("gs-llm-fast", "goal-fast"),
        ("val-llm", "validation"),
    ]:
        (node,) = plugin_nodes(first, plugin)
        (call,) = llm_nodes(first, parent=node["id"])
        out = call["output"]
        assert (call["status"], out["model"], out["role"], out["cacheHit"]) == (
            "success",
            role_model(role),
            role,
            False,
        )
        assert out["promptTokens"] == 11 and out["completionTokens"] == 7 and out["latencyMs"] > 0
    assert len(llm_nodes(first)) == 3
    # the repeat: nothing in the prompts is per-request (the seed prompt carries no turn id; unit ids
    # are numbered by the plugin), so seeds, answer and validation all come from the cache: no upstream
    # call, free for the request, each hit still a trace node under the plugin that asked
    assert upstream_models(llm, seen) == [] and llm.count == seen
    assert again.llm_calls == 0
    hits = [n for n in llm_nodes(again) if n["output"]["cacheHit"]]
    assert sorted(n["pluginId"] for n in hits) == ["gs-llm-fast", "sd-llm-fast", "val-llm"]
    assert len(llm_nodes(again)) == 3 and all(n["status"] == "cache-hit" for n in hits)
    assert (again.seed_detector_plugin, again.goal_solver_plugin) == ("sd-llm-fast", "gs-llm-fast")
    assert again.response_document["groups"][0]["answerMarkdown"] == group["answerMarkdown"]


def test_invalid_seed_cnl_twice_falls_back_to_sd_symbolic_and_the_turn_is_answered(tmp_path):
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(sd="junk")
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "gs": ["gs-symbolic"]}, upstream=llm)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
        models = upstream_models(llm)
    assert models == [role_model("seed-fast"), role_model("seed-fast"), role_model("validation")]
    assert calls(result, "detectSeeds") == [("sd-llm-fast", "error"), ("sd-symbolic", "success")]
    (sd_node,) = plugin_nodes(result, "sd-llm-fast")
    assert sd_node["output"]["code"] == "INVALID_MODEL_OUTPUT"
    assert "after one correction" in sd_node["output"]["result"]
    assert len(llm_nodes(result, parent=sd_node["id"])) == 2  # the call and its corrective retry
    assert result.llm_calls == 3
    answered_by_symbolic(result)


def test_val_llm_rejection_moves_to_the_next_goal_solver(tmp_path):
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(val="reject-llm")  # rejects what the goal model wrote, accepts the rest
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
    assert calls(result, "solve") == [("gs-llm-fast", "success"), ("gs-symbolic", "success")]
    assert calls(result, "validate") == [("val-llm", "rejected"), ("val-llm", "accepted")]
    rejected = plugin_nodes(result, "val-llm")[0]
    assert rejected["output"]["code"] == "VALIDATION_REJECTED"
    group = result.response_document["groups"][0]
    assert group["validation"] == "accepted"
    answered_by_symbolic(result)
    assert result.llm_calls == 3 and len(llm_nodes(result)) == 3


def test_val_llm_rejecting_every_answer_moves_to_the_next_planner(tmp_path):
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(val="reject")
        h = LLMHarness(
            tmp_path,
            enabled=["sd-symbolic", "kb-fast", "gs-llm-fast", "gs-symbolic", "val-llm"],
            orders={**LLM_FIRST, "sd": ["sd-symbolic"]},
            planners=["planner-default", "planner-depth"],
            upstream=llm,
            env={"MRPVM_MAX_FALLBACK_CALLS": "20"},  # room to backtrack to the next planner
        )
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
    branches = [n for n in result.execution_trace["nodes"] if n["kind"] == "branch"]
    assert [b["pluginId"] for b in branches] == ["planner-default", "planner-depth"]
    links = {(e["src"], e["dst"]) for e in result.execution_trace["edges"] if e["kind"] == "next-planner"}
    assert (branches[0]["id"], branches[1]["id"]) in links
    solves = calls(result, "solve")
    # branch 1 tried both solvers, each answer rejected; branch 2 knows both failed on the same view
    assert sorted(solves[:2]) == [("gs-llm-fast", "success"), ("gs-symbolic", "success")]
    assert calls(result, "validate") == [("val-llm", "rejected")] * 2
    assert sorted(solves[2:]) == [
        ("gs-llm-fast", "skipped-known-failure"),
        ("gs-symbolic", "skipped-known-failure"),
    ]
    group = result.response_document["groups"][0]
    assert result.status != "success" and group["validation"] == "rejected"
    assert group["answerMarkdown"] and group["answerMarkdown"] != NO_CONTEXT_ANSWER  # best weak answer
    assert any("rejected the answer" in w for w in group["warnings"])


# --------------------------------------------------------------------------- upstream failures

FAILURES = {
    "500": (lambda body: status(500), "LLM_UPSTREAM_ERROR", {}),
    "429": (lambda body: status(429), "LLM_RATE_LIMITED", {}),
    # the upstream holds far longer than the 2 s timeout, which leaves a busy machine room to deliver each
    # request (`received` counts what reached the upstream)
    "timeout": (lambda body: sleep(10.0), "LLM_TIMEOUT", {"MRPVM_LLM_TIMEOUT_MS": "2000"}),
    "garbage": (lambda body: garbage(), "LLM_BAD_RESPONSE", {}),
}


@pytest.mark.parametrize("kind", sorted(FAILURES))
def test_upstream_failures_retry_then_fall_back_to_symbolic_plugins(tmp_path, kind):
    responder, code, env = FAILURES[kind]
    with ScriptedLLM() as llm:
        llm.responder = responder
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders=LLM_FIRST, upstream=llm, env=env)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
        received = llm.count
    # three LLM plugin calls (seeds, answer, validation), each tried twice upstream (MAX_ATTEMPTS 2)
    assert received == 6
    failed = llm_nodes(result)
    assert [n["pluginId"] for n in failed] == ["sd-llm-fast", "gs-llm-fast", "val-llm"]
    assert all(n["status"] == "error" and n["output"]["code"] == code for n in failed)
    assert all(n["output"]["attempts"] == 2 for n in failed)
    for plugin in ("sd-llm-fast", "gs-llm-fast", "val-llm"):
        (node,) = plugin_nodes(result, plugin)
        assert node["status"] == "error" and node["output"]["code"].startswith("LLM_")
    answered_by_symbolic(result)
    group = result.response_document["groups"][0]
    assert group["validation"] == "unvalidated"
    assert any("validator val-llm failed" in w for w in group["warnings"])


def test_dead_endpoint_fails_fast_then_the_breaker_answers_at_once(tmp_path):
    h = LLMHarness(tmp_path, enabled=ALL_FAST, orders=LLM_FIRST, upstream=dead_url())

    async def body(ctx, kb_id):
        return await ask(ctx, kb_id), await ask(ctx, kb_id)

    first, second = run(h, body)
    codes = [n["output"]["code"] for n in llm_nodes(first)]
    assert codes == ["LLM_CONNECTION_ERROR"] * 3
    assert first.llm_calls == 0  # no call reached a model: none is billed to the turn
    answered_by_symbolic(first)
    # three consecutive failures opened the breaker: the next turn's calls never try the upstream
    again = llm_nodes(second)
    assert [n["output"]["code"] for n in again] == ["LLM_UNAVAILABLE"] * 3
    assert all("attempts" not in n["output"] for n in again)
    assert second.llm_calls == 0
    answered_by_symbolic(second)


def test_junk_goal_model_is_ungrounded_and_junk_validator_never_accepts(tmp_path):
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(gs="ungrounded", val="junk")
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
    (gs_node,) = plugin_nodes(result, "gs-llm-fast")
    assert (gs_node["status"], gs_node["output"]["code"]) == ("error", "UNGROUNDED_ANSWER")
    (val_node,) = plugin_nodes(result, "val-llm")
    assert (val_node["status"], val_node["output"]["code"]) == ("error", "INVALID_MODEL_OUTPUT")
    answered_by_symbolic(result)
    assert result.response_document["groups"][0]["validation"] == "unvalidated"


def test_a_misquoting_answer_is_an_error_with_its_reason_and_the_next_solver_answers(tmp_path):
    """gs-llm-fast cites a unit it was given but quotes a sentence that unit does not hold: the plugin
    reports UNGROUNDED_ANSWER with the quotation in the trace, no quotation reaches the user, and
    gs-symbolic answers."""
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(gs="misquote")
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
    (gs_node,) = plugin_nodes(result, "gs-llm-fast")
    assert (gs_node["status"], gs_node["output"]["code"]) == ("error", "UNGROUNDED_ANSWER")
    assert "WAL mode works on every network filesystem" in str(gs_node["output"])
    answered_by_symbolic(result)
    assert "every network filesystem" not in result.response_document["groups"][0]["answerMarkdown"]


# --------------------------------------------------------------------------- budget


def test_a_budget_of_two_never_lets_a_third_call_reach_the_upstream(tmp_path):
    """Three seeds solve in parallel with gs-llm-fast, and their answers are validated by val-llm: two LLM
    calls reach the upstream. Which two of the calls that want one are served depends on scheduling; every
    other is refused for budget, by the engine's pre-check (`skipped-budget`) or, when it was granted before
    the others spent the budget, by the bridge with a 429 (LLM_BUDGET_EXHAUSTED, nothing sent upstream), and
    gs-symbolic answers the seeds gs-llm-fast could not."""
    model = FakeModel()
    with ScriptedLLM() as llm:
        llm.responder = lambda body: sleep(0.3, then=model(body))  # keep the first calls in flight
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id, THREE_QUESTIONS, max_llm_calls=2))
        received = llm.count
    assert received == 2
    assert result.llm_calls == 2
    llm_solves = plugin_nodes(result, "gs-llm-fast", "solve")
    validations = plugin_nodes(result, op="validate")
    assert len(llm_solves) == 3 and validations
    wanting = llm_solves + validations
    refused = [n for n in wanting if n["status"] in ("skipped-budget", "error")]
    served = [n for n in wanting if n not in refused]
    assert len(served) == 2, [(n["pluginId"], n["status"]) for n in wanting]
    assert all(n["status"] == "success" for n in served if n in llm_solves)
    for node in refused:
        if node["status"] == "error":  # granted, then refused by the bridge: nothing sent upstream
            assert node["output"]["code"] == "LLM_BUDGET_EXHAUSTED", node
            (call,) = llm_nodes(result, parent=node["id"])
            assert (call["status"], call["output"]["code"]) == ("refused", "LLM_BUDGET_EXHAUSTED")
    assert ("gs-symbolic", "success") in calls(result, "solve")
    groups = result.response_document["groups"]
    assert len(groups) == 3 and all(g["answerMarkdown"] != NO_CONTEXT_ANSWER for g in groups)


# --------------------------------------------------------------------------- tokens, environment


def test_plugins_get_a_loopback_token_not_the_upstream_secrets_and_it_dies_with_the_request(
    tmp_path, monkeypatch
):
    secrets = {
        "MRPVM_LLM_API_KEY": "sk-upstream-secret",
        "MRPVM_API_TOKEN": "daemon-secret",
    }
    probe_out = tmp_path / "probe.json"
    with ScriptedLLM() as llm:
        llm.responder = FakeModel()
        for name, value in {**secrets, "MRPVM_LLM_BASE_URL": llm.base_url}.items():
            monkeypatch.setenv(name, value)  # the supervisor scrubs the kernel's own environment
        monkeypatch.setenv("MRPVM_LLM_CONTEXT_CHARS", "4321")
        h = LLMHarness(
            tmp_path,
            enabled=["sd-symbolic", "kb-fast"],
            orders={"sd": ["sd-symbolic"], "kb": ["kb-fast"], "gs": [], "val": []},
            upstream=llm,
            env=secrets,
            extra_env={"MRPVM_TEST_PROBE_OUT": str(probe_out)},
            wrappers=["llm-probe"],
        )

        async def body(ctx, kb_id):
            result = await ask(ctx, kb_id, pins=Pins(gs="llm-probe"))
            report = json.loads(probe_out.read_text())
            async with httpx.AsyncClient(trust_env=False) as client:  # after the turn, same kernel
                late = await client.post(
                    report["baseUrl"] + "/chat/completions",
                    json={"model": "x", "messages": [{"role": "user", "content": "hi"}]},
                    headers={"Authorization": f"Bearer {report['apiKey']}"},
                )
            return result, report, late, ctx.llm.tokens.live_tokens()

        result, report, late, live = run(h, body)
        auth = llm.headers[0]["authorization"]
        received = llm.count
    env = report["env"]
    assert not set(env) & {*secrets, "MRPVM_LLM_BASE_URL"}
    assert env["MRPVM_LLM_CONTEXT_CHARS"] == "4321"  # other MRPVM_* settings still pass
    assert report["baseUrl"].startswith("http://127.0.0.1:") and report["baseUrl"] != llm.base_url
    assert report["apiKey"].startswith("mrpvm-") and report["model"] == role_model("goal-fast")
    # during the turn the token worked (one upstream call, made with the kernel's key) ...
    assert received == 1 and auth == "Bearer sk-upstream-secret"
    assert LLM_MARK in result.response_document["groups"][0]["answerMarkdown"]
    assert result.llm_calls == 1 and len(llm_nodes(result)) == 1
    # ... and once the turn is over it is refused, and nothing reached the upstream
    assert late.status_code == 401
    assert late.json()["error"]["code"] == "llm_token_invalid"
    assert live == 0


def test_without_an_endpoint_llm_plugins_are_not_planned_and_a_pinned_one_gets_llm_null(tmp_path):
    probe_out = tmp_path / "probe.json"
    h = LLMHarness(
        tmp_path,
        enabled=ALL_FAST,
        orders=LLM_FIRST,
        upstream=None,
        extra_env={"MRPVM_TEST_PROBE_OUT": str(probe_out)},
        wrappers=["llm-probe"],
    )

    async def body(ctx, kb_id):
        assert ctx.llm is None  # no bridge, no loopback endpoint, no LLM client imported
        return await ask(ctx, kb_id), await ask(ctx, kb_id, pins=Pins(gs="llm-probe"))

    result, probed = run(h, body)
    # the LLM plugins could only answer `unsupported`: they are neither planned nor started
    assert calls(result, "detectSeeds") == [("sd-symbolic", "success")]
    assert calls(result, "solve") == [("gs-symbolic", "success")]
    assert calls(result, "validate") == []
    assert result.llm_calls == 0 and not llm_nodes(result)
    answered_by_symbolic(result)
    assert result.response_document["groups"][0]["validation"] == "unvalidated"
    report = json.loads(probe_out.read_text())
    assert (report["baseUrl"], report["apiKey"]) == (None, None)
    assert probed.response_document["groups"][0]["answerMarkdown"] == "no llm"


# --------------------------------------------------------------------------- ingest


def test_ingest_with_an_llm_sd_plugin_sends_one_context_sized_chunk_per_call(tmp_path, monkeypatch):
    monkeypatch.setenv("MRPVM_LLM_CONTEXT_CHARS", "500")  # what the plugin processes read
    text = "\n\n".join(
        f"Widget {i} is made of part {i}. " + "It is described at length here. " * 8 for i in range(6)
    )
    assert len(text) > 3 * 500
    with ScriptedLLM() as llm:
        llm.responder = FakeModel()
        h = LLMHarness(
            tmp_path,
            enabled=["sd-llm-fast", "kb-fast"],
            orders={"sd": ["sd-llm-fast"], "kb": ["kb-fast"], "gs": [], "val": []},
            upstream=llm,
            env={"MRPVM_LLM_CONTEXT_CHARS": "500"},
        )

        async def body(ctx, _):
            kb = ctx.store.create_kb("widgets")
            done = await ingest_source(ctx, kb, "widgets.md", text, sd_plugin="sd-llm-fast")
            return done, ctx.store.kb_units(kb.id), ctx.llm.tokens.live_tokens()

        done, units, live = run(h, body, kb=False)
        models = upstream_models(llm)
        prompts = [b["messages"][1]["content"] for b in llm.bodies]
    # one upstream call per kernel chunk (no part ever needed a second model call), kb-ingest role
    assert done.chunks == len(models) >= 4
    assert set(models) == {role_model("kb-ingest")}
    assert all("(part 1 of 1)" in p for p in prompts)
    atomic = [u for u in units if u.kuType == "atomic"]
    assert len(atomic) == done.chunks and len({u.id for u in units}) == len(units)
    assert any("Widget 5 is made of part 5." in u.body for u in atomic)
    assert live == 0


def test_scrubbed_env_drops_the_llm_and_api_secrets_even_when_given_as_extra():
    kernel_env = {
        "PATH": "/bin",
        "MRPVM_HOME": "/h",
        "MRPVM_LLM_API_KEY": "k",
        "MRPVM_LLM_BASE_URL": "http://up",
        "MRPVM_API_TOKEN": "t",
        "OTHER": "x",
    }
    env = scrubbed_env({"MRPVM_LLM_API_KEY": "k2", "MRPVM_TEST": "1"}, environ=kernel_env)
    assert env == {"PATH": "/bin", "MRPVM_HOME": "/h", "MRPVM_TEST": "1"}
