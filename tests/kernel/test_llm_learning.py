"""The outcome signal and what the engine learns from it, with the scripted model: evidence support of an
answer, the planner's records per act and answer type, validator records measured by an evaluation, and
the kernel overruling an untrusted validator's rejection of a supported answer.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
from llm_engine_support import FakeModel, LLMHarness, ask, calls, plugin_nodes
from llm_server import ScriptedLLM
from mrpvm.kernel import validator_records as vr
from mrpvm.kernel.engine.support import evidence_support
from mrpvm.kernel.store import Store
from mrpvm.plugins.planner_common.signals import read_signals, task_kind
from mrpvm.plugins.planner_common.utility import UtilityTable, observations, score_attempt
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import OutcomeAttempt, Pins, RecordOutcomePayload
from mrpvm.shells.evaluation.calibration import judged_verdicts, measured
from mrpvm.shells.evaluation.combos import STANDARD_COMBOS, resolve_combo
from mrpvm.shells.evaluation.suites import Expected
from test_engine_llm import ALL_FAST, LLM_FIRST, run

WAL = KnowledgeUnit(
    id="u1",
    sourceId="s",
    chunkId="s::c",
    kuType="atomic",
    role="Constraint",
    topic="WAL",
    claim="WAL mode does not work over a network filesystem because processes must share memory.",
)
HOW_MANY = IntentGroup(
    index=1, act="describe", intent="How many pages trigger a checkpoint?", output="a number"
)
WHAT_IS = IntentGroup(index=2, act="describe", intent="What is a checkpoint?", output="a definition")


def test_support_is_the_share_of_answer_terms_in_the_cited_units() -> None:
    grounded = evidence_support("WAL does not work over a network filesystem.", ["u1"], [WAL])
    invented = evidence_support("Use the journal_size_limit pragma at 4096 pages.", ["u1"], [WAL])
    assert grounded == 1.0
    assert invented is not None and invented < 0.3
    assert evidence_support("", ["u1"], [WAL]) is None and evidence_support("x y", [], []) is None


def test_a_solvers_score_blends_its_verdict_with_its_support() -> None:
    def attempt(support: float | None) -> OutcomeAttempt:
        return OutcomeAttempt(
            pluginId="gs-x", type="gs-plugin", op="solve", status="success", support=support
        )

    assert score_attempt(attempt(None))[0] == 0.5  # unvalidated, unmeasured: neutral
    assert score_attempt(attempt(1.0))[0] == 0.75
    assert score_attempt(attempt(0.1))[0] == 0.3
    assert score_attempt(attempt(0.9), "accepted")[0] == 0.95
    assert score_attempt(attempt(0.9), "rejected")[0] == 0.45


def test_the_planner_learns_per_act_and_answer_type(tmp_path: Path, store_env: dict[str, str]) -> None:
    """The planner's observations, folded by the store (both backends), rebuild its table per task."""
    assert task_kind(HOW_MANY) == "describe/number" and task_kind(WHAT_IS) == "describe/definition"
    good = OutcomeAttempt(
        pluginId="gs-llm-fast",
        type="gs-plugin",
        op="solve",
        status="success",
        intentRef="intent-2",
        support=1.0,
    )
    bad = OutcomeAttempt(
        pluginId="gs-llm-fast", type="gs-plugin", op="solve", status="error", intentRef="intent-1"
    )
    with Store.open(tmp_path, store_env) as store:
        for _ in range(4):
            for attempt, question in ((good, WHAT_IS), (bad, HOW_MANY)):
                payload = RecordOutcomePayload(attempts=[attempt], intents=[question])
                store.record_observations("planner-default", None, observations(payload))
        table = UtilityTable.from_learned(store.learned("planner-default", None))
    acts = table.plugins["gs-llm-fast"].acts
    assert set(acts) == {"describe", "describe/number", "describe/definition"}
    on_definitions = table.evidence("gs-llm-fast", read_signals("", [WHAT_IS]).kinds)
    on_numbers = table.evidence("gs-llm-fast", read_signals("", [HOW_MANY]).kinds)
    assert on_definitions[0] > 0 > on_numbers[0]  # same act, opposite records by answer type
    unseen = IntentGroup(index=3, act="describe", intent="Which option lists files?", output="an option")
    assert table.evidence("gs-llm-fast", read_signals("", [unseen]).kinds)[1] == 8  # falls back to the act


def test_validator_records_trust_only_measured_precision() -> None:
    records = vr.ValidatorRecords()
    assert records.overrules("val-llm", 0.9) == (False, "")  # unmeasured: full say
    for n in range(10):
        records.add("val-llm", "rejected", right=n < 2)  # right 2 of 10 times
    overruled, why = records.overrules("val-llm", 0.9)
    assert overruled and "right 2 of 10 times" in why
    assert records.overrules("val-llm", 0.3) == (False, "")  # an unsupported answer stays rejected
    for _ in range(20):
        records.add("val-good", "rejected", right=True)
    assert records.overrules("val-good", 1.0) == (False, "")


