"""CNL grammar: round trips for every section kind, every validation rule with its line, and properties."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mrpvm.protocol import cnl, cnl_grammar
from mrpvm.protocol.cnl import CnlError, parse_document, render_document, validate_document
from mrpvm.protocol.document import (
    CnlDocument,
    IntentGroup,
    KnowledgeUnit,
    Plan,
    PluginResult,
    ResolvedIntent,
)
from mrpvm.protocol.examples import EXAMPLE_RESPONSES
from mrpvm.protocol.invalid_examples import RULE_EXAMPLES
from mrpvm.protocol.vocab import (
    ACTS,
    KU_TYPES,
    NO_CONTEXT_ANSWER,
    OPS,
    PHASE_SCOPES,
    PURPOSES,
    RELATIONS,
    ROLES,
    STATUSES,
)

ALL_RULES = {
    "observation-range",
    "observation-task",
    "answer-required",
    "unknown-section",
    "bad-heading",
    "content-outside-section",
    "field-syntax",
    "unknown-field",
    "duplicate-field",
    "required-field",
    "enum",
    "integer",
    "number",
    "boolean",
    "continuation",
    "result-first",
    "result-missing",
    "duplicate-section",
    "confidence-required",
    "claim-or-procedure",
    "procedure-role",
    "triple-all-or-none",
    "confidence-needs-triple",
    "confidence-range",
    "heading-in-answer",
    "section-not-allowed",
}


def round_trip(doc: CnlDocument, op: str | None = None) -> CnlDocument:
    text = render_document(doc)
    back = parse_document(text, op)
    assert back == doc, text
    assert render_document(back) == text  # rendering is stable
    return back


RESULT = PluginResult(status="success", plugin="kb-fast", confidence="high")

# --------------------------------------------------------------------------- round trip per section kind


def test_plugin_result_every_field_round_trips():
    result = PluginResult(
        status="error",
        plugin="gs-llm-deep",
        confidence="0.35",
        result="the LLM endpoint refused the call:\n  HTTP 429 Too Many Requests\nretry later",
        evidence="3 attempts; Retry-After: 2",
        llmCalls=3,
        request="req-17",
        code="LLM_UNAVAILABLE",
        notes="budget left: 0 calls",
    )
    back = round_trip(CnlDocument(result=result))
    assert back.result.result.split("\n")[1] == "  HTTP 429 Too Many Requests"  # inner indentation kept


def test_intent_group_every_field_round_trips():
    intents = [
        IntentGroup(
            index=1,
            act="compare",
            intent="Compare WAL and rollback journal mode",
            context="a web app with three servers",
            criterion="names one deciding difference",
            evidence="turn 3 mentions NFS",
            output="a short comparison",
        ),
        IntentGroup(index=12, act="evaluate", intent="Is WAL safe on NFS?", output="yes or no with a reason"),
    ]
    back = round_trip(CnlDocument(result=RESULT, intents=intents), "detectSeeds")
    assert [i.index for i in back.intents] == [1, 12]


FULL_UNIT = KnowledgeUnit(
    id="src-db::chunk-002::unit-003",
    sourceId="src-db",
    chunkId="src-db::chunk-002",
    kuType="atomic",
    role="Constraint",
    topic="WAL on network filesystems",
    claim="WAL needs shared memory: every process must be on the same host.",
    title="WAL and NFS",
    condition="the database lives on NFS",
    subject="WAL mode",
    relation="depends_on",
    object="shared memory",
    confidence=0.875,
    utilityActs=["verify", "recommend", "diagnose"],
    phaseScopes=["kb-plugin", "gs-plugin", "val-plugin", "frame"],
    utilityNote="decides any 'should I enable WAL' question",
    hash="sha256:ab12",
    sourceName="sqlite-wal.md",
    sourceType="markdown",
    author="Ana Pop",
    ingestedAt="2024-05-01T10:00:00Z",
    knowledgeDate="2024-03-01",
    chunkIndex=2,
    unitIndex=3,
    unitType="sentence",
    textBody="WAL does not work over a network filesystem.",
    parentUnitIds=["src-db::section-001"],
    childUnitIds=["src-db::chunk-002::unit-004", "src-db::chunk-002::unit-005"],
    derivedFromUnitIds=["src-db::chunk-001::unit-000"],
    charStart=0,
    charEnd=9_000_000_000,
    createdAt="2024-05-01T10:00:01Z",
    chunkType="paragraph",
    sectionTitle="Enabling WAL",
    score=-2.5e-7,
    resolvedFor=["intent-1", "intent-2"],
)

PROCEDURE_UNIT = KnowledgeUnit(
    id="src-db::chunk-003::unit-000",
    sourceId="src-db",
    chunkId="src-db::chunk-003",
    kuType="composite",
    role="Procedure",
    topic="enabling WAL",
    procedure="1. Open the database.\n2. Run:\n\n       PRAGMA journal_mode=WAL;\n\n3. Check that it answers `wal`.",
)


def test_context_unit_every_field_round_trips():
    back = round_trip(CnlDocument(result=RESULT, units=[FULL_UNIT, PROCEDURE_UNIT]), "retrieve")
    for spec in cnl_grammar.UNIT_FIELDS:
        if spec.name != "Procedure":
            assert getattr(back.units[0], spec.attr) not in (None, "", []), f"{spec.name} not exercised"
    assert back.units[1].procedure.split("\n")[3] == "       PRAGMA journal_mode=WAL;"
    assert back.units[1].procedure.split("\n")[2] == ""  # empty line inside a value survives


def test_multi_line_procedure_is_rendered_as_continuation_lines():
    text = render_document(CnlDocument(result=RESULT, units=[PROCEDURE_UNIT]))
    assert "Procedure: 1. Open the database.\n  2. Run:\n  \n         PRAGMA journal_mode=WAL;\n" in text


def test_resolved_intent_every_field_round_trips():
    resolved = [
        ResolvedIntent(
            index=1,
            sufficient=True,
            purpose="mixed",
            kuLevelsUsed=["atomic", "composite", "aggregate"],
            totalKUsConsidered=412,
            selected=["src-db::chunk-002::unit-003"],
            guidance=["guide::chunk-000::unit-001"],
            notes="two levels needed",
        ),
        ResolvedIntent(index=2, sufficient=False),
    ]
    back = round_trip(CnlDocument(result=RESULT, resolved=resolved, units=[FULL_UNIT]), "retrieve")
    assert back.resolved[1].sufficient is False


def test_plan_every_field_round_trips():
    plan = Plan(
        seedDetectorOrder=["sd-symbolic"],
        kbPluginOrder=["kb-fast", "kb-balanced", "kb-thinkingdb"],
        goalSolverOrder=["gs-symbolic", "gs-llm-fast"],
        validatorOrder=["val-llm"],
        decompose=True,
        framePurpose="compare two storage engines",
        notes="heavy-first after a failure",
    )
    round_trip(CnlDocument(result=RESULT, plan=plan), "buildPlan")
    round_trip(CnlDocument(result=RESULT, plan=Plan()), "buildPlan")


ANSWER_MD = """WAL is **not** safe here: see below.

