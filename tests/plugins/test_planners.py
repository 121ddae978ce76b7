"""planner-default and planner-depth: ranking signals, pins, preferences, failures, budgets, decomposition,
EWMA learning (the planner's observations folded by the kernel's store and handed back in `learned`,
deterministic), and the real process boundary."""

from __future__ import annotations

import subprocess
import sys

import msgspec
import pytest
from mrpvm.kernel.config import MANIFESTS_DIR
from mrpvm.kernel.registry import Registry
from mrpvm.plugins.planner_default.__main__ import plugin as default_planner
from mrpvm.plugins.planner_depth.__main__ import plugin as depth_planner
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import (
    BuildPlanPayload,
    Descriptor,
    OutcomeAttempt,
    Paths,
    PlannerHints,
    PluginStats,
    RecordOutcomePayload,
    Request,
    encode_request,
)
from mrpvm.protocol.envelope import Pins as P
from planner_support import (
    DESCRIPTORS,
    _close_stores,
    hints,
    intent,
    kb_attempt,
    plan_of,
    record,
    table_of,
)

__all__ = ["_close_stores"]  # the stores' fixture

DEFINE = [intent("define", "What is a heat exchanger?")]
COMPARE = [intent("compare", "Compare the primary pump with the backup pump.")]
MULTI_HOP = [intent("explain", "Why is the coolant valve relevant to the turbine's safety?")]


# --------------------------------------------------------------------------- ranking signals


def test_symbolic_cues_and_acts_order_the_kb_stage():
    assert plan_of(default_planner, DEFINE).kbPluginOrder[0] == "kb-fast"
    assert plan_of(default_planner, COMPARE).kbPluginOrder[0] == "kb-balanced"
    assert plan_of(default_planner, MULTI_HOP).kbPluginOrder[0] == "kb-thinkingdb"
    dependency = [intent("identify", "Which service depends on the cache through the gateway?")]
    assert plan_of(default_planner, dependency).kbPluginOrder[0] == "kb-thinkingdb"
    for intents in (DEFINE, COMPARE, MULTI_HOP):  # nothing is dropped, only ordered
        assert sorted(plan_of(default_planner, intents).kbPluginOrder) == [
            "kb-balanced",
            "kb-fast",
            "kb-thinkingdb",
        ]


def test_cues_come_from_declared_traits_not_plugin_ids():
    graph = Descriptor(
        id="kb-graph",
        type="kb-plugin",
        costClass="expensive",
        description="Graph walk for multi-hop questions.",
        plannerHints=hints(),
    )
    plain = Descriptor(
        id="kb-plain",
        type="kb-plugin",
        costClass="cheap",
        description="Keyword lookup.",
        plannerHints=hints(relativeCost=0.1, preferredDepth="shallow"),
    )
    assert plan_of(default_planner, MULTI_HOP, descriptors=[plain, graph]).kbPluginOrder == [
        "kb-graph",
        "kb-plain",
    ]
    assert plan_of(
        default_planner, [intent("explain", "Explain the lookup.")], descriptors=[plain, graph]
    ).kbPluginOrder == ["kb-plain", "kb-graph"]


def test_cheap_first_versus_heavy_first_with_and_without_llm_budget():
    cheap = plan_of(default_planner, DEFINE, llmCallsLeft=6)
    heavy = plan_of(depth_planner, DEFINE, llmCallsLeft=6)
    assert cheap.goalSolverOrder == ["gs-symbolic", "gs-llm-fast", "gs-llm-deep"]
    assert heavy.goalSolverOrder == ["gs-llm-deep", "gs-llm-fast", "gs-symbolic"]
    assert cheap.seedDetectorOrder[0] == "sd-symbolic" and heavy.seedDetectorOrder[0] == "sd-llm-deep"
    assert heavy.kbPluginOrder[0] == "kb-thinkingdb"
    for planner in (
        default_planner,
        depth_planner,
    ):  # no LLM calls left: LLM plugins after symbolic, still listed
        broke = plan_of(planner, DEFINE, llmCallsLeft=0)
        assert broke.goalSolverOrder[0] == "gs-symbolic" and set(broke.goalSolverOrder[1:]) == {
            "gs-llm-fast",
            "gs-llm-deep",
        }
        assert broke.seedDetectorOrder[0] == "sd-symbolic" and len(broke.seedDetectorOrder) == 3
        assert broke.validatorOrder == ["val-llm"]
    one_call = plan_of(
        depth_planner, DEFINE, llmCallsLeft=1
    )  # gs-llm-deep may make 2 calls: after gs-llm-fast
    assert one_call.goalSolverOrder[:2] == ["gs-llm-fast", "gs-symbolic"]


