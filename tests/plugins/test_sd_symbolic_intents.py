"""sd-symbolic detectSeeds: act detection, multi-question splitting, instructions as scoped KUs, Output shaping."""

from __future__ import annotations

import pytest
from mrpvm.plugins.sd_symbolic.turn_seeds.acts import detect_act
from mrpvm.plugins.sd_symbolic.turn_seeds.intents import detect_seeds
from mrpvm.protocol.envelope import DetectSeedsPayload
from mrpvm.protocol.vocab import ACTS, PHASE_SCOPES


def seeds(prompt: str, **payload):
    return detect_seeds(
        prompt, DetectSeedsPayload(turnId=payload.pop("turnId", "t1"), **payload), created_at="x"
    )


# --------------------------------------------------------------------------- acts

ACT_CASES = [
    # yes/no -> evaluate
    ("Is the bridge open to cyclists on weekends?", "evaluate"),
    ("Does the warranty cover water damage?", "evaluate"),
    ("Were the harvest records kept in the monastery?", "evaluate"),
    ("Can a tenant sublet the flat without consent?", "evaluate"),
    ("Would the orchard survive a late frost?", "evaluate"),
    ("If the river flooded in spring, would the mill still operate?", "evaluate"),
    ("Given the new tariff, will imports of steel fall?", "evaluate"),
    # identify
    ("Which valve controls the hot water supply?", "identify"),
    ("Who signed the treaty on behalf of the guild?", "identify"),
    ("Name the river that feeds the reservoir.", "identify"),
    ("What is the name of the ship's navigator?", "identify"),
    ("How many moons does the planet have?", "identify"),
    ("Where was the archive moved after the fire?", "identify"),
    ("According to the report, who approved the budget?", "identify"),
    ("In which year did the canal open?", "identify"),
    ("What is the capital of the northern province?", "identify"),
    # implement
    ("How do I rotate the API keys without downtime?", "implement"),
    ("How to replace a bicycle chain?", "implement"),
    ("What are the steps to renew a passport?", "implement"),
    ("Walk me through setting up a sourdough starter.", "implement"),
    # explain
    ("Why did the colony abandon the northern settlement?", "explain"),
    ("Explain the role of enzymes in digestion.", "explain"),
    ("How does a heat pump move warmth indoors?", "explain"),
    ("What caused the decline of the silk trade?", "explain"),
    ("Could you explain why interest rates rose?", "explain"),
    ("What is the purpose of the overflow valve?", "explain"),
    ("What are the main causes of coastal erosion?", "explain"),
    # compare
    ("Compare solar and wind power for rural villages.", "compare"),
    ("What is the difference between a lease and a licence?", "compare"),
    ("How does the old charter differ from the new one?", "compare"),
    ("Rust versus Go for embedded firmware: which trade-offs matter?", "compare"),
    # define
    ("What is photosynthesis?", "define"),
    ("Define amortization.", "define"),
    ("What does the term escrow mean?", "define"),
    ("What is a mutex?", "define"),
    # recommend
    ("Should I repaint the fence before winter?", "recommend"),
    ("Which laptop would you recommend for video editing?", "recommend"),
    ("What is the best way to store fresh herbs?", "recommend"),
    # diagnose
    ("Why does the printer fail when I send large files?", "diagnose"),
    ("Diagnose the intermittent noise in the gearbox.", "diagnose"),
    ("The service keeps failing with a timeout error after the upgrade, what is wrong?", "diagnose"),
    ("How do I fix the permission error on the shared drive?", "diagnose"),
    # verify
    ("Verify that the invoice totals match the ledger.", "verify"),
    ("Check whether the contract allows early termination.", "verify"),
    ("Is it true that the festival moved to October?", "verify"),
    ("Confirm the meeting room can hold forty people.", "verify"),
    # describe
    ("Describe the layout of the old town.", "describe"),
    ("Tell me about the founding of the observatory.", "describe"),
    ("What happened at the harbour during the storm?", "describe"),
    ("Summarize the findings of the audit.", "describe"),
]


