"""`mrpvm eval` (DS021): real runs over the shared suites and tests/support/eval_suites, the JSON shape, the scoring
rules on hand-made cases, and clear one-line errors for bad suites. No LLM, no --combo unless stated."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cli_support import cli_env, mrpvm, one_error_line
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER
from mrpvm.shells.evaluation import (
    Expected,
    ExpectedIntent,
    SuiteError,
    evidence_texts,
    load_suite,
    mentions,
    parse_combo,
    score,
    totals,
)

OWN_SUITES = PROJECT_ROOT / "tests" / "support" / "eval_suites"
OWN = (
    "procedure_manual",
    "product_comparison",
    "fact_graph",
    "markdown_reference",
    "markdown_sync_guide",
    "markdown_handbook",
)
SHARED_NAMES = ("suite01", "suite02", "suite03")


def shared_eval_dir() -> Path | None:
    """../shared/eval relative to the repository root (MRPVM_SHARED_EVAL overrides), if it is there."""
    for candidate in (os.environ.get("MRPVM_SHARED_EVAL"), PROJECT_ROOT.parent / "shared" / "eval"):
        if candidate and all((Path(candidate) / n / "eval.json").is_file() for n in SHARED_NAMES):
            return Path(candidate)
    return None


SHARED = shared_eval_dir()
needs_shared = pytest.mark.skipif(
    SHARED is None, reason="the shared suites (../shared/eval next to the repository) are not present"
)
SUITE_KEYS = {"suiteId", "total", "answerPass", "contextPass", "avgContextF1", "questions"}
QUESTION_KEYS = {"id", "answerPass", "contextPass", "f1", "answer", "plugins"}


def run_eval(home: Path, *args: str, timeout: float = 120):
    return mrpvm(cli_env(home), "eval", *args, timeout=timeout)


def by_id(report: dict) -> dict[str, dict]:
    return {s["suiteId"]: s for s in report["suites"]}


def questions(suite: dict) -> dict[str, dict]:
    return {q["id"]: q for q in suite["questions"]}


# --------------------------------------------------------------------------- hand-made suite that must fail


def write_suite(folder: Path, story: str, spec: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / "story.nl").write_text(story, encoding="utf-8")
    (folder / "eval.json").write_text(json.dumps(spec), encoding="utf-8")
    return folder


FAILING_SPEC = {
    "suiteId": "must-fail",
    "questions": [
        {
            "id": "mf-q01",
            "input": "What colour is the intake pump?",
            "expected": {
                "intents": [{"intentMustMention": ["intake pump"]}],
                "contextMustMention": ["intake pump", "turbine"],
                "contextMustNotMention": ["intake pump"],
                "answerMustMention": ["crimson"],
                "answerMustNotContain": ["blue"],
            },
        }
    ],
}
FAILING_STORY = "The intake pump is painted blue. It moves cooling water from the river to the plant.\n"


# --------------------------------------------------------------------------- fixtures (one process each)


@pytest.fixture(scope="module")
def own_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval-own")
    failing = write_suite(tmp / "must-fail", FAILING_STORY, FAILING_SPEC)
    proc = run_eval(tmp / "home", *(str(OWN_SUITES / n) for n in OWN), str(failing), "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    report["_home"] = str(tmp / "home")
    return report


@pytest.fixture(scope="module")
def shared_report(tmp_path_factory):
    if SHARED is None:
        pytest.skip("the shared suites (../shared/eval next to the repository) are not present")
    home = tmp_path_factory.mktemp("eval-shared")
    proc = run_eval(home, *(str(SHARED / n) for n in SHARED_NAMES), "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------- JSON shape


def check_shape(report: dict, expected_ids: list[str]) -> None:
    assert set(report) - {"_home"} == {"suites"}
    assert [s["suiteId"] for s in report["suites"]] == expected_ids
    for suite in report["suites"]:
        assert set(suite) >= SUITE_KEYS
        qs = suite["questions"]
        assert suite["total"] == len(qs) > 0
        assert suite["answerPass"] == sum(q["answerPass"] for q in qs)
        assert suite["contextPass"] == sum(q["contextPass"] for q in qs)
        assert suite["avgContextF1"] == pytest.approx(sum(q["f1"] for q in qs) / len(qs), abs=1e-4)
        for q in qs:
            assert set(q) >= QUESTION_KEYS
            assert isinstance(q["answerPass"], bool) and isinstance(q["contextPass"], bool)
            assert 0.0 <= q["f1"] <= 1.0 and isinstance(q["answer"], str) and q["answer"]
            assert isinstance(q["plugins"], dict) and q["plugins"].get("gs")
            # F1 is the harmonic mean of the reported recall and precision
            p, r = q["precision"], q["recall"]
            assert q["f1"] == pytest.approx(2 * p * r / (p + r) if p + r else 0.0, abs=1e-3)


def test_json_shape_and_totals_on_own_suites(own_report):
    check_shape(
        own_report,
        [
            "local-procedure-manual",
            "local-product-comparison",
            "local-fact-graph",
            "local-markdown-reference",
            "local-markdown-sync-guide",
            "local-markdown-handbook",
            "must-fail",
        ],
    )


@needs_shared
def test_json_shape_and_totals_on_shared_suites(shared_report):
    check_shape(shared_report, ["suite01", "suite02", "suite03"])


# --------------------------------------------------------------------------- quality on the shared suites


@needs_shared
def test_suite03_is_answered_by_relation_sensitive_retrieval_without_decomposition(shared_report):
    suite = by_id(shared_report)["suite03"]
    assert (suite["answerPass"], suite["contextPass"], suite["total"]) == (2, 2, 2)
    for q in suite["questions"]:
        assert q["plugins"]["kb"] == "kb-thinkingdb" and q["plugins"]["gs"] == "gs-symbolic", q["plugins"]
        assert "####" not in q["answer"]  # answered directly, not split into sub-intents


@needs_shared
def test_suite02_answers_every_question(shared_report):
    suite = by_id(shared_report)["suite02"]
    assert (suite["answerPass"], suite["total"]) == (4, 4)
    assert all(NO_CONTEXT_ANSWER not in q["answer"] for q in suite["questions"])


@needs_shared
def test_suite01_answers_only_what_the_story_states(shared_report):
    """Yes/No or one word only with evidence behind it; otherwise exactly the no-context sentence."""
    suite = by_id(shared_report)["suite01"]
    for q in suite["questions"]:
        answer = q["answer"].strip()
        if answer == NO_CONTEXT_ANSWER:
            continue
        first = re.findall(r"[\w'-]+", answer)[:1]
        assert first and (first[0] in ("Yes", "No") or len(answer.split()) == 1), q
        assert q["evidence"], q  # a verdict is given only from retrieved statements


# --------------------------------------------------------------------------- generality on own suites


def test_own_suites_pass_every_question(own_report):
    for suite in own_report["suites"]:
        if suite["suiteId"] == "must-fail":
            continue
        for q in suite["questions"]:
            assert q["answerPass"] and q["contextPass"], (suite["suiteId"], q)


def test_markdown_tables_and_code_are_read_as_statements_not_quoted_raw(own_report):
    """Table rows come back with their column names; fenced code only when a command is asked for, as
    a fenced block; table pipes never."""
    qs = questions(by_id(own_report)["local-markdown-reference"])
    assert "loom lint — Purpose: Reports templates" in qs["md-q02"]["answer"]
    assert "```\npip install loom-cli\nloom --version\n```" in qs["md-q06"]["answer"]
    for qid, q in qs.items():
        assert "|" not in q["answer"] and "[paths]" not in q["answer"], q
        assert qid == "md-q06" or "```" not in q["answer"], q


def test_markdown_handbook_rows_compete_and_negations_match(own_report):
    """Parallel table rows: only the row that answers ("no network" matches the cell "Needs network: No");
    a table alone under its heading is found through the heading, every row with its column names."""
    qs = questions(by_id(own_report)["local-markdown-handbook"])
    assert qs["hb-q01"]["answer"].startswith("sorter — Job:") and "fetcher" not in qs["hb-q01"]["answer"]
    assert "shipper" in qs["hb-q02"]["answer"] and "fetcher" not in qs["hb-q02"]["answer"]
    assert qs["hb-q03"]["answer"].count("— Job:") == 3


def test_own_fact_graph_is_answered_with_proof_chains(own_report):
    suite = by_id(own_report)["local-fact-graph"]
    qs = questions(suite)
    for qid in ("fg-q01", "fg-q02", "fg-q03"):
        assert qs[qid]["answerPass"] and qs[qid]["contextPass"], qs[qid]
        assert qs[qid]["plugins"]["kb"] == "kb-thinkingdb"


def test_unanswerable_questions_get_exactly_the_no_context_sentence(own_report):
    suites = by_id(own_report)
    for suite_id, qid in (
        ("local-procedure-manual", "pm-q04"),
        ("local-product-comparison", "pc-q04"),
        ("local-fact-graph", "fg-q04"),
    ):
        q = questions(suites[suite_id])[qid]
        assert q["answer"].strip() == NO_CONTEXT_ANSWER, q
        assert q["answerPass"]


def test_two_question_turns_become_two_intents_and_simple_questions_are_not_decomposed(own_report):
    suites = by_id(own_report)
    for suite_id, qid in (("local-procedure-manual", "pm-q02"), ("local-product-comparison", "pc-q03")):
        q = questions(suites[suite_id])[qid]
        assert len(q["intents"]) == 2 and q["intentPass"], q
    for suite in own_report["suites"]:
        for q in suite["questions"]:
            assert q["plugins"].get("gs") != "decomposition", (q["id"], q["answer"])


def test_an_earlier_turns_output_instruction_does_not_shape_later_answers(own_report):
    """pc-q02 says "Answer yes or no."; the next turn's goal solver must not receive that instruction."""
    from mrpvm.kernel.store import Store

    qs = questions(by_id(own_report)["local-product-comparison"])
    store = Store.open(Path(own_report["_home"]))
    try:
        earlier = store.get_turn(qs["pc-q02"]["requestId"])
        later = store.get_turn(qs["pc-q03"]["requestId"])
    finally:
        store.close()
    staged = {
        u for u in json.dumps(earlier.trace).split('"') if u.startswith(f"session::{earlier.requestId}::")
    }
    assert staged, "pc-q02 staged its instruction as a current-turn unit"
    solves = [n for n in later.trace["nodes"] if n.get("op") == "solve"]
    assert solves
    for node in solves:
        assert not set(node["input"].get("guidance", [])) & staged, node["input"]


