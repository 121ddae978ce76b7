"""An LLM plugin's deadline follows the endpoint (configured per-call time, then its measured speed), not
its manifest's constant: a slow model's answer is waited for, a call past its time is a structured error.

The engine tests use `llm-short` (tests/support/llm_wrappers: a gs-plugin whose manifest allows 1 s) and
the scripted server holding each completion (fault injection: a slow server). The server's delays are
far from every bound asserted, so a busy machine does not change the outcome.
"""

from __future__ import annotations

import anyio
import pytest
from llm_engine_support import LLMHarness, ask, llm_nodes, plugin_nodes
from llm_server import Action, ScriptedLLM, reply, sleep
from mrpvm.kernel.llm.pace import FLOOR_S, MIN_SAMPLES, PLUGIN_WORK_S, SLACK, LLMPace

ENABLED = ["sd-symbolic", "kb-fast", "gs-symbolic", "llm-short"]
ORDERS = {"sd": ["sd-symbolic"], "kb": ["kb-fast"], "gs": ["llm-short", "gs-symbolic"], "val": []}
SLOW_ANSWER = "WAL mode does not work over a network filesystem (slow model)."


def harness(tmp_path, llm: ScriptedLLM, **env: str) -> LLMHarness:
    return LLMHarness(
        tmp_path,
        enabled=ENABLED,
        orders=ORDERS,
        upstream=llm,
        wrappers=["llm-short"],
        env={"MRPVM_LLM_CACHE": "off", **env},
    )


def run_turns(h: LLMHarness, questions: list[str]):
    async def main():
        ctx, kb_id = await h.open()
        try:
            return [await ask(ctx, kb_id, message=q) for q in questions], ctx.llm.pace
        finally:
            await ctx.aclose()

    return anyio.run(main)


# --------------------------------------------------------------------------- the pace itself


def test_unmeasured_pace_gives_the_configured_time_and_narrows_once_measured():
    pace = LLMPace(120.0)
    assert pace.call_s() == 120.0 and pace.describe()["llmPace"] == "configured"
    assert pace.plugin_ms(2) == int((2 * 120.0 + PLUGIN_WORK_S) * 1000)
    assert pace.plugin_ms(0) == 0
    for seconds in [4.0, 9.0, 6.0][:MIN_SAMPLES]:
        pace.observe(seconds)
    assert pace.call_s() == SLACK * 9.0
    assert pace.describe() == {"llmCallMs": int(SLACK * 9.0 * 1000), "llmPace": "measured (3 calls)"}


@pytest.mark.parametrize(
    ("samples", "expected"),
    [([0.1, 0.2, 0.1], FLOOR_S), ([50.0, 70.0, 40.0], 100.0), ([1.0, 1.0, 1.0, 80.0], 100.0)],
)
def test_measured_time_stays_between_the_floor_and_the_configured_time(samples, expected):
    pace = LLMPace(100.0)
    for seconds in samples:
        pace.observe(seconds)
    assert pace.call_s() == expected


def test_a_timed_out_call_widens_the_next_deadlines_again():
    pace = LLMPace(200.0)
    for _ in range(8):
        pace.observe(5.0)
    assert pace.call_s() == SLACK * 5.0
    pace.observe(10.0)  # the call ran out of its 10 s: the model is slower now
    assert pace.call_s() == SLACK * 10.0
    pace.observe(0.0)  # nothing measured (no time passed)
    assert pace.call_s() == SLACK * 10.0


# --------------------------------------------------------------------------- the engine


def test_a_slow_model_is_waited_for_beyond_the_manifest_timeout(tmp_path):
    """The manifest allows 1 s, the model takes 2.5 s, the configured per-call time is 30 s."""
    with ScriptedLLM() as llm:
        llm.push(sleep(2.5, reply(SLOW_ANSWER)))
        (result,), pace = run_turns(harness(tmp_path, llm, MRPVM_LLM_TIMEOUT_MS="30000"), ["Does WAL work?"])
    (node,) = plugin_nodes(result, "llm-short")
    assert node["status"] == "success"
    assert node["input"]["llmPace"] == "configured" and node["input"]["llmCallMs"] == 30000
    assert node["input"]["deadlineMs"] > 30000
    assert result.goal_solver_plugin == "llm-short"
    assert SLOW_ANSWER in result.response_document["groups"][0]["answerMarkdown"]
    assert not pace.measured  # one sample so far


def test_a_call_past_its_llm_time_is_a_structured_timeout_and_the_next_solver_answers(tmp_path):
    """The measured call is llm-short's second: the first one (answered at once) pays the worker's cold
    start and the SDK's first imports, which on a busy machine would eat the 2 s of plugin work the
    deadline adds to the 1.5 s LLM time, and the kernel's TIMEOUT would fire before the bridge's."""

    def upstream(body: dict) -> Action:
        slow = "network filesystem" in body["messages"][-1]["content"]
        return sleep(6.0, reply(SLOW_ANSWER)) if slow else reply(SLOW_ANSWER)

    with ScriptedLLM() as llm:
        llm.responder = upstream
        h = harness(tmp_path, llm, MRPVM_LLM_TIMEOUT_MS="1500", MRPVM_LLM_MAX_ATTEMPTS="1")
        (_, result), _ = run_turns(h, ["Does WAL work?", "Does WAL mode work on a network filesystem?"])
    (node,) = plugin_nodes(result, "llm-short")
    assert (node["input"]["llmPace"], node["input"]["llmCallMs"]) == ("configured", 1500)  # one answer so far
    assert node["status"] == "error"
    assert node["output"]["code"] == "LLM_TIMEOUT"
    assert "timed out after 1.5 s" in node["output"]["result"]
    assert "MRPVM_LLM_TIMEOUT_MS" in node["output"]["result"]
    (call,) = llm_nodes(result)
    assert (call["status"], call["output"]["code"]) == ("error", "LLM_TIMEOUT")
    assert result.goal_solver_plugin == "gs-symbolic" and result.status == "success"


def test_after_three_answers_the_deadline_follows_the_measured_speed(tmp_path):
    """Answers in about 1 s each: the fourth call's LLM time is measured (≥ the floor, far below the
    configured 60 s)."""
    questions = ["Does WAL work?", "What is WAL mode?", "What does a checkpoint do?", "Is WAL fast?"]
    with ScriptedLLM() as llm:
        llm.push(*[sleep(1.0, reply(SLOW_ANSWER)) for _ in questions])
        results, pace = run_turns(harness(tmp_path, llm, MRPVM_LLM_TIMEOUT_MS="60000"), questions)
    paces = [plugin_nodes(r, "llm-short")[0]["input"]["llmPace"] for r in results]
    assert paces[:3] == ["configured"] * 3 and paces[3] == "measured (3 calls)"
    last = plugin_nodes(results[3], "llm-short")[0]
    assert FLOOR_S * 1000 <= last["input"]["llmCallMs"] < 60000
    assert last["input"]["deadlineMs"] < 60000
    assert last["status"] == "success" and pace.measured