@pytest.mark.parametrize(("question", "act"), ACT_CASES)
def test_act_detection(question: str, act: str) -> None:
    assert detect_act(question)[0] == act


def test_every_act_is_in_the_vocabulary() -> None:
    assert {act for _, act in ACT_CASES} == set(ACTS)


# --------------------------------------------------------------------------- splitting


SPLIT_CASES = [
    (
        "Who built the lighthouse? Also, when was it restored?",
        ["Who built the lighthouse?", "When was it restored?"],
    ),
    (
        "What does the ferry cost and also how long is the crossing?",
        ["What does the ferry cost?", "How long is the crossing?"],
    ),
    (
        "Compare the two mortgage offers and explain which fees are negotiable.",
        ["Compare the two mortgage offers.", "Explain which fees are negotiable."],
    ),
    (
        "1. What is the capital of the province?\n2. Which river crosses it?\n3. Is it older than the port?",
        ["What is the capital of the province?", "Which river crosses it?", "Is it older than the port?"],
    ),
    ("Who wrote the ballad, and why was it banned?", ["Who wrote the ballad?", "Why was it banned?"]),
    ("Why did the dam crack? What repairs were made afterwards?", None),
    ("Q1: Where is the depot? Q2: When does it open?", ["Where is the depot?", "When does it open?"]),
]


@pytest.mark.parametrize(("prompt", "expected"), SPLIT_CASES)
def test_multi_question_splitting(prompt: str, expected: list[str] | None) -> None:
    outcome = seeds(prompt)
    texts = [i.intent for i in outcome.intents]
    if expected is None:
        assert len(texts) == 2
    else:
        assert texts == expected
    assert [i.index for i in outcome.intents] == list(range(1, len(texts) + 1))


def test_single_question_stays_single() -> None:
    for prompt in (
        "How do salmon find their way back to the river where they hatched?",
        "Explain how and why the tides change.",
        "What are the advantages of terraced farming on steep slopes?",
    ):
        assert len(seeds(prompt).intents) == 1, prompt


def test_follow_up_question_inherits_entities() -> None:
    outcome = seeds("Describe the Hanseatic League. How did it decline?")
    assert len(outcome.intents) == 2
    assert "Hanseatic League" in outcome.intents[1].context


# --------------------------------------------------------------------------- instructions and Output


def scoped(outcome, scope: str):
    return [u for u in outcome.units if scope in u.phaseScopes]


def test_one_word_instruction_is_a_gs_unit_and_shapes_output() -> None:
    outcome = seeds("Which metal did the smiths prefer for the gates? Answer in one word.")
    assert len(outcome.intents) == 1
    assert outcome.intents[0].output == "single word"
    assert "one word" not in outcome.intents[0].intent.lower()
    gs = scoped(outcome, "gs-plugin")
    assert len(gs) == 1 and "one word" in gs[0].claim.lower()
    assert gs[0].claim == "Answer in one word." and gs[0].utilityNote.endswith("applies to intent-1")
    assert gs[0].role == "Constraint" and gs[0].id == "session::t1::unit-000"


def test_yes_no_instruction() -> None:
    outcome = seeds("Did the expedition reach the summit? Yes or No.")
    assert outcome.intents[0].act == "evaluate"
    assert outcome.intents[0].output == "yes/no"
    assert len(scoped(outcome, "gs-plugin")) == 1


def test_leading_instruction_is_removed_from_the_intent() -> None:
    outcome = seeds("Answer yes or no: is the museum free on Sundays?")
    assert outcome.intents[0].intent == "Is the museum free on Sundays?"
    assert outcome.intents[0].output == "yes/no"


def test_single_word_on_a_yes_no_question_means_yes_no() -> None:
    outcome = seeds("One word only. Was the treaty ever ratified?")
    assert outcome.intents[0].output == "yes/no"