def test_pins_collapse_preferences_break_ties_failures_demote():
    pinned = plan_of(default_planner, DEFINE, pins=P(kb="kb-balanced", gs="gs-llm-fast"))
    assert pinned.kbPluginOrder == ["kb-balanced"] and pinned.goalSolverOrder == ["gs-llm-fast"]
    assert len(pinned.seedDetectorOrder) == 3  # other stages untouched
    ranked = plan_of(default_planner, DEFINE)
    # a session preference does not replace the question's own ranking: the leader stays first
    preferred = plan_of(default_planner, DEFINE, preferences=P(kb=ranked.kbPluginOrder[-1]))
    assert preferred.kbPluginOrder[0] == ranked.kbPluginOrder[0] and len(preferred.kbPluginOrder) == 3
    both = plan_of(default_planner, DEFINE, pins=P(kb="kb-fast"), preferences=P(kb="kb-thinkingdb"))
    assert both.kbPluginOrder == ["kb-fast"]
    failed = plan_of(
        default_planner, DEFINE, failures=["kb-fast: error: index missing", "gs-symbolic"], llmCallsLeft=4
    )
    assert failed.kbPluginOrder[-1] == "kb-fast" and len(failed.kbPluginOrder) == 3
    assert failed.goalSolverOrder[-1] == "gs-symbolic"


def test_planner_guidance_units_steer_the_order():
    guidance = [
        KnowledgeUnit(
            id="g1",
            sourceId="policy",
            chunkId="policy::chunk-000",
            kuType="atomic",
            role="Constraint",
            topic="retrieval policy",
            claim="For this corpus prefer kb-thinkingdb. Never use kb-fast here.",
            phaseScopes=["mrp-plan-plugin"],
        ),
        KnowledgeUnit(
            id="g2",
            sourceId="policy",
            chunkId="policy::chunk-000",
            kuType="atomic",
            role="Constraint",
            topic="other phase",
            claim="Use kb-balanced.",
            phaseScopes=["gs-plugin"],
        ),  # not for planners
    ]
    plan = plan_of(default_planner, DEFINE, guidance=guidance)
    assert plan.kbPluginOrder == ["kb-thinkingdb", "kb-balanced", "kb-fast"]
    assert "guidance: g1" in plan.notes


# --------------------------------------------------------------------------- decomposition (DS029)


def test_decompose_rules():
    several = [intent("identify", "What is the pump and why does it fail?")]
    assert plan_of(default_planner, several).decompose is True
    assert plan_of(default_planner, several, depth=3, maxDepth=3).decompose is False
    assert plan_of(default_planner, several, depth=1).decompose is False  # sub-tasks are answered directly
    # a multi-hop question goes to relation-sensitive retrieval, not to a split into sub-intents
    multi_hop = plan_of(default_planner, MULTI_HOP)
    assert multi_hop.decompose is False and multi_hop.kbPluginOrder[0] == "kb-thinkingdb"
    assert plan_of(default_planner, DEFINE).decompose is False
    assert plan_of(default_planner, [intent("identify", "Where is the local cache kept?")]).decompose is False
    assert plan_of(default_planner, [], phase="pre-seed", prompt="What is A? What is B?").decompose is False
    two = [intent("define", "What is A?"), intent("compare", "Compare B with C.", 2)]
    assert plan_of(default_planner, two).decompose is False
    assert plan_of(depth_planner, two, failures=["gs-symbolic: no-context"]).decompose is False
    # one compound intent among simple ones: left to the goal solver (the plan's flag hits every seed)
    mixed = [*several, intent("define", "What is A?", 2)]
    assert plan_of(default_planner, mixed).decompose is False
    assert plan_of(depth_planner, mixed, failures=["gs-symbolic: no-context"]).decompose is True


