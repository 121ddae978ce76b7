"""The outcome signal is honest (issue 25, deliver 4): a goal solver whose answers are refused, copied from
the prompt or restate the question is not credited, so the planner moves to the symbolic path after a few
outcomes; an LLM call that cannot finish in the time the turn has left is not started.

Engine tests run the real planner-default over the scripted model (tests/support/llm_server.py), starting
from records that favour gs-llm-fast (what session 7's mis-signal left: copies credited as grounded).
"""

from __future__ import annotations

import anyio
import pytest
from llm_engine_support import FakeModel, LLMHarness, ask, calls, llm_nodes, plugin_nodes
from llm_server import ScriptedLLM
from mrpvm.kernel.engine.frame_run import order_planners
from mrpvm.kernel.engine.support import answer_support
from mrpvm.plugins.gs_llm_common.reading import PROMPT_MARKERS, criterion_marker, read_answer
from mrpvm.plugins.planner_common.utility import observations, refuted_refusals, score_attempt
from mrpvm.plugins.sdk import PluginFailure
from mrpvm.protocol.document import IntentGroup, Observation
from mrpvm.protocol.envelope import OutcomeAttempt, PluginStats, RecordOutcomePayload
from test_llm_learning import WAL  # the same unit the learning tests ask about

ENABLED = ["sd-symbolic", "kb-fast", "gs-llm-fast", "gs-symbolic"]
ORDERS = {"sd": ["sd-symbolic"], "kb": ["kb-fast"], "gs": ["gs-llm-fast", "gs-symbolic"], "val": []}
# sd-symbolic reads the harness's question as one `evaluate` intent expecting a yes/no
TASKS = ("", "evaluate", "evaluate/yes-no")
TURNS = 5
QUESTION = "Does WAL mode work on a network filesystem?"


def favour_llm() -> list[Observation]:
    """For every task key of the question: six outcomes at 0.9 for gs-llm-fast, two at 0.45 for
    gs-symbolic (what session 7's pass 1 left: copies credited, symbolic turns out of time)."""
    seeded = [("gs-llm-fast", 0.9, 1.0)] * 6 + [("gs-symbolic", 0.45, 0.0)] * 2
    return [
        Observation(
            index=n + 1,
            plugin=plugin,
            task=task,
            success=success,
            latencyMs=2000.0,
            llmCalls=llm_calls,
            alpha=0.3,
        )
        for n, (plugin, success, llm_calls, task) in enumerate(
            (*item, task) for item in seeded for task in TASKS
        )
    ]


def solver_order(result) -> list[str]:
    """The goal-solver order of the turn's post-seed plan."""
    plans = [n for n in plugin_nodes(result, op="buildPlan") if "post-seed" in n["output"].get("result", "")]
    return plans[-1]["output"]["plan"]["goalSolverOrder"]


def run_learning(tmp_path, mode: str) -> list:
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(gs=mode)
        h = LLMHarness(tmp_path, enabled=ENABLED, orders=ORDERS, planners=["planner-default"], upstream=llm)

        async def main():
            ctx, kb_id = await h.open()
            try:
                ctx.store.record_observations("planner-default", kb_id, favour_llm())
                return [await ask(ctx, kb_id) for _ in range(TURNS)]
            finally:
                await ctx.aclose()

        return anyio.run(main)


@pytest.mark.parametrize("mode", ["refuse", "copy", "restate"])
def test_a_solver_whose_answers_are_refused_copied_or_restated_loses_to_the_symbolic_path(tmp_path, mode):
    results = run_learning(tmp_path, mode)
    firsts = [solver_order(r)[0] for r in results]
    assert firsts[0] == "gs-llm-fast"  # the records it starts from favour the LLM path
    switch = firsts.index("gs-symbolic")  # ValueError: the planner never left the LLM path
    assert firsts[switch:] == ["gs-symbolic"] * (TURNS - switch)  # and it stays
    assert switch <= 3
    assert results[-1].goal_solver_plugin == "gs-symbolic"
    if mode == "copy":
        (node,) = plugin_nodes(results[0], "gs-llm-fast")
        assert (
            node["output"]["code"] == "INVALID_MODEL_OUTPUT"
            and "copied the prompt" in node["output"]["result"]
        )