def test_instruction_after_several_questions_applies_to_all() -> None:
    outcome = seeds("Who founded the abbey? When was it dissolved? Be brief.")
    assert [i.output for i in outcome.intents] == ["brief", "brief"]
    note = scoped(outcome, "gs-plugin")[0].utilityNote or ""
    assert "intent-1" in note and "intent-2" in note


def test_instruction_between_questions_applies_to_the_one_before() -> None:
    outcome = seeds("Which gate faces north? Answer in one word. Why was the wall built? Explain in detail.")
    assert [i.output for i in outcome.intents] == ["single word", "paragraph"]


def test_decomposition_hint_is_frame_scoped_and_asks_for_steps() -> None:
    prompt = "Explain how the canal locks raise a boat, step by step."
    outcome = seeds(prompt)
    assert len(outcome.intents) == 1
    assert outcome.intents[0].output == "steps"
    assert "step by step" not in outcome.intents[0].intent
    frame = scoped(outcome, "frame")
    assert len(frame) == 1
    assert prompt[frame[0].charStart : frame[0].charEnd] == "step by step"


def test_separate_decomposition_sentence() -> None:
    outcome = seeds("Explain how the drought led to the famine. Trace every intermediate step.")
    assert len(outcome.intents) == 1
    frame = scoped(outcome, "frame")
    assert len(frame) == 1 and frame[0].claim.startswith("Trace every intermediate step")


def test_planning_hint_goes_to_the_planner() -> None:
    outcome = seeds("Use the deep solver. Why did the bridge collapse?")
    plan = scoped(outcome, "mrp-plan-plugin")
    assert len(plan) == 1 and "deep solver" in plan[0].claim
    assert len(outcome.intents) == 1


def test_validation_rule_goes_to_the_validator() -> None:
    outcome = seeds("What did the inspector conclude about the boiler? Cite your sources.")
    val = scoped(outcome, "val-plugin")
    assert len(val) == 1 and "Cite" in val[0].claim
    assert len(outcome.intents) == 1


def test_detailed_answers_instruction_is_not_an_intent() -> None:
    outcome = seeds("Provide detailed, grounded answers. Why did the guild lose its charter?")
    assert len(outcome.intents) == 1
    assert outcome.intents[0].output == "paragraph"
    units = scoped(outcome, "gs-plugin")
    assert len(units) == 1 and set(units[0].phaseScopes) >= {"gs-plugin", "val-plugin"}


def test_statements_become_kb_units_with_a_role() -> None:
    outcome = seeds(
        "Our cluster runs on three nodes. The database depends on the storage array. Why is the nightly job slow?"
    )
    assert len(outcome.intents) == 1 and outcome.intents[0].act == "diagnose"
    kb = [u for u in outcome.units if u.phaseScopes == ["kb-plugin"]]
    assert len(kb) == 2
    fact = next(u for u in kb if u.relation)
    assert (fact.subject, fact.relation, fact.object) == ("database", "depends_on", "storage array")
    assert all(u.id.startswith("session::t1::unit-") for u in outcome.units)
    assert all(u.sourceId == "session::t1" for u in outcome.units)


def test_turn_of_only_a_statement_still_yields_an_intent() -> None:
    outcome = seeds("The boiler keeps failing with a pressure error since Monday.")
    assert len(outcome.intents) == 1
    assert outcome.intents[0].act == "diagnose"


def test_context_criterion_evidence_are_filled() -> None:
    intent = seeds("Why did Marco Polo travel to the court of Kublai Khan?").intents[0]
    assert "Marco Polo" in intent.context and "Kublai Khan" in intent.context
    assert intent.criterion and intent.evidence
    assert "Explanation" in intent.evidence