def test_criterion_templates_are_not_relation_cues():
    why = IntentGroup(
        act="explain",
        intent="Why is the remote cache read-only for forks?",
        output="paragraph",
        criterion="The answer gives the causes, reasons or mechanism.",
    )
    assert plan_of(default_planner, [why]).kbPluginOrder[0] != "kb-thinkingdb"


def test_symbolic_knowledge_turns_relational_questions_to_relation_sensitive_retrieval():
    from mrpvm.protocol.envelope import KnowledgeProfile

    benefit = [intent("explain", "Explain why the editor benefits from isolation.")]
    provides = [intent("describe", "What provides sandboxing?")]
    facts = KnowledgeProfile(atomicUnits=8, symbolicFacts=7)
    prose = KnowledgeProfile(atomicUnits=40, symbolicFacts=2)
    for question in (benefit, provides):
        assert plan_of(default_planner, question, knowledge=facts).kbPluginOrder[0] == "kb-thinkingdb"
        assert plan_of(default_planner, question, knowledge=prose).kbPluginOrder[0] != "kb-thinkingdb"
        assert plan_of(default_planner, question).kbPluginOrder[0] != "kb-thinkingdb"
    # a plain lookup stays lexical even over symbolic knowledge
    assert plan_of(default_planner, DEFINE, knowledge=facts).kbPluginOrder[0] == "kb-fast"


def test_goal_solvers_whose_declared_acts_miss_the_turn_are_left_out():
    keyword = Descriptor(
        id="gs-keyword",
        type="gs-plugin",
        costClass="cheap",
        plannerHints=keyword_hints(["define", "describe"]),
    )
    yes_no = [intent("evaluate", "Is the pump rated for 10 bar?")]
    plan = plan_of(default_planner, yes_no, descriptors=[*DESCRIPTORS, keyword])
    assert "gs-keyword" not in plan.goalSolverOrder and plan.goalSolverOrder[0] == "gs-symbolic"
    assert "left out" in plan.notes
    assert (
        "gs-keyword" in plan_of(default_planner, DEFINE, descriptors=[*DESCRIPTORS, keyword]).goalSolverOrder
    )
    # never an empty stage: when no solver declares the act, all stay
    only = plan_of(default_planner, yes_no, descriptors=[keyword])
    assert only.goalSolverOrder == ["gs-keyword"]


def test_constrained_formats_need_a_solver_that_declares_it_can_produce_them():
    keyword = Descriptor(
        id="gs-keyword", type="gs-plugin", costClass="cheap", plannerHints=keyword_hints(["identify"])
    )
    one_word = IntentGroup(act="identify", intent="Which pump failed first?", output="single word")
    plan = plan_of(default_planner, [one_word], descriptors=[*DESCRIPTORS, keyword])
    assert "gs-keyword" not in plan.goalSolverOrder
    assert {"gs-symbolic", "gs-llm-fast"} <= set(plan.goalSolverOrder)  # constrained / generative
    free = msgspec.structs.replace(one_word, output="brief")
    assert (
        "gs-keyword" in plan_of(default_planner, [free], descriptors=[*DESCRIPTORS, keyword]).goalSolverOrder
    )
    mixed = [one_word, msgspec.structs.replace(free, index=2)]
    assert (
        "gs-keyword" in plan_of(default_planner, mixed, descriptors=[*DESCRIPTORS, keyword]).goalSolverOrder
    )


def keyword_hints(acts: list[str]) -> PlannerHints:
    """A cheap extractive keyword solver's hints, declaring these acts."""
    return hints(
        relativeCost=0.01,
        supportedActs=acts,
        preferredDepth="shallow",
        fallbackRole="secondary",
        evidenceStyle=["extractive"],
        confidenceWhenMatched=0.5,
    )


# --------------------------------------------------------------------------- learning


