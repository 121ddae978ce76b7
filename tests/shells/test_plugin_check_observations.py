"""`mrpvm plugin check` on a planner's recordOutcome observations (SPEC.md §6 "Planner learning"): what the
kernel would store passes; out-of-range scores, an unknown task, a plugin the outcome does not name, or
more observations than the kernel keeps fail with the fix."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from mrpvm.kernel.store_learning import MAX_OBSERVATIONS
from mrpvm.protocol.cnl import render_document
from mrpvm.protocol.document import CnlDocument, Observation, PluginResult
from mrpvm.protocol.examples import EXAMPLE_RESPONSES
from mrpvm.shells.plugin_tools.check_judge import judge_valid

PLANNER = "planner-default"


def reply(text: str) -> SimpleNamespace:
    return SimpleNamespace(timedOut=False, exitCode=0, stdout=text.encode(), stderr=b"", durationMs=3.0)


def outcome(*observations: Observation) -> str:
    result = PluginResult(status="success", plugin=PLANNER, confidence="high")
    return render_document(CnlDocument(result=result, observations=list(observations)))


def test_the_example_observations_pass():
    passed, detail = judge_valid(
        reply(render_document(EXAMPLE_RESPONSES["recordOutcome"])), "recordOutcome", PLANNER
    )
    assert passed and "4 observations" in detail


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (outcome(Observation(index=1, plugin="kb-fast", success=1.5)), "Success must be in [0, 1]"),
        (outcome(Observation(index=1, plugin="kb-fast", success=1, alpha=0.0)), "Alpha must be in (0, 1]"),
        (
            outcome(Observation(index=1, plugin="kb-fast", task="whatever", success=1)),
            "Task: describe/number",
        ),
        (outcome(Observation(index=1, plugin="kb-elsewhere", success=1)), "observe only the plugins"),
        (
            outcome(
                *[Observation(index=n + 1, plugin="kb-fast", success=1) for n in range(MAX_OBSERVATIONS + 1)]
            ),
            f"at most {MAX_OBSERVATIONS}",
        ),
    ],
)
def test_observations_the_kernel_would_refuse_fail_with_the_fix(text, expected):
    passed, detail = judge_valid(reply(text), "recordOutcome", PLANNER)
    assert not passed and expected in detail, detail


def test_observations_are_not_part_of_another_ops_output():
    passed, detail = judge_valid(
        reply(outcome(Observation(index=1, plugin="kb-fast", success=1))), "buildPlan", PLANNER
    )
    assert not passed and "section-not-allowed" in detail


BATCH = ("req_a", "req_b")


def test_a_batch_reply_naming_each_observations_outcome_passes():
    text = outcome(
        Observation(index=1, plugin="kb-fast", success=1, outcome="req_a"),
        Observation(index=2, plugin="kb-fast", success=0, outcome="req_b"),
    )
    passed, detail = judge_valid(reply(text), "recordOutcome", PLANNER, BATCH)
    assert passed and "2 observations" in detail, detail


@pytest.mark.parametrize(
    ("observation", "expected"),
    [
        (Observation(index=1, plugin="kb-fast", success=1), "names no outcome"),
        (Observation(index=1, plugin="kb-fast", success=1, outcome="req_other"), "not one of this call's"),
    ],
)
def test_a_batch_observation_without_its_outcome_fails_with_the_fix(observation, expected):
    passed, detail = judge_valid(reply(outcome(observation)), "recordOutcome", PLANNER, BATCH)
    assert not passed and expected in detail and "Outcome: <requestId>" in detail, detail


def test_a_single_outcome_may_leave_outcome_out():
    text = outcome(Observation(index=1, plugin="kb-fast", success=1))
    passed, detail = judge_valid(reply(text), "recordOutcome", PLANNER)
    assert passed, detail