@pytest.mark.parametrize(
    ("prompt", "output"),
    [
        ("List the ingredients of a classic pesto.", "list"),
        ("How do I descale an espresso machine?", "steps"),
        ("Compare trams and buses for a small city.", "comparison"),
        ("Is the castle open in winter?", "yes/no"),
        ("Why do leaves change colour in autumn?", "paragraph"),
        ("Describe the harbour briefly.", "brief"),
        ("Give me a short summary of the inspection report.", "brief"),
    ],
)
def test_output_detection(prompt: str, output: str) -> None:
    assert seeds(prompt).intents[0].output == output


def test_scopes_are_from_the_vocabulary() -> None:
    outcome = seeds("Step by step, and quickly: how do I graft an apple tree? Cite sources. Keep it short.")
    for unit in outcome.units:
        assert unit.phaseScopes and set(unit.phaseScopes) <= set(PHASE_SCOPES)


# --------------------------------------------------------------------------- decompose mode


def test_decompose_compare_into_sides() -> None:
    outcome = seeds("Compare the diets of wolves and foxes.", mode="decompose")
    texts = [i.intent for i in outcome.intents]
    assert texts[:2] == ["Describe the diets of wolves.", "Describe the diets of foxes."]
    assert outcome.intents[-1].act == "compare"


def test_decompose_causal_chain() -> None:
    outcome = seeds(
        "Explain how the invention of the compass led to the age of exploration.", mode="decompose"
    )
    texts = [i.intent for i in outcome.intents]
    assert len(texts) == 3
    assert "compass" in texts[0] and "age of exploration" in texts[1]


def test_decompose_keeps_several_questions_apart() -> None:
    outcome = seeds("Who designed the bridge? Why was it closed?", mode="decompose")
    assert len(outcome.intents) == 2


@pytest.mark.parametrize("prompt", ["1.", "?", "Be brief.", "!!!", "🙂", "Q1:\n\n2)", "Also, and"])
def test_degenerate_prompts_still_give_valid_cnl(prompt: str) -> None:
    from mrpvm.protocol.cnl import parse_document, render_document
    from mrpvm.protocol.document import CnlDocument, PluginResult

    outcome = seeds(prompt)
    assert outcome.intents and all(i.intent.strip() for i in outcome.intents)
    doc = CnlDocument(
        result=PluginResult(status="success", plugin="sd-symbolic", confidence=outcome.confidence),
        intents=outcome.intents,
        units=outcome.units,
    )
    assert len(parse_document(render_document(doc), "detectSeeds").intents) == len(outcome.intents)


def test_decompose_keeps_the_parent_reading() -> None:
    from mrpvm.protocol.document import IntentGroup

    parent = IntentGroup(
        act="explain",
        intent="What skills and tools made her the right pilot?",
        output="brief",
        context="Captain Ilse Moreau; pilot",
    )
    outcome = seeds(parent.intent, mode="decompose", parentIntent=parent)
    texts = [i.intent for i in outcome.intents]
    assert texts[:2] == ["What skills made her the right pilot?", "What tools made her the right pilot?"]
    assert all("Ilse Moreau" in i.context for i in outcome.intents)
    assert outcome.intents[-1].output == "brief" and outcome.intents[-1].act == "explain"


@pytest.mark.parametrize(
    "prompt",
    [
        "Why is the local cache kept after a restart?",
        "Explain how the scheduler assigns jobs to workers.",
        "How does the indexer handle deleted files?",
        "Explain why the mill is relevant for flood control.",
        "What is the relationship between the guild and the council?",
        "Describe how the north office and the south office handle onboarding.",  # plural verb: kept whole
        "Describe the trip from Lisbon to Porto.",  # "from … to" without a causal cue
    ],
)
def test_decompose_returns_the_intent_unchanged_when_nothing_splits_soundly(prompt: str) -> None:
    outcome = seeds(prompt, mode="decompose")
    assert [i.intent for i in outcome.intents] == [prompt]