def teach(artifacts, rounds: int) -> list[list[str]]:
    """kb-fast keeps failing on `explain` and kb-thinkingdb keeps succeeding; the order after each round."""
    question = [intent("explain", "Explain the maintenance schedule.")]
    orders = []
    for _ in range(rounds):
        record(
            default_planner,
            artifacts,
            [
                kb_attempt("kb-balanced", "insufficient", False),
                kb_attempt("kb-thinkingdb", "success", True, 30.0),
            ],
            question,
        )
        orders.append(plan_of(default_planner, question, artifacts=artifacts).kbPluginOrder)
    return orders


def test_ewma_learning_changes_the_order_and_is_persisted_deterministically(tmp_path):
    question = [intent("explain", "Explain the maintenance schedule.")]
    before = plan_of(default_planner, question, artifacts=tmp_path / "a").kbPluginOrder
    assert before[0] == "kb-balanced"
    orders = teach(tmp_path / "a", 6)
    assert orders[-1][0] == "kb-thinkingdb" and orders[-1][-1] != "kb-thinkingdb"
    flip = next(i for i, o in enumerate(orders) if o[0] == "kb-thinkingdb")
    assert all(o[0] == "kb-thinkingdb" for o in orders[flip:])
    # learned per act: a `define` question still starts with the cheap lexical plugin
    assert plan_of(default_planner, DEFINE, artifacts=tmp_path / "a").kbPluginOrder[0] == "kb-fast"
    # the same outcomes in a fresh folder give byte-identical tables and the same orders
    assert teach(tmp_path / "b", 6) == orders
    assert table_of(tmp_path / "a") == table_of(tmp_path / "b")
    table = table_of(tmp_path / "a")
    assert table["plugins"]["kb-thinkingdb"]["acts"]["explain"]["samples"] == 6


def test_kernel_stats_are_used_when_the_planner_has_no_samples():
    question = [intent("explain", "Explain the maintenance schedule.")]
    stats = [
        PluginStats(pluginId="kb-balanced", successRate=0.02, sufficiency=0.0, latencyMs=9000, samples=20),
        PluginStats(pluginId="kb-fast", successRate=0.98, sufficiency=1.0, latencyMs=3, samples=20),
    ]
    assert plan_of(default_planner, question).kbPluginOrder[0] == "kb-balanced"
    assert plan_of(default_planner, question, stats=stats).kbPluginOrder[0] != "kb-balanced"


def test_skipped_attempts_teach_nothing(tmp_path):
    attempts = [OutcomeAttempt(pluginId="gs-llm-deep", type="gs-plugin", op="solve", status="skipped-budget")]
    doc = record(default_planner, tmp_path, attempts, DEFINE)
    assert "0 observations" in doc.result.result and doc.observations == []
    assert table_of(tmp_path)["plugins"] == {}


def test_an_honest_no_context_does_not_demote_a_goal_solver(tmp_path):
    """A solver answering where another said no-context must not overtake it by learning alone."""
    question = [intent("explain", "Explain the maintenance schedule.")]

    def gs(plugin_id: str, status: str, ms: float) -> OutcomeAttempt:
        return OutcomeAttempt(
            pluginId=plugin_id,
            type="gs-plugin",
            op="solve",
            status=status,
            durationMs=ms,
            intentRef="intent-1",
        )

    def val(status: str) -> OutcomeAttempt:
        return OutcomeAttempt(
            pluginId="val-llm", type="val-plugin", op="validate", status=status, intentRef="intent-1"
        )

    for _ in range(6):  # no validator could judge the answers (no LLM): nothing is promoted
        doc = record(
            default_planner,
            tmp_path / "a",
            [gs("gs-symbolic", "no-context", 5.0), gs("gs-llm-fast", "success", 5.0), val("unsupported")],
            question,
        )
        # gs-llm-fast and val-llm, not the no-context
        assert {o.plugin for o in doc.observations} == {"gs-llm-fast", "val-llm"}
    table = table_of(tmp_path / "a")
    assert "gs-symbolic" not in table["plugins"]
    assert table["plugins"]["gs-llm-fast"]["overall"]["successRate"] == pytest.approx(0.5)
    assert (
        plan_of(default_planner, question, artifacts=tmp_path / "a", llmCallsLeft=4).goalSolverOrder[0]
        == "gs-symbolic"
    )
    # validated answers teach: accepted promotes, rejected demotes
    for _ in range(6):
        record(
            default_planner,
            tmp_path / "b",
            [
                gs("gs-symbolic", "success", 5.0),
                val("rejected"),
                gs("gs-llm-fast", "success", 5.0),
                val("accepted"),
            ],
            question,
        )
    table = table_of(tmp_path / "b")
    assert table["plugins"]["gs-symbolic"]["overall"]["successRate"] < 0.2
    assert table["plugins"]["gs-llm-fast"]["overall"]["successRate"] > 0.8
    assert (
        plan_of(default_planner, question, artifacts=tmp_path / "b", llmCallsLeft=4).goalSolverOrder[0]
        == "gs-llm-fast"
    )