### Why

- Readers share memory with the writer.
- NFS cannot provide that: Status: unknown

#### Steps on local disk

```sql
PRAGMA journal_mode=WAL;
```

| mode | readers block writer |
|---|---|
| WAL | no |

Plugin: this line looks like a field but is Markdown.
  Indented text stays as it is."""


def test_answer_markdown_with_subheadings_and_sources_round_trip():
    doc = CnlDocument(
        result=RESULT, answer=ANSWER_MD, sources=["src-db::chunk-002::unit-003", "session::t1::unit-000"]
    )
    back = round_trip(doc, "solve")
    assert "### Why" in back.answer
    assert back.sources == ["src-db::chunk-002::unit-003", "session::t1::unit-000"]


def test_empty_sources_round_trip():
    round_trip(CnlDocument(result=RESULT, answer="No sources were needed.", sources=[]), "solve")


def test_no_context_answer_round_trips():
    doc = CnlDocument(
        result=PluginResult(status="no-context", plugin="gs-symbolic"), answer=NO_CONTEXT_ANSWER, sources=[]
    )
    assert round_trip(doc, "solve").answer == NO_CONTEXT_ANSWER


def test_level_two_heading_in_an_answer_is_demoted_when_rendered():
    doc = CnlDocument(result=RESULT, answer="Intro\n## Details\nmore")
    back = parse_document(render_document(doc), "solve")
    assert back.answer == "Intro\n### Details\nmore"


def test_answer_ends_at_the_next_known_section():
    text = "## Plugin Result\nStatus: success\nPlugin: g\nConfidence: low\n\n## Answer\n\nline one\n\n## Sources\nUsed: a, b\n"
    doc = parse_document(text, "solve")
    assert (doc.answer, doc.sources) == ("line one", ["a", "b"])


@pytest.mark.parametrize("op", OPS)
def test_example_responses_round_trip(op):
    round_trip(EXAMPLE_RESPONSES[op], op)


def test_handwritten_document_parses_to_the_expected_structs():
    text = (
        "## Plugin Result\r\n"
        "Status:   success  \r\n"
        "Plugin: kb-fast\n"
        "Confidence: 0.8\n"
        "Result: first line\n"
        "\tsecond line from a tab\n"
        "LLMCalls: 0\n"
        "\n\n"
        "##   Resolved Intent 3  \n"
        "Sufficient: TRUE\n"
        "KULevelsUsed: atomic,composite ,\n"
        "Selected:\n"
        "  a::chunk-000::unit-000,\n"
        "  b::chunk-000::unit-001\n"
        "## Context Unit a::chunk-000::unit-000\n"
        "SourceId: a\nChunkId: a::chunk-000\nKUType: atomic\nRole: Definition\nTopic: t\n"
        "Claim: time: 12:30 is fine\n"
        "Score: 1e3\n"
    )
    doc = parse_document(text, "retrieve")
    assert doc.result == PluginResult(
        status="success", plugin="kb-fast", confidence="0.8", result="first line\nsecond line from a tab"
    )
    assert doc.resolved == [
        ResolvedIntent(
            index=3,
            sufficient=True,
            kuLevelsUsed=["atomic", "composite"],
            selected=["a::chunk-000::unit-000", "b::chunk-000::unit-001"],
        )
    ]
    assert doc.units[0].claim == "time: 12:30 is fine"
    assert doc.units[0].score == 1000.0


def test_leading_zeros_in_a_section_number_are_the_same_section():
    text = (
        "## Plugin Result\nStatus: success\nPlugin: p\nConfidence: high\n"
        "## Intent Group 01\nAct: define\nIntent: a\nOutput: b\n"
        "## Intent Group 1\nAct: define\nIntent: c\nOutput: d\n"
    )
    assert [(i.line, i.rule) for i in validate_document(text, "detectSeeds")] == [(9, "duplicate-section")]


# --------------------------------------------------------------------------- every rule, with its line


def test_rule_examples_cover_every_rule_the_parser_reports():
    here = Path(cnl.__file__)
    source = "".join(here.with_name(n).read_text() for n in ("cnl.py", "cnl_grammar.py", "cnl_rules.py"))
    reported = set(re.findall(r'report\(\s*[\w.\[\]"]+,\s*"([a-z-]+)"', source))
    reported |= set(re.findall(r'return None, "([a-z-]+)"', source))
    assert reported == ALL_RULES
    assert set(RULE_EXAMPLES) == ALL_RULES


@pytest.mark.parametrize("rule", sorted(ALL_RULES))
def test_each_rule_has_a_failing_example_reported_at_its_line(rule):
    op, text, line = RULE_EXAMPLES[rule]
    with pytest.raises(CnlError) as err:
        parse_document(text, op)
    assert [(i.line, i.rule) for i in err.value.issues] == [(line, rule)]
    assert f"line {line}: [{rule}]" in str(err.value)


def _doc(*lines: str) -> str:
    return "\n".join(lines) + "\n"


HEAD = ("## Plugin Result", "Status: success", "Plugin: p", "Confidence: high")


@pytest.mark.parametrize(
    "text, op, expected",
    [
        # an empty required value is reported on its own line
        (_doc("## Plugin Result", "Status: error", "Plugin:   "), None, [(3, "required-field")]),
        # enum inside a comma-separated list
        (
            _doc(*HEAD, "## Resolved Intent 1", "Sufficient: no", "KULevelsUsed: atomic, molecular"),
            "retrieve",
            [(7, "enum")],
        ),
        (_doc(*HEAD, "LLMCalls: -1"), None, [(5, "integer")]),
        (_doc(*HEAD, "LLMCalls: 99999999999999999999"), None, [(5, "integer")]),
        (_doc("## Plugin Result", "Status: success", "Plugin: p", "Confidence: 1.5"), None, [(4, "enum")]),
        (_doc("## Plugin Result", "Status: success", "Plugin: p", "Confidence: nan"), None, [(4, "enum")]),
        (
            _doc(
                *HEAD,
                "## Context Unit u1",
                "SourceId: s",
                "ChunkId: c",
                "KUType: atomic",
                "Role: Definition",
                "Topic: t",
                "Claim: x",
                "Score: inf",
            ),
            "retrieve",
            [(12, "number")],
        ),
        (_doc(*HEAD, "## Context Unit has space", "SourceId: s"), "retrieve", [(5, "bad-heading")]),
        (_doc(*HEAD, "## Context Unit", "SourceId: s"), "retrieve", [(5, "bad-heading")]),
        (_doc(*HEAD, "## Intent Group 0", "Act: define"), "detectSeeds", [(5, "bad-heading")]),
        (_doc(*HEAD, "## Intent Group ²", "Act: define"), "detectSeeds", [(5, "bad-heading")]),
        (_doc(*HEAD, "## Resolved Intent " + "9" * 5000), "retrieve", [(5, "bad-heading")]),
        # stray text before the first section is reported once, not per line
        (_doc("preamble", "more preamble", *HEAD), None, [(1, "content-outside-section")]),
        # the body of an unknown section is not reported line by line
        (_doc(*HEAD, "## Thoughts", "I: think", "  so", "## Plan"), "buildPlan", [(5, "unknown-section")]),
        (
            _doc(*HEAD, "Result: x", "  y", "Mood: ok", "  continues nothing"),
            None,
            [(7, "unknown-field"), (8, "continuation")],
        ),
        (_doc(*HEAD, "1st: x"), None, [(5, "field-syntax")]),
        (_doc(*HEAD, "Two words: x"), None, [(5, "field-syntax")]),
        (_doc(*HEAD, ": x"), None, [(5, "field-syntax")]),
        (_doc(*HEAD, "## Plugin Result", "Status: error", "Plugin: q"), None, [(5, "duplicate-section")]),
        (_doc(*HEAD, "## Answer", "a", "## Sources", "Used: x", "Extra: y"), "solve", [(9, "unknown-field")]),
        (_doc(*HEAD, "## Answer", "## ", "x"), "solve", [(6, "heading-in-answer")]),
        (
            _doc(*HEAD, "## Intent Group 1", "Act: define", "Intent: i", "Output: o"),
            "retrieve",
            [(5, "section-not-allowed")],
        ),
    ],
)
def test_more_located_failures(text, op, expected):
    assert [(i.line, i.rule) for i in validate_document(text, op)] == expected


def test_every_problem_in_a_document_is_reported_in_line_order():
    text = _doc("## Plugin Result", "Status: maybe", "Plugin: p", "Mood: x", "## Plan", "Decompose: perhaps")
    assert [(i.line, i.rule) for i in validate_document(text, "buildPlan")] == [
        (2, "enum"),
        (4, "unknown-field"),
        (6, "boolean"),
    ]


def test_issues_are_capped():
    text = _doc(*HEAD, *[f"Bad{i}: x" for i in range(200)])
    issues = validate_document(text)
    assert len(issues) == cnl.MAX_ISSUES
    assert "more" in str(CnlError(issues))


def test_valid_document_without_op_accepts_any_section():
    assert validate_document(render_document(CnlDocument(result=RESULT, plan=Plan(), answer="x"))) == []


# --------------------------------------------------------------------------- properties

LINE_FRAGMENTS = [
    "## Plugin Result",
    "## Intent Group 1",
    "## Intent Group 2",
    "## Context Unit u::chunk-000::unit-000",
    "## Resolved Intent 1",
    "## Plan",
    "## Answer",
    "## Sources",
    "## Other",
    "##",
    "### Sub",
    "Status: success",
    "Status: error",
    "Plugin: p",
    "Confidence: high",
    "Confidence: 0.4",
    "Act: define",
    "Intent: x",
    "Output: y",
    "SourceId: s",
    "ChunkId: c",
    "KUType: atomic",
    "Role: Procedure",
    "Role: Definition",
    "Topic: t",
    "Claim: c",
    "Procedure: p",
    "Subject: a",
    "Relation: uses",
    "Object: b",
    "Score: 2",
    "Sufficient: yes",
    "Selected: a, b",
    "Used: a",
    "Decompose: no",
    "LLMCalls: 1",
    "  continued",
    "\tcontinued",
    "",
    "  ",
    ":",
    "\r",
]

lines_st = st.lists(st.one_of(st.sampled_from(LINE_FRAGMENTS), st.text(max_size=30)), max_size=40)
ops_st = st.one_of(st.none(), st.sampled_from(OPS))


def _check_total(text: str, op: str | None) -> None:
    n_lines = text.count("\n") + 1
    try:
        doc = parse_document(text, op)
    except CnlError as err:
        assert err.issues, "a CnlError must carry at least one issue"
        for issue in err.issues:
            assert 1 <= issue.line <= n_lines, (issue, n_lines)
            assert issue.rule in ALL_RULES
            assert issue.message
        return
    assert isinstance(doc, CnlDocument)
    msgspec.json.encode(doc)  # a parsed document always serialises (e.g. no ints beyond 64 bits)


@settings(max_examples=300, deadline=None)
@given(text=st.text(), op=ops_st)
def test_arbitrary_text_gives_a_document_or_a_located_error(text, op):
    _check_total(text, op)


@settings(max_examples=400, deadline=None)
@given(lines=lines_st, op=ops_st)
def test_cnl_like_text_gives_a_document_or_a_located_error(lines, op):
    _check_total("\n".join(lines), op)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), op=st.sampled_from(OPS))
def test_mutated_valid_documents_give_a_document_or_a_located_error(data, op):
    lines = render_document(EXAMPLE_RESPONSES[op]).split("\n")
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines)))
        action = data.draw(st.sampled_from(["delete", "duplicate", "insert", "indent", "truncate"]))
        if action == "insert" or not lines:
            lines.insert(i, data.draw(st.one_of(st.sampled_from(LINE_FRAGMENTS), st.text(max_size=20))))
        elif action == "delete":
            del lines[min(i, len(lines) - 1)]
        elif action == "duplicate":
            j = min(i, len(lines) - 1)
            lines.insert(j, lines[j])
        elif action == "indent":
            j = min(i, len(lines) - 1)
            lines[j] = "  " + lines[j]
        else:
            j = min(i, len(lines) - 1)
            lines[j] = lines[j][: data.draw(st.integers(0, max(0, len(lines[j]))))]
    _check_total("\n".join(lines), op)


# ---- generated documents round trip

_chars = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))
one_line = st.text(_chars, min_size=1, max_size=30).map(str.strip).filter(bool)
multi_line = (
    st.lists(st.one_of(one_line, st.just("")), min_size=1, max_size=4)
    .map(lambda ls: "\n".join(ls).strip())
    .filter(bool)
)
text_st = st.one_of(one_line, multi_line)
opt_text = st.one_of(st.none(), text_st)
ident = st.from_regex(r"[A-Za-z0-9_.:-]{1,24}", fullmatch=True)
csv_item = st.text(_chars.filter(lambda c: c != ","), min_size=1, max_size=20).map(str.strip).filter(bool)
csv_list = st.lists(csv_item, max_size=4)
count = st.integers(0, (1 << 63) - 1)
finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def results(draw):
    status = draw(st.sampled_from(STATUSES))
    confidence = draw(st.sampled_from(["high", "medium", "low", "0", "0.25", "1"]))
    if status != "success" and draw(st.booleans()):
        confidence = None
    return PluginResult(
        status=status,
        plugin=draw(text_st),
        confidence=confidence,
        result=draw(st.one_of(st.just(""), text_st)),
        evidence=draw(st.one_of(st.just(""), text_st)),
        llmCalls=draw(count),
        request=draw(st.one_of(st.none(), one_line)),
        code=draw(st.one_of(st.none(), one_line)),
        notes=draw(st.one_of(st.just(""), text_st)),
    )


@st.composite
def units(draw, uid):
    role = draw(st.sampled_from(ROLES))
    body = draw(text_st)
    triple = draw(st.booleans())
    return KnowledgeUnit(
        id=uid,
        sourceId=draw(one_line),
        chunkId=draw(one_line),
        kuType=draw(st.sampled_from(KU_TYPES)),
        role=role,
        topic=draw(text_st),
        claim=None if role == "Procedure" else body,
        procedure=body if role == "Procedure" else None,
        title=draw(opt_text),
        condition=draw(opt_text),
        subject=draw(one_line) if triple else None,
        relation=draw(st.sampled_from(RELATIONS)) if triple else None,
        object=draw(one_line) if triple else None,
        confidence=draw(st.one_of(st.none(), st.floats(0, 1))) if triple else None,
        utilityActs=draw(st.lists(st.sampled_from(ACTS), max_size=3)),
        phaseScopes=draw(st.lists(st.sampled_from(PHASE_SCOPES), max_size=3)),
        utilityNote=draw(opt_text),
        sourceName=draw(opt_text),
        chunkIndex=draw(st.one_of(st.none(), count)),
        charEnd=draw(st.one_of(st.none(), count)),
        textBody=draw(opt_text),
        parentUnitIds=draw(csv_list),
        childUnitIds=draw(csv_list),
        score=draw(st.one_of(st.none(), finite)),
        resolvedFor=draw(csv_list),
    )


answer_line = st.text(_chars, max_size=40).filter(lambda s: not s.startswith("## ") and s != "##")
answer_st = st.lists(answer_line, max_size=6).map(lambda ls: "\n".join(ls).strip())


@st.composite
def documents(draw):
    n_intents = draw(st.integers(0, 3))
    n_resolved = draw(st.integers(0, 3))
    unit_ids = draw(st.lists(ident, max_size=3, unique=True))
    return CnlDocument(
        result=draw(results()),
        intents=[
            IntentGroup(
                index=i + 1,
                act=draw(st.sampled_from(ACTS)),
                intent=draw(text_st),
                output=draw(text_st),
                context=draw(st.one_of(st.just(""), text_st)),
                criterion=draw(st.one_of(st.just(""), text_st)),
                evidence=draw(st.one_of(st.just(""), text_st)),
            )
            for i in range(n_intents)
        ],
        resolved=[
            ResolvedIntent(
                index=i + 1,
                sufficient=draw(st.booleans()),
                purpose=draw(st.sampled_from(PURPOSES)),
                kuLevelsUsed=draw(st.lists(st.sampled_from(KU_TYPES), max_size=3)),
                totalKUsConsidered=draw(count),
                selected=draw(csv_list),
                guidance=draw(csv_list),
                notes=draw(st.one_of(st.just(""), text_st)),
            )
            for i in range(n_resolved)
        ],
        units=[draw(units(uid)) for uid in unit_ids],
        plan=draw(
            st.one_of(
                st.none(),
                st.builds(
                    Plan,
                    seedDetectorOrder=csv_list,
                    kbPluginOrder=csv_list,
                    goalSolverOrder=csv_list,
                    validatorOrder=csv_list,
                    decompose=st.booleans(),
                    framePurpose=st.one_of(st.just(""), text_st),
                    notes=st.one_of(st.just(""), text_st),
                ),
            )
        ),
        answer=draw(st.one_of(st.none(), answer_st)),
        sources=draw(st.one_of(st.none(), csv_list)),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents())
def test_generated_documents_round_trip(doc):
    round_trip(doc)


@pytest.mark.parametrize(
    "tail",
    ["", "\n## Answer\n\n", "\n## Answer\n   \n\n## Sources\nUsed: a\n"],
    ids=["no-answer", "empty-answer", "blank-answer"],
)
def test_a_solve_success_needs_a_non_empty_answer(tail):
    text = "## Plugin Result\nStatus: success\nPlugin: p\nConfidence: high\n" + tail
    with pytest.raises(CnlError) as err:
        parse_document(text, "solve")
    assert [i.rule for i in err.value.issues] == ["answer-required"]
    # Other statuses may come without an answer, and other ops never have one.
    parse_document(text.replace("Status: success", "Status: no-context"), "solve")
    parse_document("## Plugin Result\nStatus: success\nPlugin: p\nConfidence: high\n", "retrieve")


@pytest.mark.parametrize(
    ("heading", "key"),
    [
        ("Context Unit doc::chunk-001::unit-002", "doc::chunk-001::unit-002"),
        ("Context Unit   spaced-before", "spaced-before"),
        ("Context Unit", ""),
        ("Context Unit two ids", ""),
        ("Context Unit a\u00a0b", ""),  # any whitespace str.isspace knows splits an id
        ("Context Unit a\u2003b", ""),
        ("Context Unit a\x1fb", ""),
    ],
)
def test_a_unit_heading_names_one_id_without_whitespace(heading: str, key: str) -> None:
    kind, got, problem = cnl_grammar.classify_heading(heading)
    assert kind is cnl_grammar.UNIT and got == key
    assert (problem is None) == bool(key)