def test_support_counts_only_what_the_answer_adds_to_the_question():
    assert answer_support("Does WAL mode work on a network filesystem", QUESTION, ["u1"], [WAL]) == 0.0
    assert answer_support("The answer is: WAL mode; network filesystem.", QUESTION, ["u1"], [WAL]) == 0.0
    verdict = answer_support("No, WAL mode does not work on a network filesystem.", QUESTION, ["u1"], [WAL])
    assert verdict == 1.0  # a verdict over the question's words is an answer
    because = answer_support("No: processes must share memory.", QUESTION, ["u1"], [WAL])
    assert because == 1.0
    assert answer_support("", QUESTION, ["u1"], [WAL]) is None


def _attempt(plugin: str, status: str, support: float | None = None, ref: str = "intent-1") -> OutcomeAttempt:
    return OutcomeAttempt(
        pluginId=plugin,
        type="gs-plugin",
        op="solve",
        status=status,
        intentRef=ref,
        frameId="f",
        support=support,
    )


def test_a_refusal_is_a_failure_only_when_a_peer_then_answered_with_support():
    refused = _attempt("gs-llm-fast", "no-context")
    assert refuted_refusals([refused, _attempt("gs-symbolic", "success", 0.95)]) == {0}
    assert refuted_refusals([refused, _attempt("gs-symbolic", "success", 0.4)]) == set()  # weak peer
    assert refuted_refusals([refused, _attempt("gs-symbolic", "no-context")]) == set()  # nobody answered
    assert refuted_refusals([refused, _attempt("gs-symbolic", "success", 1.0, ref="intent-2")]) == set()
    intent = IntentGroup(index=1, act="evaluate", intent=QUESTION, output="yes or no")
    payload = RecordOutcomePayload(
        attempts=[refused, _attempt("gs-symbolic", "success", 0.95)], intents=[intent]
    )
    scores = {(o.plugin, o.task): o.success for o in observations(payload)}
    assert scores[("gs-llm-fast", "evaluate")] == 0.0 and scores[("gs-symbolic", "evaluate")] > 0.7


def test_a_call_killed_after_the_deadline_cut_its_time_is_not_learned():
    """`skipped-budget` (what the kernel reports for it) is neutral; the same TIMEOUT on its own time is 0."""
    intent = IntentGroup(index=1, act="evaluate", intent=QUESTION, output="yes or no")
    cut = RecordOutcomePayload(attempts=[_attempt("gs-symbolic", "skipped-budget")], intents=[intent])
    assert observations(cut) == []
    own = RecordOutcomePayload(attempts=[_attempt("gs-symbolic", "error")], intents=[intent])
    assert {o.success for o in observations(own)} == {0.0}


def test_a_completion_copying_the_prompt_or_the_evidence_list_is_an_error():
    known = {"E1": "u1", "u1": "u1"}
    markers = (*PROMPT_MARKERS, "(Constraint; WAL)")
    for text in (
        "(Constraint; WAL) WAL mode does not work over a network filesystem.",
        "A good answer: The answer is a brief summary of the evidence.",
        "## Answer\nQuestion (evaluate): Does WAL mode work?\n\n## Sources\nUsed: E1",
    ):
        with pytest.raises(PluginFailure) as failure:
            read_answer(text, "gs-llm-fast", known, False, markers=markers)
        assert failure.value.code == "INVALID_MODEL_OUTPUT" and "copied the prompt" in str(failure.value)
    draft = read_answer(
        "No, it needs shared memory.\n\n## Sources\nUsed: E1", "gs", known, False, markers=markers
    )
    assert draft.status == "success" and draft.sources == ["u1"]


def test_an_llm_call_that_cannot_finish_in_the_time_left_is_not_started(tmp_path):
    """The endpoint is measured at about 120 s a call and the turn has 30 s: gs-llm-fast is skipped
    (`skipped-budget`, the reason in the trace), no request reaches the model, gs-symbolic answers."""
    with ScriptedLLM() as llm:
        llm.responder = FakeModel()
        h = LLMHarness(
            tmp_path,
            enabled=ENABLED,
            orders=ORDERS,
            upstream=llm,
            env={"MRPVM_REQUEST_TIMEOUT_MS": "30000", "MRPVM_LLM_TIMEOUT_MS": "200000"},
        )

        async def main():
            ctx, kb_id = await h.open()
            try:
                for _ in range(3):
                    ctx.llm.pace.observe(120.0)
                return await ask(ctx, kb_id)
            finally:
                await ctx.aclose()

        result = anyio.run(main)
        sent = llm.count
    assert calls(result, "solve") == [("gs-llm-fast", "skipped-budget"), ("gs-symbolic", "success")]
    (node,) = plugin_nodes(result, "gs-llm-fast")
    assert "one LLM call takes about 122 s here (measured)" in node["output"]["reason"]
    assert sent == 0 and not llm_nodes(result)
    assert result.goal_solver_plugin == "gs-symbolic"