def test_procedure_steps_come_in_order(own_report):
    q = questions(by_id(own_report)["local-procedure-manual"])["pm-q01"]
    assert q["answerPass"], q
    text = q["answer"]
    assert text.index("K-Clean") < text.index("jug") < text.index("two full tanks")


def test_a_wrong_expectation_fails_and_a_forbidden_term_in_the_evidence_fails_precision(own_report):
    q = questions(by_id(own_report)["must-fail"])["mf-q01"]
    assert q["answerPass"] is False  # "crimson" is never said
    assert q["contextPass"] is False and q["precision"] == 0.0  # the forbidden "intake pump" was used
    assert q["recall"] == 0.5 and q["contextMissing"] == ["turbine"]
    assert q["f1"] == 0.0
    assert q["intentPass"] is True


# --------------------------------------------------------------------------- scoring rules (hand-made)


def test_mentions_is_case_insensitive_on_whole_words_and_phrases():
    assert mentions("Yes. The gate is open.", "yes")
    assert not mentions(NO_CONTEXT_ANSWER, "No")  # "not" and "enough" do not mention "No"
    assert mentions("No — the valve stays shut.", "no")
    assert not mentions("Vexed by the delay", "Vex") and mentions("Commander Vex—a cyborg", "Vex")
    assert mentions("the Aura-City  towers", "aura-city towers")
    assert mentions("the \u201cPrimordial Resonance\u201d began", '"Primordial Resonance"')
    assert not mentions("anything", "   ")