def test_a_strong_relational_cue_outweighs_a_small_learned_lead_and_untried_is_not_worse(tmp_path):
    """A session learned from procedure and comparison questions: every kb plugin was tried on an
    unanswerable one, then kb-balanced served the rest. A relational question over symbolic facts then goes to kb-thinkingdb
    (never tried on it), while the learned lead still counts where no cue speaks against it."""
    from mrpvm.protocol.envelope import KnowledgeProfile

    folder = tmp_path / "session"
    nowhere = [intent("identify", "Which warranty covers the moon?")]
    for _ in range(2):
        record(
            default_planner,
            folder,
            [kb_attempt(p, "insufficient", False, 5.0) for p in ("kb-balanced", "kb-fast", "kb-thinkingdb")],
            nowhere,
        )
    for act, text in (
        ("implement", "How do I descale the machine?"),
        ("diagnose", "Why does the pump hum?"),
        ("evaluate", "Is the filter washable?"),
        ("compare", "Compare model A with model B."),
        ("identify", "Which model is quieter?"),
    ):
        for _ in range(2):
            record(
                default_planner,
                folder,
                [kb_attempt("kb-balanced", "success", True, 4.0)],
                [intent(act, text)],
            )
    facts = KnowledgeProfile(atomicUnits=12, symbolicFacts=9)
    relational = [intent("explain", "Explain why Orchard is relevant for incident response.")]
    plan = plan_of(default_planner, relational, artifacts=folder, knowledge=facts)
    assert plan.kbPluginOrder[0] == "kb-thinkingdb", plan.notes
    # a small lead learned on the task's own act does not outweigh the cue either
    for _ in range(2):
        record(default_planner, folder, [kb_attempt("kb-balanced", "success", True, 4.0)], relational)
    plan = plan_of(default_planner, relational, artifacts=folder, knowledge=facts)
    assert plan.kbPluginOrder[0] == "kb-thinkingdb", plan.notes
    # learning stays meaningful: once kb-thinkingdb keeps failing on it, it drops despite the cue
    for _ in range(6):
        record(
            default_planner,
            folder,
            [kb_attempt("kb-thinkingdb", "insufficient", False), kb_attempt("kb-balanced", "success", True)],
            relational,
        )
    plan = plan_of(default_planner, relational, artifacts=folder, knowledge=facts)
    assert plan.kbPluginOrder[0] == "kb-balanced", plan.notes