def _planner(rate: float, samples: int) -> PluginStats:
    return PluginStats(pluginId="", successRate=rate, samples=samples)


def test_one_weak_turn_does_not_hand_the_lead_to_the_heavy_first_planner():
    """Session 8, real01: planner-default's first turn was weak (EWMA 0.35 on 1 sample) and the unmeasured
    planner-depth (prior 0.5) led every later turn, trying the LLM solvers first. The lead now moves on
    evidence: pooled with the prior and by a margin."""
    base = ["planner-default", "planner-depth"]
    one_weak = {"planner-default": _planner(0.35, 1)}
    assert order_planners(base, one_weak, None) == base
    three_weak = {"planner-default": _planner(0.17, 3)}
    assert order_planners(base, three_weak, None) == ["planner-depth", "planner-default"]
    measured = {"planner-default": _planner(0.35, 1), "planner-depth": _planner(0.9, 6)}
    assert order_planners(base, measured, None) == ["planner-depth", "planner-default"]
    assert order_planners(base, {}, "planner-depth") == ["planner-depth", "planner-default"]  # a tie
    better = {"planner-default": _planner(0.95, 8)}
    assert order_planners(base, better, "planner-depth") == base  # a preference never beats evidence


def test_an_acceptance_of_an_unsupported_answer_counts_as_no_verdict():
    """real01 q10: val-llm (unmeasured) accepted "The answer is: The largest file size; tar; store. This
    answer describes the main facts accurately ..." (support 0): the acceptance must not lift it."""
    restated = OutcomeAttempt(
        pluginId="gs-llm-fast", type="gs-plugin", op="solve", status="success", support=0.0
    )
    supported = OutcomeAttempt(
        pluginId="gs-llm-fast", type="gs-plugin", op="solve", status="success", support=0.9
    )
    assert score_attempt(restated, "accepted")[0] == score_attempt(restated)[0] == 0.25
    assert score_attempt(supported, "accepted")[0] == 0.95  # a supported answer's acceptance still counts


def test_a_copied_criterion_is_a_copy_of_the_prompt():
    intent = IntentGroup(
        index=1,
        act="describe",
        intent="What is the largest file size tar can store?",
        output="a size",
        criterion="The answer describes the main facts accurately and completely.",
    )
    text = "The answer is: The largest file size. This answer describes the main facts accurately and completely."
    with pytest.raises(PluginFailure, match="copied the prompt"):
        read_answer(
            text, "gs-llm-fast", {"E1": "u1"}, False, markers=(*PROMPT_MARKERS, *criterion_marker(intent))
        )
    assert (
        criterion_marker(IntentGroup(index=1, act="define", intent="x", output="y", criterion="Short.")) == []
    )


def test_a_criterion_copied_with_a_tail_of_its_own_is_a_copy_of_the_prompt():
    """SmolLM2 on real01 q10 (session 13): the criterion's opening, then a focus of its own."""
    intent = IntentGroup(
        index=1,
        act="describe",
        intent="What is the largest file size tar can store in the ustar format?",
        output="a size",
        criterion="The answer describes the main facts accurately and completely about largest file size, ustar.",
    )
    text = (
        "The largest file size; tar; store.\n\nThis answer describes the main facts accurately and "
        "completely about the largest file size, which is stored in the ustar format."
    )
    markers = (*PROMPT_MARKERS, *criterion_marker(intent))
    with pytest.raises(PluginFailure, match="copied the prompt"):
        read_answer(text, "gs-llm-fast", {"E1": "u1"}, False, markers=markers)
    answer = "The largest file size is 8 GiB [E1]."  # an answer that does not copy it stands
    assert read_answer(answer, "gs-llm-fast", {"E1": "u1"}, False, markers=markers).status == "success"