def test_answer_and_context_scoring():
    expected = Expected(
        contextMustMention=["valve", "pump", "turbine"],
        contextMustNotMention=["reactor", "river"],
        answerMustMention=["No"],
        answerMustNotContain=["maybe"],
    )
    s = score(expected, [], ["The valve feeds the pump.", "The river is cold."], "No. The valve is shut.")
    assert s.answerPass and not s.contextPass
    assert s.recall == pytest.approx(2 / 3, abs=1e-4) and s.precision == pytest.approx(0.5)
    assert s.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3), abs=1e-4)
    assert s.contextMissing == ["turbine"] and s.contextForbidden == ["river"]
    assert not score(expected, [], [], "No, maybe later.").answerPass  # forbidden word in the answer
    assert not score(expected, [], [], NO_CONTEXT_ANSWER).answerPass  # "not" is not "No"
    clean = score(expected, [], ["valve pump turbine"], "No.")
    assert clean.contextPass and clean.f1 == 1.0
    empty = score(Expected(), [], [], "")
    assert empty.answerPass and empty.contextPass and empty.f1 == 1.0


def test_intents_match_distinct_detected_intents_in_any_order_unless_ordered():
    pair = [ExpectedIntent(intentMustMention=["pump"]), ExpectedIntent(intentMustMention=["pump", "valve"])]
    detected = ["Why does the pump fail?", "How is the pump tied to the valve?"]
    assert score(Expected(intents=pair), detected, [], "").intentPass
    # one detected intent cannot satisfy two expected ones
    assert not score(Expected(intents=pair), [detected[1]], [], "").intentPass
    ordered = [ExpectedIntent(intentMustMention=t, orderIndependent=False) for t in (["valve"], ["fail"])]
    assert not score(Expected(intents=ordered), detected, [], "").intentPass
    assert score(Expected(intents=ordered), list(reversed(detected)), [], "").intentPass


