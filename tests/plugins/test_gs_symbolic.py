"""gs-symbolic: extractive answers from evidence only; constrained formats only from explicit statements."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest
from mrpvm.plugins.gs_symbolic.__main__ import plugin
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit, ResolvedIntent
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER


def unit(
    n: int, claim: str | None = None, *, role="Description", procedure: str | None = None, **kw
) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=f"ops::chunk-000::unit-{n:03d}",
        sourceId="ops",
        chunkId="ops::chunk-000",
        kuType="atomic",
        role=role,
        topic=kw.pop("topic", "ops"),
        claim=claim,
        procedure=procedure,
        unitIndex=n,
        **kw,
    )


FLEET = [
    unit(0, "The ingest worker depends on the message broker. The broker keeps messages for seven days."),
    unit(1, "The reporting service does not depend on the message broker."),
    unit(2, "Priya Natarajan maintains the reporting service."),
    unit(3, "The cafeteria closes at six."),
]


def solve(
    question: str,
    evidence: list[KnowledgeUnit],
    *,
    act: str = "describe",
    output: str = "free text",
    guidance: list[KnowledgeUnit] | None = None,
    notes: str = "",
    allow_decompose: bool = True,
) -> CnlDocument:
    intent = IntentGroup(index=1, act=act, intent=question, output=output)
    payload = {
        "intent": msgspec.to_builtins(intent),
        "evidence": msgspec.to_builtins(evidence),
        "guidance": msgspec.to_builtins(guidance or []),
        "allowDecompose": allow_decompose,
    }
    if notes:
        payload["resolved"] = msgspec.to_builtins(ResolvedIntent(index=1, sufficient=True, notes=notes))
    req = {"op": "solve", "prompt": question, "context": [], "payload": payload}
    return parse_document(plugin.handle(json.dumps(req).encode()), "solve")


def assert_no_context(doc: CnlDocument) -> None:
    assert doc.result.status == "no-context"
    assert doc.answer == NO_CONTEXT_ANSWER
    assert doc.sources == []


# --------------------------------------------------------------------------- constrained formats


def test_yes_when_a_unit_states_it():
    doc = solve(
        "Does the ingest worker depend on the message broker?", FLEET, act="evaluate", output="yes/no"
    )
    assert doc.result.status == "success" and doc.result.confidence == "high"
    assert doc.answer.startswith("Yes.")
    assert "The ingest worker depends on the message broker." in doc.answer
    assert doc.sources == ["ops::chunk-000::unit-000"]


def test_no_when_a_unit_explicitly_negates_it():
    doc = solve(
        "Does the reporting service depend on the message broker?",
        FLEET,
        act="evaluate",
        output="a single word",
    )
    assert doc.answer == "No"
    assert doc.sources == ["ops::chunk-000::unit-001"]


@pytest.mark.parametrize(
    "question",
    [
        "Does the message broker depend on the ingest worker?",  # the stated relation, reversed
        "If the broker were offline, would the ingest worker keep running?",  # hypothetical
        "Would the ingest worker run faster without the broker?",  # a prediction nobody stated
        "Does the ingest worker keep messages encrypted?",  # words nearby, statement absent
        "Is the cafeteria open on Sundays?",
    ],
)
def test_refuses_to_guess_yes_or_no(question):
    assert_no_context(solve(question, FLEET, act="evaluate", output="yes/no"))


def test_contradicting_statements_are_not_resolved_by_guessing():
    evidence = [unit(0, "The gateway supports IPv6."), unit(1, "The gateway does not support IPv6.")]
    assert_no_context(solve("Does the gateway support IPv6?", evidence, act="evaluate", output="Yes or No"))


def test_polarity_is_read_in_the_matching_clause_only():
    evidence = [
        unit(0, "The scheduler uses the lock service, but the exporter does not."),
        unit(1, "The archiver not only compresses logs but also signs them."),
        unit(2, "The indexer may depend on the cache."),
    ]
    yes_no = {"act": "evaluate", "output": "yes/no"}
    assert solve("Does the scheduler use the lock service?", evidence, **yes_no).answer.startswith("Yes.")
    assert solve("Does the archiver compress logs?", evidence, **yes_no).answer.startswith("Yes.")
    hedged = solve("Does the indexer depend on the cache?", evidence, **yes_no).answer
    assert hedged == "Possibly. The indexer may depend on the cache."  # the hedge read, never a plain Yes


def test_format_from_guidance_unit_and_from_instruction_sentence():
    guidance = [unit(9, "Answer with a single word.", phaseScopes=["gs-plugin"])]
    doc = solve("Does the ingest worker depend on the message broker?", FLEET, guidance=guidance)
    assert doc.answer == "Yes"
    doc = solve("Does the ingest worker depend on the message broker? One word only.", FLEET)
    assert doc.answer == "Yes"
    assert_no_context(solve("Would the ingest worker survive a broker outage? Answer Yes or No.", FLEET))


def test_single_word_who_answer_from_an_exact_statement():
    doc = solve("Who maintains the reporting service?", FLEET, act="identify", output="single word")
    assert doc.result.status == "success"
    assert doc.answer == "Priya Natarajan"
    assert doc.sources == ["ops::chunk-000::unit-002"]
    doc = solve("What does the ingest worker depend on?", FLEET, act="identify", output="one word")
    assert doc.answer.lower() == "message broker"


def test_single_word_refused_when_ambiguous_or_hypothetical():
    evidence = [*FLEET, unit(4, "Omar Haddad maintains the reporting service.")]
    assert_no_context(
        solve("Who maintains the reporting service?", evidence, act="identify", output="one word")
    )
    assert_no_context(
        solve(
            "Name the person who would maintain the broker if Priya left.",
            FLEET,
            act="identify",
            output="one word",
        )
    )


# --------------------------------------------------------------------------- free-form answers


def test_procedure_steps_in_order():
    steps = (
        "1. Stop the ingest worker.\n2. Drain the queue.\n3. Upgrade the broker.\n4. Start the worker again."
    )
    evidence = [
        unit(0, "The broker keeps messages for seven days."),
        unit(1, role="Procedure", procedure=steps, topic="upgrading the broker", title="Upgrade the broker"),
        unit(2, "The cafeteria closes at six."),
    ]
    doc = solve("How do I upgrade the broker?", evidence, act="implement", output="steps")
    assert doc.result.status == "success"
    lines = [ln for ln in doc.answer.splitlines() if ln[:1].isdigit()]
    assert lines == [
        "1. Stop the ingest worker.",
        "2. Drain the queue.",
        "3. Upgrade the broker.",
        "4. Start the worker again.",
    ]
    assert doc.sources[0] == "ops::chunk-000::unit-001"
    assert "ops::chunk-000::unit-002" not in doc.sources


def test_comparison_covers_both_sides():
    evidence = [
        unit(0, "Falcon stores data in columns. Falcon compresses cold partitions."),
        unit(1, "Heron stores data in rows and favours fast single-row updates."),
        unit(2, "Both Falcon and Heron replicate data across three zones."),
        unit(3, "The cafeteria closes at six."),
    ]
    doc = solve("Compare Falcon and Heron.", evidence, act="compare", output="comparison")
    assert doc.result.status == "success"
    text = doc.answer
    assert "**Falcon**" in text and "**Heron**" in text
    falcon, heron = text.index("**Falcon**"), text.index("**Heron**")
    assert falcon < text.index("Falcon stores data in columns.") < heron
    assert text.index("Heron stores data in rows") > heron
    assert "replicate data across three zones" in text
    assert "cafeteria" not in text
    assert set(doc.sources) == {
        "ops::chunk-000::unit-000",
        "ops::chunk-000::unit-001",
        "ops::chunk-000::unit-002",
    }


def test_relevant_sentences_deduplicated_in_reading_order_with_sources():
    evidence = [
        unit(2, "The broker keeps messages for seven days."),
        unit(0, "The ingest worker depends on the message broker."),
        unit(1, "The ingest worker depends on the message broker."),  # a repeat from another unit
        unit(3, "The cafeteria closes at six."),
    ]
    doc = solve("Describe the message broker.", evidence)  # both statements describe it
    assert doc.result.status == "success"
    assert doc.answer.count("depends on the message broker") == 1
    assert doc.answer.index("ingest worker depends") < doc.answer.index("seven days")
    assert "cafeteria" not in doc.answer
    assert "ops::chunk-000::unit-003" not in doc.sources
    assert set(doc.sources) <= {"ops::chunk-000::unit-000", "ops::chunk-000::unit-002"}


def test_empty_and_irrelevant_evidence_give_no_context():
    assert_no_context(solve("Describe the message broker.", []))
    assert_no_context(solve("What is the boiling point of mercury?", FLEET))
    assert_no_context(solve("What is the retention period of the cafeteria?", FLEET))


# --------------------------------------------------------------------------- proofs

NOTES = (
    "purpose task-evidence; closure: entities orbit, regulatory compliance; proofs 1\n"
    "Proof 1: Orbit relevant_for regulatory compliance\n"
    "Orbit uses Relay [sys::u0]\n"
    "Relay provides encryption [sys::u1]\n"
    "⇒ Orbit has_capability encryption (uses∘provides)\n"
    "encryption relevant_for regulatory compliance [sys::u2]\n"
    "⇒ Orbit relevant_for regulatory compliance (has_capability∘relevant_for)"
)


def proof_units() -> list[KnowledgeUnit]:
    def u(ident: str, claim: str, s: str, r: str, o: str) -> KnowledgeUnit:
        return KnowledgeUnit(
            id=ident, sourceId="sys", chunkId="sys::c", kuType="atomic", role="Description", topic=s,
            claim=claim, subject=s, relation=r, object=o,
        )  # fmt: skip

    return [
        u(
            "sys::u2",
            "Encryption is relevant for regulatory compliance.",
            "encryption",
            "relevant_for",
            "regulatory compliance",
        ),
        u("sys::u9", "Orbit ships every Tuesday.", "Orbit", "about", "release day"),
        u("sys::u1", "Relay provides encryption.", "Relay", "provides", "encryption"),
        u("sys::u0", "Orbit uses Relay.", "Orbit", "uses", "Relay"),
    ]


def test_proof_chain_rendered_in_proof_order_with_conclusion():
    doc = solve(
        "Explain why Orbit is relevant for regulatory compliance.", proof_units(), act="explain", notes=NOTES
    )
    assert doc.result.status == "success"
    assert doc.answer.startswith(
        "Orbit uses Relay. Relay provides encryption. Encryption is relevant for regulatory compliance. "
        "Therefore, Orbit is relevant for regulatory compliance."
    )
    assert doc.sources[:3] == ["sys::u0", "sys::u1", "sys::u2"]


def test_yes_from_a_proved_conclusion():
    doc = solve(
        "Is Orbit relevant for regulatory compliance?",
        proof_units(),
        act="evaluate",
        output="yes/no",
        notes=NOTES,
    )
    assert doc.answer.startswith("Yes. Orbit uses Relay.")
    assert doc.result.confidence == "medium"  # proved, not stated


def test_triple_chain_without_notes_links_question_entities():
    doc = solve("Explain how Orbit relates to regulatory compliance.", proof_units(), act="explain")
    assert doc.result.status == "success"
    text = doc.answer
    assert (
        text.index("Orbit uses Relay.")
        < text.index("Relay provides encryption.")
        < text.index("Encryption is relevant")
    )
    assert "Tuesday" not in text


# --------------------------------------------------------------------------- several questions, bare requests


def test_two_questions_answered_part_by_part_or_sent_to_decomposition():
    doc = solve("Who maintains the reporting service? How long does the broker keep messages?", FLEET)
    assert doc.result.status == "success"
    assert "Priya Natarajan maintains the reporting service." in doc.answer
    assert "seven days" in doc.answer
    doc = solve("What colour is the lobby? Where is the parking garage?", FLEET)
    assert doc.result.status == "needs-decomposition"
    doc = solve("What colour is the lobby? Where is the parking garage?", FLEET, allow_decompose=False)
    assert_no_context(doc)


def test_bare_ds016_request_through_a_real_subprocess():
    request = {
        "prompt": "Does the ingest worker depend on the message broker? Answer Yes or No.",
        "context": [
            {"title": "ops::chunk-000::unit-000", "sourceLink": "ops.md", "text": "Role: Description\nTopic: ingest\nClaim: The ingest worker depends on the message broker."},
            {"title": "ops::chunk-000::unit-001", "sourceLink": "ops.md", "text": "Role: Description\nTopic: food\nClaim: The cafeteria closes at six."},
        ],
    }  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "mrpvm.plugins.gs_symbolic"],
        input=json.dumps(request).encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    doc = parse_document(proc.stdout.decode(), "solve")
    assert doc.result.plugin == "gs-symbolic" and doc.result.status == "success"
    assert doc.answer.startswith("Yes.")
    assert doc.sources == ["ops::chunk-000::unit-000"]

    request["prompt"] = "Would the ingest worker survive without the broker? Answer Yes or No."
    proc = subprocess.run(
        [sys.executable, "-m", "mrpvm.plugins.gs_symbolic"],
        input=json.dumps(request).encode(),
        capture_output=True,
        timeout=60,
    )
    doc = parse_document(proc.stdout.decode(), "solve")
    assert doc.result.status == "no-context" and doc.answer == NO_CONTEXT_ANSWER


def test_invalid_request_is_a_structured_error():
    proc = subprocess.run(
        [sys.executable, "-m", "mrpvm.plugins.gs_symbolic"],
        input=b"{not json",
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2
    err = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    assert err["code"] == "INVALID_JSON"


# --------------------------------------------------------------------------- lists under a heading

EXIT_CODES = unit(
    0,
    "- 0 — success\n- 1 — processing error\n- 2 — invalid input\n- 3 — internal timeout",
    topic="success",
    chunkType="list",
    sectionTitle="Wrapper Protocol > Exit Codes",
)


def test_list_items_are_found_through_the_heading_they_stand_under():
    doc = solve("What are the exit codes?", [EXIT_CODES])
    assert doc.result.status == "success"
    assert all(code in doc.answer for code in ("0 — success", "1 —", "2 — invalid input", "3 — internal"))


def test_only_the_item_that_answers_is_given_when_one_matches_by_itself():
    doc = solve("Which exit code means an internal timeout?", [EXIT_CODES])
    assert doc.result.status == "success"
    assert "3 — internal timeout" in doc.answer and "0 — success" not in doc.answer


def test_a_lead_in_sentence_ends_with_a_period_not_its_colon():
    lead = unit(0, "The request is sent to the solver as a JSON object with the intent and its units:")
    doc = solve("How is the request sent to the solver?", [lead])
    assert doc.answer.rstrip().endswith("its units.") and ":." not in doc.answer


# --------------------------------------------------------------------------- code blocks

INSTALL = unit(
    0,
    "Restic is installed from the package manager:\n\n```bash\nsudo apt install restic\nrestic version\n```",
    topic="restic",
)
CONFIG_LINE = unit(1, '"repository": "/srv/backup",\nThe repository path is kept in the config file.')


def test_code_is_quoted_as_a_fenced_block_only_when_a_command_is_asked_for():
    doc = solve("Which command installs restic?", [INSTALL])
    assert doc.result.status == "success"
    assert "```\nsudo apt install restic\nrestic version\n```" in doc.answer
    plain = solve("What is restic installed from?", [INSTALL])
    assert "package manager" in plain.answer and "sudo apt" not in plain.answer and "```" not in plain.answer


def test_a_data_line_is_never_an_answer_to_a_plain_question():
    doc = solve("Where is the repository path kept?", [CONFIG_LINE])
    assert "config file" in doc.answer and "/srv/backup" not in doc.answer


# --------------------------------------------------------------------------- lists led in by a sentence, sections by heading

OUTPUT_FIELDS = unit(
    1,
    "Output fields:\n- `Status` — required\n- `Plugin` — required\n- `Result` — required on success",
    chunkType="list",
    sectionTitle="Wrapper Protocol > Results",  # the heading does not name them: the lead-in does
)


def test_the_items_of_a_list_answer_through_the_sentence_leading_into_them():
    doc = solve("What are the output fields?", [OUTPUT_FIELDS])
    assert doc.result.status == "success"
    assert all(f in doc.answer for f in ("`Status` — required", "`Plugin` — required", "`Result` — required"))


def test_a_list_its_heading_names_is_given_whole_among_many_matching_sentences():
    # nine sentences that name "exit code" themselves: the list under "Exit Codes" still comes whole
    noise = [unit(10 + i, f"Step {i} of the runner checks the exit code of job {i}.") for i in range(9)]
    doc = solve("What are the exit codes?", [*noise, EXIT_CODES])
    assert all(code in doc.answer for code in ("0 — success", "1 —", "2 — invalid input", "3 — internal"))


def section(n: int, claim: str, title: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=f"ops::section-{n:03d}",
        sourceId="ops",
        chunkId=f"ops::chunk-{n:03d}",
        kuType="composite",
        role="Description",
        topic=title,
        title=title,
        claim=claim,
        chunkType="section",
        sectionTitle=f"Guide > {title}",
    )


def test_a_section_summary_sentence_is_found_through_its_heading_even_when_an_atomic_unit_repeats_it():
    goal = "Tidepool never overwrites a file that changed on two machines at once."
    atomic = unit(0, goal, sectionTitle="Guide > Design Goals")
    other = unit(1, "Tidepool mirrors one folder between laptops.", sectionTitle="Guide > Overview")
    doc = solve("What are the design goals of Tidepool?", [atomic, other, section(1, goal, "Design Goals")])
    assert doc.result.status == "success"  # "goals" is named by a heading only: still an answer
    assert "never overwrites a file" in doc.answer and "mirrors one folder" not in doc.answer


def test_compared_sides_keep_quotes_whole_and_split_at_the_coordinating_and():
    from mrpvm.plugins.gs_symbolic.compare import compared_sides

    quoted = "What is the difference between diff's 'Files A and B differ' and 'Binary files A and B differ'?"
    assert compared_sides(quoted, []) == ["Files A and B differ", "Binary files A and B differ"]
    built = "What is the difference between building zstd with make and building it with cmake?"
    assert compared_sides(built, []) == ["building zstd with make", "building it with cmake"]
    assert compared_sides("Compare the R5 with the X9.", []) == ["R5", "X9"]


# --------------------------------------------------------------------------- numbered entries, sentence openers


FAQ_ENTRY = unit(
    0,
    "Use the --track-origins option to see where uninitialised values came from. It runs slower.",
    chunkType="definition",
    title="5.3. Why are uninitialised value errors of the checker hard to track down?",
    topic="5.3. Why are uninitialised value errors of the checker hard to track down?",
)


def test_an_entry_number_is_not_the_version_asked_for():
    """ "5.3." numbers a FAQ entry; a question for a version is not answered by it."""
    question = "Since which version can the checker tell where an uninitialised value came from?"
    assert_no_context(solve(question, [FAQ_ENTRY], act="identify", output="brief"))
    dated = unit(
        1, "As of version 3.4.0, the --track-origins option tells where uninitialised values came from."
    )
    doc = solve(question, [FAQ_ENTRY, dated], act="identify", output="brief")
    assert doc.result.status == "success" and "3.4.0" in doc.answer


def test_a_capitalised_opening_word_is_no_name():
    from mrpvm.plugins.gs_symbolic.question import name_runs

    assert name_runs("Since which Valgrind version can Memcheck tell me?") == ["Valgrind", "Memcheck"]
    # mid-sentence, a capitalised adverb belongs to the name it opens
    assert name_runs("Without Docker, can Still Waters run?") == ["Docker", "Still Waters"]


OFFSET = unit(
    0,
    "Print the 0-based byte offset within the input file before each line of output.",
    chunkType="definition",
    title="-b, --byte-offset",
    topic="-b, --byte-offset",
)


def test_a_choice_question_is_answered_by_the_option_stated():
    doc = solve("Is the byte offset printed by -b counted from 0 or from 1?", [OFFSET], act="evaluate")
    assert doc.result.status == "success"
    assert "0-based" in doc.answer and not doc.answer.startswith(("Yes", "No"))
    # the evidence states neither option: no answer
    other = unit(1, "Print the byte offset within the input file before each line of output.", title="-b")
    assert_no_context(solve("Is the byte offset printed by -b counted from 0 or from 1?", [other]))