def test_an_acceptance_counts_only_from_a_validator_measured_to_discriminate() -> None:
    records = vr.ValidatorRecords()
    for n in range(7):
        records.add("val-llm", "accepted", right=n < 6)
    assert records.discounts_acceptance("val-llm") == (False, "")  # 7 verdicts: not measured yet
    records.add("val-llm", "accepted", right=False)
    discounted, why = records.discounts_acceptance("val-llm")  # 8 acceptances, no rejection: blind
    assert discounted and "8 acceptance(s), 6 right; 0 rejection(s)" in why and "lift 0.00" in why
    for n in range(4):  # its rejections hit wrong answers as often as its acceptances hit right ones
        records.add("val-llm", "rejected", right=n < 1)
    assert records.validators["val-llm"].lift() == 6 / 8 - 3 / 4
    assert records.discounts_acceptance("val-llm")[0]
    for _ in range(4):
        records.add("val-good", "accepted", right=True)
        records.add("val-good", "rejected", right=True)
    assert records.validators["val-good"].lift() == 1.0
    assert records.discounts_acceptance("val-good") == (False, "")


def test_a_blind_validators_acceptance_validates_nothing(tmp_path: Path) -> None:
    """val-llm measured accepting right and wrong answers alike accepts: the trace marks the verdict
    VALIDATION_DISCOUNTED, the answer stands unvalidated, and the planner hears no verdict."""
    blind = vr.ValidatorRecords()
    for n in range(10):
        blind.add("val-llm", "accepted", right=n < 5)
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(val="accept")
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        with Store.open(h.home) as store:
            vr.add_measured(store, blind)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
    [val] = plugin_nodes(result, "val-llm")
    assert val["status"] == "accepted" and val["output"]["code"] == "VALIDATION_DISCOUNTED"
    assert "10 acceptance(s), 5 right" in val["output"]["why"]
    group = result.response_document["groups"][0]
    assert group["validation"] == "unvalidated" and result.goal_solver_plugin == "gs-llm-fast"


def test_records_persist_add_up_and_a_legacy_file_is_added_once(tmp_path: Path, store_env) -> None:
    """The validators' records live in the store (both backends); a home's file from before is added once."""
    one = vr.ValidatorRecords()
    one.add("val-llm", "accepted", True)
    one.add("val-llm", "rejected", False)
    legacy = tmp_path / vr.FILE_NAME
    with Store.open(tmp_path, store_env) as store:
        assert vr.load(store).validators == {}
        vr.add_measured(store, one)
        merged = vr.add_measured(store, one)
        assert (
            merged.validators["val-llm"].rejected == 2 and merged.validators["val-llm"].rightAcceptances == 2
        )
        legacy.write_text("{not json")
        assert vr.import_legacy(store, tmp_path) is False and legacy.exists()  # damaged: left, not fatal
        data = msgspec.json.encode(one)
        legacy.write_bytes(data)
        assert vr.import_legacy(store, tmp_path) is True and not legacy.exists()
        legacy.write_bytes(data)  # the same file again (a copy on another node): never added twice
        assert vr.import_legacy(store, tmp_path) is False
        assert vr.load(store).validators["val-llm"].rejected == 3


def test_calibration_scores_the_answer_each_verdict_judged() -> None:
    trace = {
        "nodes": [
            {
                "id": "a",
                "kind": "plugin",
                "pluginId": "gs-llm-fast",
                "output": {"answer": "It is 1000 pages."},
            },
            {"id": "b", "kind": "plugin", "pluginId": "gs-symbolic", "output": {"answer": "No idea."}},
            {"id": "v1", "kind": "plugin", "pluginId": "val-llm", "status": "rejected"},
            {"id": "v2", "kind": "plugin", "pluginId": "val-llm", "status": "accepted"},
        ],
        "edges": [
            {"src": "v1", "dst": "a", "kind": "validates"},
            {"src": "v2", "dst": "b", "kind": "validates"},
        ],
    }
    verdicts = judged_verdicts(trace, Expected(answerMustMention=["1000"]))
    assert [(v.verdict, v.answerFrom, v.right) for v in verdicts] == [
        ("rejected", "gs-llm-fast", False),
        ("accepted", "gs-symbolic", False),
    ]
    record = measured(verdicts).validators["val-llm"]
    assert (record.rejected, record.rightRejections, record.accepted, record.rightAcceptances) == (1, 0, 1, 0)


def test_standard_combos_and_labels() -> None:
    labels = [c.label for c in STANDARD_COMBOS]
    assert labels[0] == "symbolic-only" and len(set(labels)) == len(labels)
    symbolic = resolve_combo("symbolic-only")
    assert symbolic is not None and symbolic.disabledPlugins == ["val-llm"]
    pinned = resolve_combo("sd-symbolic,-,gs-llm-fast")
    assert pinned is not None and pinned.pins().gs == "gs-llm-fast" and pinned.pins().kb is None
    assert resolve_combo(None) is None
    import pytest
    from mrpvm.kernel.errors import BadInput

    with pytest.raises(BadInput, match="standard combo"):
        resolve_combo("gs-llm-slow")