def test_an_untried_plugin_is_ranked_at_the_stage_prior_not_below_tried_ones():
    """Learned utility is centred on the stage: an untried plugin counts as an average one, a tried plugin
    above (below) its peers gains (loses)."""
    from mrpvm.plugins.planner_common.ranking import Weights, rank
    from mrpvm.plugins.planner_common.signals import read_signals
    from mrpvm.plugins.planner_common.utility import PluginRecord, Stat, UtilityTable

    twins = [
        Descriptor(
            id=pid,
            type="kb-plugin",
            costClass="cheap",
            description="Lookup.",
            plannerHints=hints(relativeCost=0.3, evidenceStyle=[]),
        )
        for pid in ("kb-a", "kb-b", "kb-c")
    ]
    good = Stat(successRate=0.9, sufficiency=0.9, latencyMs=5.0, samples=8)
    poor = Stat(successRate=0.1, sufficiency=0.1, latencyMs=5.0, samples=8)
    signals = read_signals("q", [intent("explain", "Explain the schedule.")])

    def scores(table: UtilityTable) -> dict[str, float]:
        ranked = rank(
            twins, signals, weights=Weights(), table=table, kernel_stats={}, failed=set(), llm_calls_left=0
        )
        return {r.id: r.score for r in ranked}

    # only kb-a tried, and it served well: the untried twins are its equals (unknown, not worse)
    one = scores(UtilityTable(plugins={"kb-a": PluginRecord(overall=good)}))
    assert one["kb-a"] == pytest.approx(one["kb-b"]) == pytest.approx(one["kb-c"])
    # a plugin that kept failing falls below the untried one; the better of two tried ones rises above it
    two = scores(
        UtilityTable(plugins={"kb-a": PluginRecord(overall=good), "kb-b": PluginRecord(overall=poor)})
    )
    assert two["kb-a"] > two["kb-c"] > two["kb-b"]
    # every tried plugin failing does not drag the untried one below neutral
    bad = scores(UtilityTable(plugins={"kb-a": PluginRecord(overall=poor)}))
    assert bad["kb-b"] == pytest.approx(scores(UtilityTable())["kb-b"])
    assert bad["kb-b"] > bad["kb-a"]


# --------------------------------------------------------------------------- the process boundary


