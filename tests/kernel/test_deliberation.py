"""Comparative deliberation (kernel/engine/deliberation.py): more candidates per seed, scored, the best kept.

Scripted plugins show the mechanics (which candidates are explored, what wins and why, budgets); the
evaluation suites run through the engine at level 0 and level 2 show deliberation never gives a worse
answer than level 0 on our suites.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from engine_support import Harness, intent, nodes, unit
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.kernel.engine.deliberation import MARGIN, Candidate, content_words, score
from mrpvm.kernel.engine.response import SeedOutcome
from mrpvm.kernel.engine.views import View
from mrpvm.kernel.errors import BadInput
from mrpvm.kernel.store import Store
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.shells.evaluation import run_eval

FACT = unit("session::t::unit-000", "The zorblax lives in Norway near the fjords")
OTHER = unit("session::t::unit-001", "Beta is a gadget")
QUESTION = "Where does the zorblax live"


def script(gs_a: dict, gs_b: dict, **extra: dict) -> dict:
    return {
        "sd-a": {"detectSeeds": {"intents": [intent(QUESTION)], "units": [FACT, OTHER]}},
        "kb-a": {"retrieve": {"select": "all"}},
        "gs-a": {"solve": gs_a},
        "gs-b": {"solve": gs_b},
        **extra,
    }


UNRELATED = {"answer": "Something else entirely, answered from nothing", "sources": []}
GROUNDED = {"answer": "The zorblax lives in Norway, near the fjords.", "sources": "evidence"}


def candidates(result) -> list[dict]:
    return nodes(result, kind="candidate")


def chooses(result) -> list[dict]:
    return [e for e in result.execution_trace["edges"] if e["kind"] == "chooses"]


def test_level_0_returns_the_first_accepted_answer_and_explores_nothing(tmp_path):
    h = Harness(tmp_path, script(UNRELATED, GROUNDED))
    result = h.ask(QUESTION)
    assert result.response_document["groups"][0]["answerMarkdown"].startswith("Something else")
    assert not candidates(result) and not chooses(result)
    assert [c["plugin"] for c in h.calls(op="solve")] == ["gs-a"]
    assert result.deliberation_level == 0


def test_level_2_explores_more_candidates_and_keeps_the_supported_one(tmp_path):
    h = Harness(tmp_path, script(UNRELATED, GROUNDED))
    result = h.ask(QUESTION, deliberation_level=2)
    answer = result.response_document["groups"][0]["answerMarkdown"]
    assert answer == GROUNDED["answer"]
    found = candidates(result)
    assert [n["output"]["gsPlugin"] for n in found] == ["gs-a", "gs-b"]
    first, second = found
    assert second["output"]["terms"]["support"] > first["output"]["terms"]["support"]
    assert second["output"]["score"] >= first["output"]["score"] + MARGIN
    (edge,) = chooses(result)
    seed = nodes(result, kind="seed")[0]
    assert (edge["src"], edge["dst"]) == (seed["id"], second["id"])
    assert "highest score" in edge["reason"] and "support" in edge["reason"]
    # every candidate is linked to the solve that produced it
    solves = {n["id"]: n["pluginId"] for n in nodes(result, kind="plugin", op="solve")}
    produced = {e["dst"]: e["src"] for e in result.execution_trace["edges"] if e["kind"] == "produces"}
    assert [solves[produced[n["id"]]] for n in found] == ["gs-a", "gs-b"]
    assert result.deliberation_level == 2


def test_an_accepted_answer_beats_an_unvalidated_one(tmp_path):
    accepted = {"answer": "Zorblax: Norway (checked).", "sources": "evidence"}
    validator = {"validate": [{"when": {"answerContains": "checked"}, "status": "accepted"}]}
    h = Harness(tmp_path, script(GROUNDED, accepted, **{"val-a": validator}))
    result = h.ask(QUESTION, deliberation_level=1)
    first, second = candidates(result)
    assert (first["status"], second["status"]) == ("unvalidated", "accepted")
    assert result.response_document["groups"][0]["answerMarkdown"] == accepted["answer"]
    assert result.response_document["groups"][0]["validation"] == "accepted"


def test_a_rejected_answer_never_competes_and_a_tie_keeps_the_first(tmp_path):
    twin = {"answer": "The zorblax lives in Norway, near the fjords!", "sources": "evidence"}
    rejected = {"answer": "The zorblax lives in Norway near the fjords REJECT", "sources": "evidence"}
    validator = {"validate": [{"when": {"answerContains": "REJECT"}, "status": "rejected"}]}
    h = Harness(
        tmp_path,
        script(GROUNDED, rejected, **{"gs-c": {"solve": twin}, "val-a": validator}),
    )
    result = h.ask(QUESTION, deliberation_level=3)
    assert [n["output"]["gsPlugin"] for n in candidates(result)] == ["gs-a", "gs-c"]
    (edge,) = chooses(result)
    assert edge["dst"] == candidates(result)[0]["id"] and "first answer kept" in edge["reason"]
    assert result.response_document["groups"][0]["answerMarkdown"] == GROUNDED["answer"]


def test_exploration_goes_on_to_the_next_knowledge_view(tmp_path):
    """After the view's gs candidates, the next kb-plugin's view is explored; a view with the same
    evidence is skipped (same answers)."""
    h = Harness(
        tmp_path,
        script(
            GROUNDED,
            {"status": "unsupported"},
            **{"kb-b": {"retrieve": {"select": "all"}}, "kb-c": {"retrieve": {"select": 1}}},
        ),
        orders={"gs": ["gs-a", "gs-b"]},
    )
    result = h.ask(QUESTION, deliberation_level=3)
    labels = [n["label"] for n in nodes(result, kind="event") if n["label"].startswith("knowledge view")]
    assert len(labels) == 3
    assert "same evidence as an explored view" in labels[1]
    assert [n["output"]["kbPlugin"] for n in candidates(result)] == ["kb-a", "kb-c"]


def test_deliberation_respects_the_llm_budget(tmp_path):
    """A candidate whose plugin declares more LLM calls than are left is skipped, not run."""
    h = Harness(
        tmp_path,
        script(GROUNDED, GROUNDED, **{"gs-llm": {"solve": GROUNDED}}),
        orders={"gs": ["gs-a", "gs-llm"]},
    )
    h.environ["MRPVM_LLM_BASE_URL"] = "http://127.0.0.1:9/v1"  # configured (never reached): gs-llm is planned
    result = h.ask(QUESTION, deliberation_level=2, max_llm_calls=0)
    llm_nodes = nodes(result, kind="plugin", pluginId="gs-llm")
    assert llm_nodes and all(n["status"] == "skipped-budget" for n in llm_nodes)
    assert not h.calls("gs-llm") and result.llm_calls == 0
    assert len(candidates(result)) == 1


def test_the_level_is_checked_and_a_session_preference_applies(tmp_path):
    h = Harness(tmp_path, script(UNRELATED, GROUNDED))

    async def go():
        ctx = await h.open()
        try:
            from mrpvm.kernel.engine import TurnRequest, run_turn

            with pytest.raises(BadInput) as bad:
                await run_turn(ctx, TurnRequest(message=QUESTION, deliberation_level=4))
            session = ctx.store.create_session(deliberation_level=2)
            preferred = await run_turn(ctx, TurnRequest(message=QUESTION, session_id=session.id))
            overridden = await run_turn(
                ctx, TurnRequest(message=QUESTION, session_id=session.id, deliberation_level=0)
            )
            return bad.value, preferred, overridden
        finally:
            await ctx.aclose()

    bad, preferred, overridden = anyio.run(go)
    assert bad.code == "BAD_DELIBERATION"
    assert preferred.deliberation_level == 2 and len(candidates(preferred)) == 2
    assert overridden.deliberation_level == 0 and not candidates(overridden)


def test_the_one_deliberation_limit_refuses_levels_outside_it():
    """budgets.check_deliberation is what turns, kb_ops.create_session and `session set` all apply."""
    from mrpvm.kernel.budgets import MAX_DELIBERATION, check_deliberation

    assert [check_deliberation(n) for n in (None, 0, MAX_DELIBERATION)] == [None, 0, MAX_DELIBERATION]
    for bad_level in (-1, MAX_DELIBERATION + 1):
        with pytest.raises(BadInput) as bad:
            check_deliberation(bad_level)
        assert bad.value.code == "BAD_DELIBERATION"
        assert bad.value.details["allowed"] == list(range(MAX_DELIBERATION + 1))


# --------------------------------------------------------------------------- the scoring rule


def _unit(uid: str, claim: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid, sourceId="s", chunkId="s::c", kuType="atomic", role="Description", topic="t", claim=claim
    )


def _candidate(
    answer: str, evidence: list[KnowledgeUnit], validation="unvalidated", sufficient=True
) -> Candidate:
    outcome = SeedOutcome(
        intent=IntentGroup(act="identify", intent="Which port does the relay use?", output="answer"),
        ref="intent-1",
        status="success",
        frame_id="f",
        answer=answer,
        sources=[u.id for u in evidence],
        evidence=evidence,
        validation=validation,
        confidence="medium",
    )
    view = View(
        plugin_id="kb", sufficient=sufficient, evidence=evidence, guidance=[], resolved=None, node=None
    )
    return Candidate(outcome, view)


def test_the_rule_prefers_coverage_support_and_verdict():
    relay = _unit("a", "The relay uses port 8443 for its control channel")
    other = _unit("b", "The dashboard shows graphs of traffic")
    covered = _candidate("The relay uses port 8443.", [relay])
    uncovered = _candidate("The dashboard shows graphs.", [other])
    unsupported = _candidate("The relay probably uses port 9000 over websockets.", [relay])
    accepted = _candidate("The relay uses port 8443.", [relay], validation="accepted")
    assert score(covered) > score(uncovered)
    assert covered.terms["coverage"] > uncovered.terms["coverage"]
    assert score(covered) > score(unsupported)
    assert covered.terms["support"] == 1.0 > unsupported.terms["support"]
    assert score(accepted) - score(covered) == pytest.approx(1.0)
    assert score(_candidate("x", [relay], sufficient=False)) < score(_candidate("x", [relay]))


def test_content_words_fold_forms_and_drop_function_words():
    assert content_words("The relays were using ports") == {"relay", "using", "port"}
    assert content_words("indexing indexed indexes") == {"index"}
    assert "the" not in content_words("the THE The") and content_words("Norway") == {"norway"}


# --------------------------------------------------------------------------- the suites


def _suites() -> list[Path]:
    own = sorted((PROJECT_ROOT / "tests" / "support" / "eval_suites").iterdir())
    shared = PROJECT_ROOT.parent / "shared" / "eval"
    more = [shared / n for n in ("suite01", "suite02", "suite03") if (shared / n / "eval.json").is_file()]
    return [p for p in own if (p / "eval.json").is_file()] + more


def _run(home: Path, level: int):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")} | {"MRPVM_HOME": str(home)}
    return anyio.run(lambda: run_eval(_suites(), environ=environ, deliberation_level=level))


def test_level_2_is_never_worse_than_level_0_on_the_suites(tmp_path):
    base = _run(tmp_path / "level0", 0)
    deliberate = _run(tmp_path / "level2", 2)
    compared = 0
    for before, after in zip(base.suites, deliberate.suites, strict=True):
        assert before.suiteId == after.suiteId
        for q0, q2 in zip(before.questions, after.questions, strict=True):
            assert q2.answerPass >= q0.answerPass, f"{before.suiteId}/{q0.id}: {q0.answer!r} -> {q2.answer!r}"
            assert q2.contextPass >= q0.contextPass, f"{before.suiteId}/{q0.id}"
            compared += 1
        assert after.avgContextF1 >= before.avgContextF1
    assert compared >= 20
    # level 2 really compared answers: several questions hold more than one candidate
    with Store.open(tmp_path / "level2") as store:
        traces = [t.trace for s in store.list_sessions() for t in store.list_turns(s.id)]
    compared_turns = [t for t in traces if sum(n["kind"] == "candidate" for n in t["nodes"]) >= 2]
    assert len(compared_turns) >= 3
    for trace in compared_turns:
        picks = [e for e in trace["edges"] if e["kind"] == "chooses"]
        assert picks and all(e.get("reason") for e in picks)