def test_an_untrusted_validator_cannot_reject_a_supported_answer(tmp_path: Path) -> None:
    """val-llm measured right on 5 rejections in 10 (its acceptances discriminate, so it is still called)
    rejects the model's grounded answer: the kernel overrules it (a warning and VALIDATION_OVERRULED in the
    trace), the answer stands, and the planner is told `overruled`, not `rejected`. A trusted validator's
    rejection still moves to the next solver."""
    noisy = vr.ValidatorRecords()
    for n in range(10):
        noisy.add("val-llm", "rejected", right=n < 5)
        noisy.add("val-llm", "accepted", right=True)
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(val="reject-llm")
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        (h.home / vr.FILE_NAME).write_bytes(msgspec.json.encode(noisy))  # measured before the store kept them
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
    assert calls(result, "solve") == [("gs-llm-fast", "success")]
    [val] = plugin_nodes(result, "val-llm")
    assert val["status"] == "rejected" and val["output"]["code"] == "VALIDATION_OVERRULED"
    assert "right 5 of 10 times" in val["output"]["why"]
    group = result.response_document["groups"][0]
    assert group["validation"] != "rejected" and result.goal_solver_plugin == "gs-llm-fast"


def test_a_trusted_validator_still_rejects(tmp_path: Path) -> None:
    trusted = vr.ValidatorRecords()
    for _ in range(10):
        trusted.add("val-llm", "rejected", right=True)
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(val="reject-llm")
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        with Store.open(h.home) as store:
            vr.add_measured(store, trusted)
        result = run(h, lambda ctx, kb_id: ask(ctx, kb_id))
    assert calls(result, "solve") == [("gs-llm-fast", "success"), ("gs-symbolic", "success")]
    assert plugin_nodes(result, "val-llm")[0]["output"]["code"] == "VALIDATION_REJECTED"


def _noise() -> vr.ValidatorRecords:
    """val-llm as SmolLM2 measured it (session 11): 11 acceptances, 8 right; 11 rejections, 1 right."""
    records = vr.ValidatorRecords()
    for n in range(11):
        records.add("val-llm", "accepted", right=n < 8)
        records.add("val-llm", "rejected", right=n < 1)
    return records


def test_only_a_validator_measured_noise_both_ways_is_set_aside() -> None:
    records = _noise()
    why = records.sets_aside("val-llm")
    assert why is not None and "11 acceptance(s), 8 right; 11 rejection(s), 1 right" in why
    assert "rejections right 0.09 < 0.6" in why and "pin it" in why
    assert records.sets_aside("val-unmeasured") is None
    blind = vr.ValidatorRecords()  # accepts everything: acceptances discounted, rejections never measured
    for _ in range(12):
        blind.add("val-blind", "accepted", right=True)
    assert blind.discounts_acceptance("val-blind")[0] and blind.sets_aside("val-blind") is None
    harsh = vr.ValidatorRecords()  # rejections untrusted, but its acceptances discriminate
    for n in range(10):
        harsh.add("val-harsh", "accepted", right=True)
        harsh.add("val-harsh", "rejected", right=n < 5)
    assert harsh.overrules("val-harsh", 0.9)[0] and harsh.sets_aside("val-harsh") is None


def _set_aside_notes(result) -> list[dict]:
    return [
        n["output"]["validatorsSetAside"]
        for n in result.execution_trace["nodes"]
        if "validatorsSetAside" in (n.get("output") or {})
    ]


def test_a_validator_measured_to_be_noise_is_not_called(tmp_path: Path) -> None:
    """val-llm measured as noise both ways is left out of the plan's validators: no val-llm node, no
    validation call upstream, the answer stands unvalidated, and the branch's plan node says why once.
    Pinned, it is called (that is how an evaluation measures it again)."""
    with ScriptedLLM() as llm:
        llm.responder = FakeModel(val="reject-llm")
        h = LLMHarness(tmp_path, enabled=ALL_FAST, orders={**LLM_FIRST, "sd": ["sd-symbolic"]}, upstream=llm)
        with Store.open(h.home) as store:
            vr.add_measured(store, _noise())

        async def twice(ctx, kb_id):
            first = await ask(ctx, kb_id)
            asked = len(llm.bodies)
            return first, asked, await ask(ctx, kb_id, pins=Pins(val="val-llm"))

        result, asked, pinned = run(h, twice)
    assert plugin_nodes(result, "val-llm") == []
    assert "m-validation" not in [b["model"] for b in llm.bodies[:asked]]
    [notes] = _set_aside_notes(result)
    assert list(notes) == ["val-llm"] and "measured to be noise" in notes["val-llm"]
    group = result.response_document["groups"][0]
    assert group["validation"] == "unvalidated" and result.goal_solver_plugin == "gs-llm-fast"
    assert "m-validation" in [b["model"] for b in llm.bodies[asked:]]
    [val] = plugin_nodes(pinned, "val-llm")
    assert val["status"] == "rejected" and val["output"]["code"] == "VALIDATION_OVERRULED"
    assert _set_aside_notes(pinned) == []