def unit(uid: str, claim: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        sourceId="s",
        chunkId="s::chunk-000",
        kuType="atomic",
        role="Narrative",
        topic="t",
        claim=claim,
    )


def test_context_is_the_evidence_used_not_the_answer():
    units = {"u1": unit("u1", "The pump is blue."), "u2": unit("u2", "The turbine spins.")}
    document = {
        "groups": [
            {
                "intent": "What colour is the pump?",
                "answerMarkdown": "The turbine and the reactor are unrelated.",
                "evidenceIds": ["u1"],
                "sessionSources": [{"id": "u1"}],
                "subgroups": [{"evidenceIds": ["u2"], "answerMarkdown": "x"}],
            }
        ]
    }
    ids, texts = evidence_texts(document, units)
    assert ids == ["u1", "u2"] and texts == ["The pump is blue.", "The turbine spins."]
    s = score(Expected(contextMustNotMention=["reactor"]), [], texts, "The reactor")
    assert s.contextPass and s.precision == 1.0  # the answer's words are not evidence


# --------------------------------------------------------------------------- errors and options


def test_missing_folder_and_bad_eval_json_are_one_line_errors(tmp_path):
    home = tmp_path / "home"
    proc = run_eval(home, str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "suite folder not found" in one_error_line(proc)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "eval.json").write_text("{not json")
    proc = run_eval(home, str(broken))
    assert proc.returncode == 2 and "not valid JSON" in one_error_line(proc)
    (broken / "eval.json").write_text(json.dumps({"suiteId": "x", "questions": []}))
    (broken / "story.nl").write_text("A story.")
    proc = run_eval(home, str(broken))
    assert proc.returncode == 2 and "no questions" in one_error_line(proc)
    (broken / "eval.json").write_text(json.dumps({"suiteId": "x", "questions": [{"id": "a"}]}))
    proc = run_eval(home, str(broken))
    assert proc.returncode == 2 and "input" in one_error_line(proc)
    proc = run_eval(home, str(OWN_SUITES / "fact_graph"), "--combo", "sd-symbolic,kb-nope,gs-symbolic")
    line = one_error_line(proc)
    assert proc.returncode == 2 and "--combo: no kb-plugin 'kb-nope'" in line and "kb-fast" in line


def test_load_suite_and_parse_combo_in_process(tmp_path):
    suite = load_suite(OWN_SUITES / "fact_graph")
    assert suite.spec.suiteId == "local-fact-graph" and "Orchard uses Beacon." in suite.story
    outside = write_suite(
        tmp_path / "s",
        "x",
        {"suiteId": "s", "storyFile": "../../etc/passwd", "questions": [{"id": "a", "input": "Why?"}]},
    )
    with pytest.raises(SuiteError, match="outside the suite folder"):
        load_suite(outside)
    assert parse_combo("sd-symbolic,-,gs-symbolic").kb is None
    assert parse_combo(None).sd is None
    with pytest.raises(Exception, match="three plugin ids"):
        parse_combo("sd-symbolic,kb-fast")


