"""Symbolic QA over a Markdown document, in process: sd-symbolic's units (lists, tables, code, sections)
and gs-symbolic's narrowing of the relevant sentences (negations, parallel rows, echoes, named code)."""

from __future__ import annotations

import json

import msgspec
import pytest
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs_plugin
from mrpvm.plugins.gs_symbolic.narrowing import negation_terms
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.plugins.sd_symbolic.turn_seeds.intents import detect_seeds
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.envelope import DetectSeedsPayload
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

HANDBOOK = """# Relay Worker Handbook

Relay moves messages between two brokers with a small pool of workers.

## Workers

| Worker | Job | Needs network | Cost |
|---|---|---|---|
| fetcher | Pulls messages from the upstream broker. | Yes | moderate |
| sorter | Orders messages by priority inside the local queue. | No | cheap |
| shipper | Pushes sorted messages to the downstream broker. | Yes | expensive |

## Layout

```
relay/
├── relay.toml
└── queues/
```

## Output Fields

The status line has these fields:
- `state` — required
- `worker` — required
- `queue` — required
- `latency` — optional
- `note` — optional

## Dependencies

- `broker-a`
- `broker-b`
"""


def tree(text: str) -> list[KnowledgeUnit]:
    return build_tree(text, SourceMeta("relay", "relay.md", "text", created_at="t0"))


def answer(question: str, units: list[KnowledgeUnit], act: str = "describe") -> str:
    intent = IntentGroup(index=1, act=act, intent=question, output="free text")
    payload = {
        "intent": msgspec.to_builtins(intent),
        "evidence": msgspec.to_builtins([u for u in units if u.kuType != "aggregate"]),
        "guidance": [],
        "allowDecompose": False,
    }
    req = {"op": "solve", "prompt": question, "context": [], "payload": payload}
    return parse_document(gs_plugin.handle(json.dumps(req).encode()), "solve").answer


@pytest.fixture(scope="module")
def units() -> list[KnowledgeUnit]:
    return tree(HANDBOOK)


# --------------------------------------------------------------------------- sd-symbolic: units


def test_a_long_list_is_cut_evenly_and_every_part_keeps_its_lead_in_as_topic(units):
    parts = [u for u in units if u.unitType == "list" and u.heading == "Output Fields"]
    assert [u.claim.count("\n- ") + u.claim.startswith("- ") for u in parts] == [3, 2]  # not 4 + 1
    assert parts[0].claim.startswith("The status line has these fields:")
    assert {u.topic for u in parts} == {"status line"}  # the later part is about what the lead-in says


def test_a_list_of_names_is_about_its_heading_without_markup(units):
    deps = next(u for u in units if u.unitType == "list" and u.heading == "Dependencies")
    assert deps.topic == "Dependencies"


def test_a_section_holding_only_a_table_or_code_is_summed_up_by_it_not_by_its_heading(units):
    sections = {u.title: u for u in units if u.kuType == "composite"}
    workers = sections["Workers"].claim
    assert workers.startswith("| Worker | Job |") and "| sorter |" in workers
    assert sections["Layout"].claim.startswith("```") and "relay.toml" in sections["Layout"].claim
    cut = tree("## Big\n\n| a | b |\n|---|---|\n" + "".join(f"| row{i} | {'x' * 60} |\n" for i in range(40)))
    big = next(u for u in cut if u.kuType == "composite").claim
    assert big.startswith("| a | b |") and len(big) <= 700 and big.endswith("|")  # whole rows only


def test_separator_rows_are_never_statements(units):
    for u in units:
        for line in (u.claim or "").splitlines():
            assert not (u.kuType == "atomic" and set(line) <= set("|-: ")), u


# --------------------------------------------------------------------------- sd-symbolic: intents


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("Which sd plugin uses no LLM?", "Which sd plugin uses no LLM?"),
        ("Which tools work without an LLM?", "Which tools work without an LLM?"),
        ("Explain caching, no LLM.", "Explain caching."),  # an instruction, set off by a comma
        ("Explain caching without an LLM.", "Explain caching."),  # not a question: how to answer
    ],
)
def test_a_negated_object_of_the_question_is_content_not_an_instruction(question, intent):
    out = detect_seeds(question, DetectSeedsPayload(), created_at="t0")
    assert [i.intent for i in out.intents] == [intent]


# --------------------------------------------------------------------------- gs-symbolic: narrowing


def test_negations_are_read_in_prose_and_in_table_cells():
    assert negation_terms("Which worker needs no network access?") == ["no-network"]
    assert negation_terms("It does not use an LLM.") == ["no-llm"]
    assert set(negation_terms("sorter — Job: Orders messages; Needs network: No; Cost: cheap")) == {
        "no-need",
        "no-network",
    }
    assert negation_terms("fetcher — Needs network: Yes; Cost: moderate") == []
    assert negation_terms("Nobody knows the notation.") == []  # "no" only as a word of its own


def test_a_negated_question_picks_the_row_whose_cell_says_no(units):
    text = answer("Which worker needs no network access?", units, act="identify")
    assert (
        text.startswith("sorter — Job: Orders messages") and "fetcher" not in text and "shipper" not in text
    )


def test_parallel_rows_compete_but_a_question_about_all_of_them_keeps_all(units):
    one = answer("Which worker pushes messages to the downstream broker?", units, act="identify")
    assert "shipper — Job:" in one and "fetcher" not in one and "sorter" not in one
    every = answer("What are the workers?", units, act="define")
    assert all(f"{w} — Job:" in every for w in ("fetcher", "sorter", "shipper"))
    assert "- Workers." not in every  # the heading is no statement


def test_a_sentence_that_only_repeats_the_question_is_no_answer():
    doc = tree(
        "## Built-in plugins\n\n- `kb-fast`\n- `kb-thinkingdb`\n\n## Backends\n\n"
        "kb-thinkingdb retrieves by lexical search plus a bounded symbolic closure.\n"
    )
    text = answer("How does kb-thinkingdb retrieve?", doc, act="explain")
    assert "bounded symbolic closure" in text and "`kb-thinkingdb`" not in text
    alone = answer("How does kb-thinkingdb retrieve?", [u for u in doc if "closure" not in (u.claim or "")])
    assert alone == NO_CONTEXT_ANSWER  # an echo of the question answers nothing: refused


def test_code_under_the_heading_the_question_names_is_quoted_as_code(units):
    text = answer("What is the layout?", units, act="define")
    assert "```\nrelay/\n├── relay.toml" in text
    plain = answer("Which worker orders messages?", units, act="identify")
    assert "```" not in plain  # code is never quoted for a question that names neither it nor its heading
