"""The LLM plugins as real subprocesses (the supervisor's worker pools), pointed at the bridge's loopback
endpoint, which forwards to a scripted OpenAI-compatible server: sd-llm-*, gs-llm-*, val-llm.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from llm_plugin_calls import run, user_messages
from llm_server import ScriptedLLM, reply, status
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.context import llm_route
from mrpvm.kernel.llm import CallBudget, LLMBridge
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.store import Store
from mrpvm.kernel.supervisor import Supervisor
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import (
    Budget,
    DetectSeedsPayload,
    NormalizePayload,
    Request,
    SolvePayload,
    ValidatePayload,
)
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

ROOT = Path(__file__).resolve().parents[2]
ROLES = {
    "sd-llm-fast": "seed-fast",
    "sd-llm-deep": "seed-deep",
    "gs-llm-fast": "goal-fast",
    "gs-llm-deep": "goal-deep",
    "val-llm": "validation",
}

WAL = KnowledgeUnit(
    id="src-wal::chunk-001::unit-001",
    sourceId="src-wal",
    chunkId="src-wal::chunk-001",
    kuType="atomic",
    role="Constraint",
    topic="WAL on network filesystems",
    claim="WAL does not work over a network filesystem, because all processes must share memory.",
)
NFS = KnowledgeUnit(
    id="session::t1::unit-000",
    sourceId="session::t1",
    chunkId="session::t1::chunk-000",
    kuType="atomic",
    role="Constraint",
    topic="deployment",
    claim="The database sits on an NFS share mounted by three servers.",
)
BULLETS = KnowledgeUnit(
    id="session::t1::unit-001",
    sourceId="session::t1",
    chunkId="session::t1::chunk-000",
    kuType="atomic",
    role="Constraint",
    topic="answer format",
    claim="Answer in at most two sentences.",
    phaseScopes=["gs-plugin"],
)
INTENT = IntentGroup(
    act="recommend",
    intent="Should SQLite use WAL mode on the NFS share?",
    output="a yes/no recommendation with the reason",
)

VALID_SEEDS = """## Intent Group 1
Act: recommend
Intent: Should SQLite use WAL mode for a database on an NFS share?
Output: a yes/no recommendation with the reason