@pytest.mark.parametrize(
    ("prompt", "subs"),
    [
        (
            "What are the opening hours of the Harbour Museum and the Mill Gallery?",
            [
                "What are the opening hours of the Harbour Museum?",
                "What are the opening hours of the Mill Gallery?",
            ],
        ),
        ("What do the Q7 and the Q9 weigh?", ["What does the Q7 weigh?", "What does the Q9 weigh?"]),
        ("Describe Lisbon, Porto and Braga.", ["Describe Lisbon.", "Describe Porto.", "Describe Braga."]),
        ("Who founded Acme and Globex?", ["Who founded Acme?", "Who founded Globex?"]),
        (
            "What did Tomas and Ilse do after the storm?",
            ["What did Tomas do after the storm?", "What did Ilse do after the storm?"],
        ),
        (
            "How would the voyage have ended if Captain Ruiz had led it instead of Mara Holt?",
            ["Describe Captain Ruiz.", "Describe Mara Holt."],
        ),
        ("What happens if I use salt instead of sugar?", ["Describe salt.", "Describe sugar."]),
        (
            "Trace the sequence of events from the outage to the recovery.",
            ["What happened after the outage?", "What led to the recovery?"],
        ),
    ],
)
def test_decompose_splits_conjunctions_alternatives_and_chains_into_whole_questions(
    prompt: str, subs: list[str]
) -> None:
    outcome = seeds(prompt, mode="decompose")
    texts = [i.intent for i in outcome.intents]
    assert texts[:-1] == subs
    assert texts[-1] == prompt  # the original intent closes the list


def test_a_question_framing_an_analytic_task_stays_with_it() -> None:
    # "Compare … . How do their …?" frames the comparison: one intent, asked as the comparison
    outcome = seeds("Compare the Aurora T3 and the Boreal K2. How do their heating times differ?")
    assert len(outcome.intents) == 1
    assert outcome.intents[0].act == "compare" and "heating times" in outcome.intents[0].intent
    # a question with a subject of its own, or opened by "Also", is a question of its own
    assert len(seeds("Compare the T3 and the K2. Also, how long is the warranty?").intents) == 2


def test_decompose_splits_a_task_and_the_question_that_frames_it() -> None:
    # turn mode keeps them as one intent; a child frame asked to decompose it gets its requests
    parent = seeds("Analyze why the Orin pump failed. What made it stop?").intents[0]
    outcome = seeds(parent.intent, mode="decompose", parentIntent=parent)
    texts = [i.intent for i in outcome.intents]
    assert texts == ["Analyze why the Orin pump failed.", "What made it stop?", parent.intent]
    assert "Orin" in outcome.intents[1].context  # the pronoun's antecedent travels with it
    # a comparison followed by its framing question splits by side, read from the task sentence only
    framed = seeds("Compare the R5 and the X9. How do their prices differ?", mode="decompose")
    assert [i.intent for i in framed.intents][:2] == ["Describe the R5.", "Describe the X9."]


def test_a_statement_before_a_question_is_its_premise() -> None:
    outcome = seeds("The build passes but the cache stays empty. What should I check?")
    assert len(outcome.intents) == 1
    intent = outcome.intents[0]
    assert intent.intent.startswith("The build passes but the cache stays empty.")
    assert "cache" in intent.context  # the premise's words are searched for too
    assert intent.answerType == "entity"  # "what should I check": a thing, no particular shape


def test_each_intent_carries_the_answer_type_it_expects() -> None:
    types = [
        i.answerType
        for i in seeds("Who approved the budget? How many nodes are there? Which version added it?").intents
    ]
    assert types == ["person", "number", "version"]


@pytest.mark.parametrize(
    ("question", "output"),
    [
        ("Is the byte offset counted from 0 or from 1?", "brief"),
        ("Should I build it with make or cmake?", "brief"),
        # "or later", "or not" offer no options: still a Yes/No question
        ("Does the build need GCC 10 or later?", "yes/no"),
        ("Is the cache safe to delete or not?", "yes/no"),
    ],
)
def test_a_choice_question_is_no_yes_no_question(question: str, output: str) -> None:
    intent = seeds(question).intents[0]
    assert (intent.output == "yes/no") == (output == "yes/no"), intent