def test_combo_pins_every_question_and_the_table_is_printed(tmp_path):
    home = tmp_path / "home"
    proc = run_eval(
        home, str(OWN_SUITES / "fact_graph"), "--combo", "sd-symbolic,kb-fast,gs-symbolic", "--json"
    )
    assert proc.returncode == 0, proc.stderr.decode()
    suite = json.loads(proc.stdout)["suites"][0]
    assert suite["pins"] == {"sd": "sd-symbolic", "kb": "kb-fast", "gs": "gs-symbolic"}
    assert {q["plugins"]["kb"] for q in suite["questions"]} == {"kb-fast"}
    table = run_eval(home, str(OWN_SUITES / "fact_graph"))
    assert table.returncode == 0, table.stderr.decode()
    text = table.stdout.decode()
    assert "local-fact-graph" in text and "fg-q01" in text
    assert re.search(r"answers \d/4 · context \d/4", text)


# --------------------------------------------------------------------------- strict passes, refusals, matrix

REFUSAL = ["not contain enough evidence"]


def test_strict_pass_needs_the_answer_to_fit_and_refusals_are_classified():
    fits = Expected(answerMustMention=["blue"], answerMaxChars=20)
    assert score(fits, [], [], "The pump is blue.").answerStrictPass
    long = score(fits, [], [], "The pump, which the crew repainted last spring, is blue.")
    assert long.answerPass and not long.answerStrictPass and long.answerChars == 56
    assert score(Expected(answerMustMention=["blue"]), [], [], "blue " * 200).answerStrictPass  # no limit
    wants_refusal = Expected(answerMustMention=REFUSAL)
    refused = score(wants_refusal, [], [], NO_CONTEXT_ANSWER)
    assert refused.expectsRefusal and refused.refused and not refused.falseAnswer
    invented = score(wants_refusal, [], [], "The pump is green.")
    assert invented.falseAnswer and not invented.refused and not invented.falseRefusal
    withheld = score(fits, [], [], NO_CONTEXT_ANSWER)
    assert withheld.falseRefusal and not withheld.expectsRefusal and not withheld.answerStrictPass
    # a short phrase that happens to occur in the sentence does not make a question unanswerable
    assert not score(Expected(answerMustMention=["evidence"]), [], [], "x").expectsRefusal
    figures = totals([refused, invented, withheld, long, score(fits, [], [], "It is blue.")])
    assert (figures.unanswerable, figures.refusedUnanswerable) == (2, 1)
    assert (figures.falseRefusals, figures.falseAnswers, figures.answerStrictPass) == (1, 1, 2)
    assert figures.medianAnswerChars == 18.0  # refusals are not answers: median of 18, 56, 11


STRICT_STORY = """The intake pump is painted blue. It moves cooling water from the river to the plant.
The night shift inspects the intake pump every Tuesday.
"""
STRICT_SPEC = {
    "suiteId": "strict-check",
    "pluginCombos": [
        {
            "label": "fast",
            "seedDetectorPlugin": "sd-symbolic",
            "kbPlugin": "kb-fast",
            "goalSolverPlugin": "gs-symbolic",
        },
        {"kbPlugin": "kb-balanced"},
    ],
    "questions": [
        {
            "id": "sc-q01",
            "input": "What colour is the intake pump?",
            "expected": {"answerMustMention": ["blue"], "answerMaxChars": 200},
        },
        {
            "id": "sc-q02",
            "input": "What colour is the intake pump?",
            "expected": {"answerMustMention": ["blue"], "answerMaxChars": 5},
        },
        {
            "id": "sc-q03",
            "input": "Who designed the turbine hall of the plant?",
            "expected": {"answerMustMention": REFUSAL},
        },
    ],
}