## Context Unit 1
Role: Constraint
Topic: deployment
Claim: The database sits on an NFS share.
"""
INVALID_SEEDS = """Here are the intents:
## Intent Group 1
Act: ponder
Intent: Should SQLite use WAL mode?
Output: a recommendation
"""


# --------------------------------------------------------------------------- no LLM


@pytest.mark.parametrize("plugin_id", sorted(ROLES))
def test_without_llm_every_llm_plugin_is_unsupported(tmp_path: Path, plugin_id: str) -> None:
    ops = {
        "sd-llm-fast": ("detectSeeds", DetectSeedsPayload()),
        "sd-llm-deep": ("detectSeeds", DetectSeedsPayload()),
        "gs-llm-fast": ("solve", SolvePayload(intent=INTENT, evidence=[WAL])),
        "gs-llm-deep": ("solve", SolvePayload(intent=INTENT, evidence=[WAL])),
        "val-llm": ("validate", ValidatePayload(intent=INTENT, answer="No.", evidence=[WAL])),
    }
    op, payload = ops[plugin_id]
    doc, events = run(None, tmp_path, plugin_id, op, INTENT.intent, payload, units=[WAL], with_llm=False)
    assert doc.result.status == "unsupported" and doc.result.llmCalls == 0
    assert doc.result.result == f"{plugin_id} needs an LLM endpoint and an LLM call budget"
    assert events == []


def test_one_shot_without_llm_answers_unsupported_at_once() -> None:
    import subprocess

    body = json.dumps({"prompt": "Is WAL safe on NFS?", "context": []}).encode()
    done = subprocess.run(
        [sys.executable, "-m", "mrpvm.plugins.sd_llm_fast"],
        input=body,
        capture_output=True,
        timeout=30,
        cwd=ROOT / "manifests",
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Status: unsupported" in done.stdout.decode()


# --------------------------------------------------------------------------- sd-llm


def test_sd_llm_valid_cnl_on_first_try(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(VALID_SEEDS))
        doc, events = run(
            llm,
            tmp_path,
            "sd-llm-fast",
            "detectSeeds",
            "Should I use WAL? My db is on NFS.",
            DetectSeedsPayload(turnId="t9", history=["What is WAL?"]),
        )
    assert doc.result.status == "success" and doc.result.confidence == "high"
    assert doc.result.llmCalls == 1 and llm.count == 1
    [intent] = doc.intents
    assert (intent.index, intent.act) == (1, "recommend")
    [unit] = doc.units
    assert unit.id == "session::t9::unit-000" and unit.sourceId == "session::t9" and unit.kuType == "atomic"
    assert unit.claim == "The database sits on an NFS share." and unit.sourceName == "Current-Turn Context"
    prompt = user_messages(llm, 0)[0]
    assert "Should I use WAL? My db is on NFS." in prompt and "What is WAL?" in prompt
    assert "t9" not in prompt  # no per-turn id in the prompt: an identical turn hits the LLM cache
    assert llm.bodies[0]["model"] == "test-model"
    assert [e.status for e in events] == ["success"] and events[0].pluginId == "sd-llm-fast"


def test_sd_llm_invalid_then_corrected_quotes_the_errors(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(INVALID_SEEDS), reply("```\n" + VALID_SEEDS + "```"))
        doc, events = run(
            llm, tmp_path, "sd-llm-deep", "detectSeeds", "Should I use WAL?", DetectSeedsPayload()
        )
        correction = user_messages(llm, 1)[-1]
        resent = [m for m in llm.bodies[1]["messages"] if m["role"] == "assistant"]
    assert doc.result.status == "success" and doc.result.confidence == "medium"
    assert doc.result.llmCalls == 2 and llm.count == 2
    assert doc.intents[0].act == "recommend"
    # The model's own line 3 holds `Act: ponder` (line 1 is its preamble).
    assert "line 3: [enum] Act 'ponder'" in correction
    assert resent and resent[0]["content"] == INVALID_SEEDS
    assert len(events) == 2


def test_sd_llm_invalid_twice_is_an_error(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(INVALID_SEEDS), reply("I cannot do that."))
        doc, _ = run(llm, tmp_path, "sd-llm-fast", "detectSeeds", "Should I use WAL?", DetectSeedsPayload())
    assert doc.result.status == "error" and doc.result.code == "INVALID_MODEL_OUTPUT"
    assert "no '## ' section heading" in doc.result.result
    assert llm.count == 2  # at most one corrective retry


def test_sd_llm_without_a_spare_call_does_not_retry(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(INVALID_SEEDS), reply(VALID_SEEDS))
        doc, _ = run(
            llm, tmp_path, "sd-llm-fast", "detectSeeds", "Should I use WAL?", DetectSeedsPayload(), calls=1
        )
    assert doc.result.status == "error" and doc.result.code == "INVALID_MODEL_OUTPUT"
    assert llm.count == 1


def test_sd_llm_upstream_failure_is_an_error(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(status(500), status(500))
        doc, events = run(
            llm, tmp_path, "sd-llm-fast", "detectSeeds", "Should I use WAL?", DetectSeedsPayload()
        )
    assert doc.result.status == "error" and doc.result.code == "LLM_UPSTREAM_ERROR"
    assert llm.count == 2 and events[0].code == "LLM_UPSTREAM_ERROR"


def test_sd_llm_normalizes_a_source_into_a_tree(tmp_path: Path) -> None:
    answer = """## Context Unit summary
Role: Description
Topic: SQLite WAL
Claim: WAL mode keeps changes in a separate file and needs shared memory.

## Context Unit 1
Role: Definition
Topic: WAL mode
Claim: WAL mode appends changes to a separate -wal file.