@pytest.mark.parametrize("module", ["planner_default", "planner_depth"])
def test_planners_run_as_real_one_shot_processes(module, tmp_path):
    payload = BuildPlanPayload(phase="post-seed", intents=COMPARE, descriptors=DESCRIPTORS, llmCallsLeft=2)
    request = Request(
        prompt="compare", context=[], op="buildPlan", payload=payload, paths=Paths(artifacts=str(tmp_path))
    )
    out = subprocess.run(
        [sys.executable, "-m", f"mrpvm.plugins.{module}"],
        input=encode_request(request),
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    doc = parse_document(out.stdout.decode(), "buildPlan")
    assert doc.result.status == "success" and sorted(doc.plan.kbPluginOrder) == [
        "kb-balanced",
        "kb-fast",
        "kb-thinkingdb",
    ]
    bare = subprocess.run(
        [sys.executable, "-m", f"mrpvm.plugins.{module}"],
        input=b'{"prompt": "hi", "context": []}',
        capture_output=True,
        timeout=60,
    )
    assert (
        bare.returncode == 0 and parse_document(bare.stdout.decode(), "buildPlan").result.status == "success"
    )


def test_a_session_preference_breaks_a_tie_only():
    from mrpvm.plugins.planner_common.ranking import Ranked, apply_pins

    def r(pid: str, score: float) -> Ranked:
        return Ranked(id=pid, score=score, affordable=True, failed=False, why="")

    tied = [r("a", 1.0), r("b", 0.98), r("c", 0.5)]
    assert apply_pins(tied, None, "b") == ["b", "a", "c"]  # within the tie margin
    assert apply_pins(tied, None, "c") == ["a", "b", "c"]  # clearly worse: keeps its place
    assert apply_pins(tied, "c", "b") == ["c"]  # a pin wins over any preference


def test_a_helper_never_leads_a_stage_and_confidence_when_matched_counts():
    base = next(d for d in DESCRIPTORS if d.id == "gs-symbolic")
    hints = base.plannerHints
    assert hints is not None
    helper = msgspec.structs.replace(
        base,
        id="gs-helper",
        costClass="cheap",
        plannerHints=msgspec.structs.replace(
            hints, fallbackRole="helper", relativeCost=0.0, expectedLatencyMs=1
        ),
    )
    for planner in (default_planner, depth_planner):
        plan = plan_of(planner, DEFINE, descriptors=[helper, *DESCRIPTORS])
        assert plan.goalSolverOrder[0] != "gs-helper" and "gs-helper" in plan.goalSolverOrder
        assert plan.goalSolverOrder.index("gs-helper") > plan.goalSolverOrder.index("gs-symbolic")
    sure = msgspec.structs.replace(
        base, id="gs-sure", plannerHints=msgspec.structs.replace(hints, confidenceWhenMatched=1.0)
    )
    unsure = msgspec.structs.replace(
        base, id="gs-unsure", plannerHints=msgspec.structs.replace(hints, confidenceWhenMatched=0.0)
    )
    plan = plan_of(default_planner, DEFINE, descriptors=[unsure, sure])
    assert plan.goalSolverOrder == ["gs-sure", "gs-unsure"]


def test_a_solver_measured_to_fail_is_left_out_unless_pinned_or_good_at_the_kind(tmp_path):
    """Session 8, real01: gs-symbolic refused an unanswerable question (right), then gs-llm-fast, measured
    at success 0.11 on 10 outcomes, answered it (wrong). A solver measured to fail is left out of a stage
    that has another candidate; a pin still runs it, and a good record on the task's kind keeps it."""
    lookup = [intent("identify", "What is the largest file size tar can store?")]
    defining = [intent("define", "What is a heat exchanger?")]

    def gs(
        plugin_id: str, status: str, support: float | None = None, ref: str = "intent-1"
    ) -> OutcomeAttempt:
        return OutcomeAttempt(
            pluginId=plugin_id, type="gs-plugin", op="solve", status=status, intentRef=ref, support=support
        )

    for _ in range(6):  # errors and restated questions (support 0) on lookups
        record(
            default_planner, tmp_path, [gs("gs-llm-fast", "error"), gs("gs-symbolic", "success", 1.0)], lookup
        )
        record(default_planner, tmp_path, [gs("gs-llm-fast", "success", 0.0)], lookup)
    assert table_of(tmp_path)["plugins"]["gs-llm-fast"]["overall"]["successRate"] < 0.25
    plan = plan_of(default_planner, lookup, artifacts=tmp_path, llmCallsLeft=4)
    assert "gs-llm-fast" not in plan.goalSolverOrder and plan.goalSolverOrder[0] == "gs-symbolic"
    assert "left out, measured to fail: gs-llm-fast success" in plan.notes
    pinned = plan_of(default_planner, lookup, artifacts=tmp_path, llmCallsLeft=4, pins=P(gs="gs-llm-fast"))
    assert pinned.goalSolverOrder == ["gs-llm-fast"]
    for _ in range(4):  # well supported definitions: it serves that kind
        record(default_planner, tmp_path, [gs("gs-llm-fast", "success", 1.0)], defining)
    kept = plan_of(default_planner, defining, artifacts=tmp_path, llmCallsLeft=4)
    assert "gs-llm-fast" in kept.goalSolverOrder


def test_a_batch_of_outcomes_gets_observations_named_by_outcome(tmp_path):
    """planner-default opts in to outcome batches (manifest outcomeBatch): each outcome of
    payload.outcomes is scored as alone, and its observations name it."""
    attempts = [OutcomeAttempt(pluginId="kb-fast", type="kb-plugin", op="retrieve", status="success")]
    one = RecordOutcomePayload(requestId="r1", plannerId="planner-default", attempts=attempts, intents=DEFINE)
    two = msgspec.structs.replace(one, requestId="r2", attempts=attempts * 2)
    request = Request(
        prompt="", context=[], op="recordOutcome", payload=RecordOutcomePayload(outcomes=[one, two])
    )
    doc, failure, _ = default_planner.run(encode_request(request))
    assert failure is None and doc.result.status == "success"
    alone = record(default_planner, tmp_path, attempts, DEFINE).observations
    named = {rid: [o for o in doc.observations if o.outcome == rid] for rid in ("r1", "r2")}
    assert len(named["r1"]) == len(alone) and len(named["r2"]) == 2 * len(alone)
    assert len(doc.observations) == 3 * len(alone)
    assert [o.index for o in doc.observations] == list(range(1, len(doc.observations) + 1))
    # the reply's text carries the names (what the kernel parses)
    from mrpvm.protocol.cnl_render import render_document

    assert parse_document(render_document(doc), "recordOutcome").observations == doc.observations
    (entry,) = [e for e in Registry.load(MANIFESTS_DIR).list() if e.manifest.id == "planner-default"]
    assert entry.manifest.outcomeBatch > 1