def test_matrix_runs_every_combo_in_its_own_session_and_reports_strict_figures(tmp_path):
    folder = write_suite(tmp_path / "strict", STRICT_STORY, STRICT_SPEC)
    proc = run_eval(tmp_path / "home", str(folder), "--matrix", "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    engine, runs = report["suites"][0], report["matrix"]
    assert engine["combo"] == "engine" and engine["pins"] == {}
    assert [r["combo"] for r in runs] == ["fast", "kb-balanced"]
    assert runs[0]["pins"] == {"sd": "sd-symbolic", "kb": "kb-fast", "gs": "gs-symbolic"}
    assert {q["plugins"]["kb"] for q in runs[1]["questions"]} == {"kb-balanced"}
    assert len({engine["sessionId"], *(r["sessionId"] for r in runs)}) == 3
    for run in (engine, *runs):
        q = questions(run)
        assert q["sc-q01"]["answerStrictPass"] and q["sc-q02"]["answerPass"]
        assert not q["sc-q02"]["answerStrictPass"]  # right, but longer than 5 characters
        assert q["sc-q03"]["refused"] and q["sc-q03"]["expectsRefusal"]
        assert run["answerStrictPass"] == 2 and (run["unanswerable"], run["refusedUnanswerable"]) == (1, 1)
        assert run["falseRefusals"] == 0 and run["falseAnswers"] == 0
        assert run["medianAnswerChars"] == q["sc-q01"]["answerChars"] > 0
    table = run_eval(tmp_path / "home", str(folder), "--matrix")
    text = table.stdout.decode()
    assert table.returncode == 0 and "plugin combos side by side" in text and "LONG" in text
    assert re.search(r"fast: strict 2/3", text) and "refused unanswerable 1/1" in text


def test_matrix_rejects_combo_and_bad_plugin_combos_are_one_line_errors(tmp_path):
    home = tmp_path / "home"
    proc = run_eval(home, str(OWN_SUITES / "fact_graph"), "--matrix", "--combo", "sd-symbolic,-,-")
    assert proc.returncode == 2 and "--matrix" in one_error_line(proc)
    spec = dict(STRICT_SPEC, pluginCombos=[{"label": "x", "kbPlugin": "kb-nope"}])
    folder = write_suite(tmp_path / "nope", STRICT_STORY, spec)
    proc = run_eval(home, str(folder), "--matrix")
    assert proc.returncode == 2 and "pluginCombos 'x': no kb-plugin 'kb-nope'" in one_error_line(proc)
    twice = dict(STRICT_SPEC, pluginCombos=[{"kbPlugin": "kb-fast"}, {"kbPlugin": "kb-fast"}])
    proc = run_eval(home, str(write_suite(tmp_path / "twice", STRICT_STORY, twice)))
    assert proc.returncode == 2 and "distinct" in one_error_line(proc)
    zero = dict(STRICT_SPEC, questions=[{"id": "a", "input": "Why?", "expected": {"answerMaxChars": 0}}])
    proc = run_eval(home, str(write_suite(tmp_path / "zero", STRICT_STORY, zero)))
    assert proc.returncode == 2 and "answerMaxChars" in one_error_line(proc)


def test_a_suite_scores_the_same_alone_or_after_others_and_the_home_keeps_what_it_learned(tmp_path):
    from mrpvm.kernel.store import Store
    from mrpvm.protocol.document import Observation

    home = tmp_path / "home"
    home.mkdir()
    store = Store.open(home)
    store.record_planner_outcome("planner-default", True, 12.0)
    store.record_observations("planner-default", None, [Observation(index=1, plugin="kb-fast", success=1.0)])
    before, learned = store.planner_stats(), store.learning_snapshot()
    store.close()
    alone = run_eval(tmp_path / "alone", str(OWN_SUITES / "markdown_reference"), "--json")
    after = run_eval(
        home, str(OWN_SUITES / "procedure_manual"), str(OWN_SUITES / "markdown_reference"), "--json"
    )
    assert alone.returncode == 0 and after.returncode == 0, after.stderr.decode()
    answers = [
        [(q["id"], q["answer"], q["plugins"]) for q in questions(s).values()]
        for s in (json.loads(alone.stdout)["suites"][0], json.loads(after.stdout)["suites"][1])
    ]
    assert answers[0] == answers[1]
    store = Store.open(home)
    assert store.planner_stats() == before  # the evaluation's turns did not change what the home learned
    assert store.learning_snapshot() == learned
    store.close()