## Context Unit 2
Role: Constraint
Topic: WAL on network filesystems
Claim: WAL does not work over a network filesystem.
Subject: WAL mode
Relation: depends_on
Object: shared memory
"""
    text = "WAL mode appends changes to a separate -wal file.\n\nWAL does not work over a network filesystem."
    with ScriptedLLM() as llm:
        llm.push(reply(answer))
        doc, events = run(
            llm,
            tmp_path,
            "sd-llm-fast",
            "normalizePersistentContext",
            "Normalize wal.md",
            NormalizePayload(sourceId="src-wal", sourceName="wal.md", text=text),
        )
    assert doc.result.status == "success", doc.result.result
    by_id = {u.id: u for u in doc.units}
    assert set(by_id) == {
        "src-wal::source-summary",
        "src-wal::section-000",
        "src-wal::chunk-000::unit-000",
        "src-wal::chunk-000::unit-001",
    }
    assert by_id["src-wal::source-summary"].childUnitIds == ["src-wal::section-000"]
    assert by_id["src-wal::section-000"].kuType == "composite"
    assert by_id["src-wal::section-000"].childUnitIds == [
        "src-wal::chunk-000::unit-000",
        "src-wal::chunk-000::unit-001",
    ]
    assert by_id["src-wal::chunk-000::unit-001"].relation == "depends_on"
    assert all(u.sourceName == "wal.md" for u in doc.units)
    assert text in user_messages(llm, 0)[0]
    assert events[0].role == "kb-ingest"


def test_sd_llm_normalize_makes_one_call_per_part_and_refuses_too_small_a_budget(tmp_path: Path) -> None:
    paragraphs = [f"Topic {i}: " + " ".join(f"fact{i}-{j} holds." for j in range(40)) for i in range(3)]
    text = "\n\n".join(paragraphs)
    payload = NormalizePayload(sourceId="src-big", sourceName="big.md", text=text)
    small = {"MRPVM_LLM_CONTEXT_CHARS": "800"}

    def part_answer(body: dict) -> Any:
        part = body["messages"][-1]["content"].split("(part ")[1].split(" ")[0]
        return reply(
            f"## Context Unit summary\nRole: Description\nTopic: part {part}\nClaim: Summary of part {part}.\n\n"
            f"## Context Unit 1\nRole: Description\nTopic: facts\nClaim: Part {part} lists facts."
        )

    with ScriptedLLM() as llm:
        llm.responder = part_answer
        refused, _ = run(
            llm,
            tmp_path,
            "sd-llm-fast",
            "normalizePersistentContext",
            "n",
            payload,
            calls=2,
            plugin_env=small,
        )
        assert llm.count == 0
        doc, events = run(
            llm,
            tmp_path,
            "sd-llm-fast",
            "normalizePersistentContext",
            "n",
            payload,
            calls=3,
            plugin_env=small,
        )
        assert llm.count == 3
    assert refused.result.status == "error" and refused.result.code == "LLM_BUDGET_TOO_SMALL"
    by_id = {u.id: u for u in doc.units}
    root = by_id["src-big::source-summary"]
    assert root.childUnitIds == ["src-big::section-000", "src-big::section-001", "src-big::section-002"]
    assert root.claim == "Summary of part 1. Summary of part 2. Summary of part 3."
    assert by_id["src-big::chunk-002::unit-000"].parentUnitIds == ["src-big::section-002"]
    sections = [by_id[f"src-big::section-00{i}"] for i in range(3)]
    assert sections[0].charStart == 0 and sections[-1].charEnd == len(text)
    assert all(a.charEnd == b.charStart for a, b in zip(sections, sections[1:], strict=False))
    assert len(events) == 3


# --------------------------------------------------------------------------- gs-llm


def test_gs_llm_answer_with_sources(tmp_path: Path) -> None:
    answer = (
        f"## Answer\nNo: keep the rollback journal, because WAL needs shared memory [{WAL.id}].\n\n"
        f"## Why\nNFS cannot share memory.\n\n## Sources\nUsed: [{WAL.id}], {NFS.id}"
    )
    with ScriptedLLM() as llm:
        llm.push(reply(answer))
        doc, _ = run(
            llm,
            tmp_path,
            "gs-llm-fast",
            "solve",
            INTENT.intent,
            SolvePayload(intent=INTENT, evidence=[WAL, NFS], guidance=[BULLETS]),
            units=[WAL, NFS],
        )
        prompt = user_messages(llm, 0)[0]
    assert doc.result.status == "success", doc.result.result
    assert doc.answer.startswith("No: keep the rollback journal")
    assert "### Why" in doc.answer  # a stray level-2 heading is demoted, not an error
    assert doc.sources == [WAL.id, NFS.id]  # brackets around a cited id are not part of it
    assert doc.result.confidence == "high" and "cites 2 of the evidence unit(s)" in doc.result.evidence
    assert WAL.claim in prompt and NFS.claim in prompt and f"[E2] ({NFS.role}" in prompt  # short labels
    assert "Answer in at most two sentences." in prompt  # guidance reaches the model as an instruction


def test_gs_llm_junk_without_citations_is_an_error(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply("Sure! It depends on many things, really."))
        doc, _ = run(
            llm, tmp_path, "gs-llm-fast", "solve", INTENT.intent, SolvePayload(intent=INTENT, evidence=[WAL])
        )
    assert doc.result.status == "error" and doc.result.code == "UNGROUNDED_ANSWER"


def test_gs_llm_no_evidence_is_no_context_without_calling_the_llm(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        doc, events = run(llm, tmp_path, "gs-llm-fast", "solve", INTENT.intent, SolvePayload(intent=INTENT))
    assert doc.result.status == "no-context" and doc.answer == NO_CONTEXT_ANSWER
    assert llm.count == 0 and events == []


@pytest.mark.parametrize(
    ("model_says", "status_expected"),
    [
        ("NO-CONTEXT", "no-context"),
        ("NEEDS-DECOMPOSITION: it asks three separate questions", "needs-decomposition"),
    ],
)
def test_gs_llm_model_signals(tmp_path: Path, model_says: str, status_expected: str) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(model_says))
        doc, _ = run(
            llm, tmp_path, "gs-llm-fast", "solve", INTENT.intent, SolvePayload(intent=INTENT, evidence=[WAL])
        )
    assert doc.result.status == status_expected
    if status_expected == "no-context":
        assert doc.answer == NO_CONTEXT_ANSWER
    else:
        assert "three separate questions" in doc.result.result


def test_gs_llm_deep_drafts_then_refines(tmp_path: Path) -> None:
    draft = f"## Answer\nProbably not.\n\n## Sources\nUsed: {WAL.id}"
    final = f"## Answer\nNo: WAL needs shared memory, which NFS cannot give.\n\n## Sources\nUsed: {WAL.id}, {NFS.id}"
    with ScriptedLLM() as llm:
        llm.push(reply(draft), reply(final))
        doc, events = run(
            llm,
            tmp_path,
            "gs-llm-deep",
            "solve",
            INTENT.intent,
            SolvePayload(intent=INTENT, evidence=[WAL, NFS]),
        )
        refine_prompt = user_messages(llm, 1)[-1]
        refine_turn = [m["content"] for m in llm.bodies[1]["messages"]]
    assert doc.result.status == "success" and doc.result.confidence == "high"
    assert doc.answer == "No: WAL needs shared memory, which NFS cannot give."
    assert doc.sources == [WAL.id, NFS.id]
    assert refine_turn[2] == draft and "Check your draft answer above" in refine_prompt
    assert "Probably not." not in refine_prompt  # the draft is in the conversation once
    assert doc.result.llmCalls == 2
    assert [e.role for e in events] == ["goal-deep", "goal-deep"]


def test_an_unreachable_upstream_is_not_billed_to_the_request(tmp_path: Path) -> None:
    """gs-llm-deep: the draft comes from the cache, the refine pass meets a closed port. Neither reaches
    a model: the request budget stays whole and the plugin reports only the (cached) draft call."""
    draft = f"## Answer\nProbably not.\n\n## Sources\nUsed: {WAL.id}"
    payload = SolvePayload(intent=INTENT, evidence=[WAL, NFS])
    with ScriptedLLM() as llm:  # first turn: the draft is answered (and cached), the refine rejected
        llm.push(reply(draft), status(400))
        live_budget = CallBudget(8)
        first, _ = run(
            llm, tmp_path, "gs-llm-deep", "solve", INTENT.intent, payload, request_budget=live_budget
        )
    # A rejection came from the upstream: it is billed, to the request and in the plugin's LLMCalls.
    assert first.result.status == "success" and "refine pass failed" in first.result.result
    assert first.result.llmCalls == 2 and live_budget.llm_calls_used == 2

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # closed when the block ends
    dead_budget = CallBudget(8)
    doc, events = run(
        None,
        tmp_path,
        "gs-llm-deep",
        "solve",
        INTENT.intent,
        payload,
        env_extra={"MRPVM_LLM_BASE_URL": dead},
        request_budget=dead_budget,
    )
    assert [(e.status, e.code) for e in events] == [("cache-hit", None), ("error", "LLM_CONNECTION_ERROR")]
    assert doc.result.status == "success" and doc.answer == "Probably not."
    assert "refine pass failed (LLM_UPSTREAM_ERROR)" in doc.result.result
    assert doc.result.llmCalls == 1  # the cached draft only
    assert dead_budget.llm_calls_used == 0


# --------------------------------------------------------------------------- val-llm


@pytest.mark.parametrize(
    ("model_says", "verdict", "reason"),
    [
        (
            "Verdict: accepted\nReason: The answer follows the NFS constraint.",
            "accepted",
            "follows the NFS constraint",
        ),
        (
            "Verdict: **rejected**\nReason: It never says whether to use WAL.",
            "rejected",
            "never says whether",
        ),
        # a small model copies the reason's placeholder: the verdict stands, the reason is the default
        ("Verdict: accepted\nReason: <one sentence>", "accepted", "grounded in the evidence"),
    ],
)
def test_val_llm_verdicts(tmp_path: Path, model_says: str, verdict: str, reason: str) -> None:
    payload = ValidatePayload(
        intent=INTENT,
        answer="No: keep the rollback journal.",
        sources=[WAL.id, "ghost::id"],
        evidence=[WAL, NFS],
    )
    with ScriptedLLM() as llm:
        llm.push(reply(model_says))
        doc, _ = run(llm, tmp_path, "val-llm", "validate", INTENT.intent, payload)
        prompt = user_messages(llm, 0)[0]
    assert doc.result.status == verdict and reason in doc.result.result
    assert "No: keep the rollback journal." in prompt and "ghost::id" in prompt and WAL.claim in prompt


@pytest.mark.parametrize(
    "fault",
    [
        lambda: reply("Looks good to me!"),
        lambda: reply("Verdict: accepted\nVerdict: rejected"),
        lambda: status(500),
    ],
    ids=["no-verdict", "two-verdicts", "upstream-500"],
)
def test_val_llm_failure_is_an_error_never_an_accept(tmp_path: Path, fault) -> None:
    payload = ValidatePayload(intent=INTENT, answer="No.", evidence=[WAL])
    with ScriptedLLM() as llm:
        llm.push(fault(), fault())
        doc, _ = run(llm, tmp_path, "val-llm", "validate", INTENT.intent, payload)
    assert doc.result.status == "error"
    assert doc.result.code in ("INVALID_MODEL_OUTPUT", "LLM_UPSTREAM_ERROR")


def test_budget_exhausted_mid_request_is_an_error_for_the_plugin(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(INVALID_SEEDS), reply(VALID_SEEDS))
        # The plugin may make 2 calls, but the request has only 1 left: the retry is refused at the bridge.
        doc, events = run(
            llm, tmp_path, "sd-llm-fast", "detectSeeds", "Should I use WAL?", DetectSeedsPayload(), budget=1
        )
    assert doc.result.status == "error" and doc.result.code == "LLM_BUDGET_EXHAUSTED"
    assert llm.count == 1
    assert [e.status for e in events] == ["success", "refused"]


def test_upstream_sees_the_kernel_key_never_a_plugin_token(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply("Verdict: accepted\nReason: ok"))
        doc, _ = run(
            llm,
            tmp_path,
            "val-llm",
            "validate",
            INTENT.intent,
            ValidatePayload(intent=INTENT, answer="No.", evidence=[WAL]),
            env_extra={"MRPVM_LLM_API_KEY": "sk-upstream-secret"},
        )
        auth = llm.headers[0].get("authorization", "")
    assert doc.result.status == "accepted"
    assert auth == "Bearer sk-upstream-secret"


def test_engine_hooks_trace_llm_calls_and_charge_the_request_budget(tmp_path: Path) -> None:
    """grant/settle as the engine uses them: RequestBudget shared by two plugin calls, llm trace nodes."""
    from mrpvm.kernel.budgets import RequestBudget
    from mrpvm.kernel.llm.hooks import grant, settle
    from mrpvm.kernel.trace import TraceRecorder

    draft = f"## Answer\nNo.\n\n## Sources\nUsed: {WAL.id}"
    env = {"MRPVM_LLM_BASE_URL": "", "MRPVM_LLM_MODEL": "m", "MRPVM_LLM_BACKOFF_MS": "10"}

    with ScriptedLLM() as llm:
        llm.push(reply(draft), reply(draft), reply("Verdict: accepted\nReason: ok"))
        env["MRPVM_LLM_BASE_URL"] = llm.base_url

        async def main():
            store = Store(tmp_path / "mrpvm.db")
            registry = Registry.load(MANIFESTS_DIR, [], [])
            budget = RequestBudget(2, 60000, 3)
            trace = TraceRecorder("req-9")
            root = trace.node("frame", "root")
            try:
                async with LLMBridge.from_environ(env, store=store) as bridge, Supervisor(registry) as sup:
                    sup.route_llm(llm_route(bridge))
                    bridge.open_request("req-9", budget)
                    out = []
                    for plugin_id, op, payload in [
                        ("gs-llm-deep", "solve", SolvePayload(intent=INTENT, evidence=[WAL])),
                        ("val-llm", "validate", ValidatePayload(intent=INTENT, answer="No.", evidence=[WAL])),
                    ]:
                        entry = registry.get(plugin_id)
                        node = trace.node("plugin", plugin_id, parent=root.id, pluginId=plugin_id)
                        access = grant(bridge, entry, op, "req-9", "f0", budget.llm_calls_left, 20.0, node.id)
                        request = Request(
                            prompt=INTENT.intent,
                            context=[],
                            op=op,
                            payload=payload,
                            llm=access,
                            budget=Budget(llmCalls=budget.llm_calls_left, deadlineMs=20000),
                        )
                        try:
                            doc = (await sup.call(plugin_id, request, timeout_s=20)).document
                        finally:
                            counted = settle(bridge, access, trace, node, "req-9")
                        budget.charge(max(0, doc.result.llmCalls - counted))
                        out.append((doc.result.status, counted, access is not None))
                    bridge.expire_request("req-9")
                    return out, budget.llm_calls_used, trace.to_builtins()
            finally:
                store.close()

        out, used, data = anyio.run(main)
        assert llm.count == 2
    # gs-llm-deep used both calls of the request; val-llm then got `llm: null` and answered unsupported.
    assert out == [("success", 2, True), ("unsupported", 0, False)]
    assert used == 2
    llm_nodes = [n for n in data["nodes"] if n["kind"] == "llm"]
    assert [n["output"]["role"] for n in llm_nodes] == ["goal-deep", "goal-deep"]
    gs_node = next(n for n in data["nodes"] if n.get("pluginId") == "gs-llm-deep" and n["kind"] == "plugin")
    parents = {e["dst"]: e["src"] for e in data["edges"] if e["kind"] == "parent"}
    assert all(parents[n["id"]] == gs_node["id"] for n in llm_nodes)
