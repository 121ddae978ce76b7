"""Pure helpers of the LLM plugins: reading model output as CNL, splitting sources, verdicts, prompts."""

from __future__ import annotations

import pytest
from mrpvm.plugins.gs_llm_common.reading import read_answer
from mrpvm.plugins.sd_llm_common.seeds import parse_seeds
from mrpvm.plugins.sd_llm_common.sources import split_parts
from mrpvm.plugins.sdk import PluginFailure
from mrpvm.plugins.sdk.llm import fill
from mrpvm.plugins.sdk.model_output import ModelOutputError, parse_model_sections
from mrpvm.plugins.val_llm.__main__ import read_verdict

BLOCK = ["## Plugin Result", "Status: success", "Plugin: t", "Confidence: high"]


def test_fence_preamble_and_model_result_block_are_removed() -> None:
    text = "```markdown\nSure, here you go:\n## Plugin Result\nStatus: great\n## Intent Group 7\nAct: define\nIntent: x\nOutput: y\n```"
    doc = parse_model_sections(text, "detectSeeds", BLOCK)
    assert [(i.index, i.act) for i in doc.intents] == [(7, "define")]


def test_issues_carry_the_models_own_line_numbers_through_injected_lines() -> None:
    text = "intro line\n## Context Unit a\nRole: Definition\nTopic: t\nClaim: c\n\n## Context Unit b\nRole: Feeling\nTopic: t\nClaim: c"

    def inject(heading: str) -> dict[str, str]:
        return {"SourceId": "s", "ChunkId": "s::chunk-000", "KUType": "atomic"}

    with pytest.raises(ModelOutputError) as err:
        parse_model_sections(text, "detectSeeds", BLOCK, inject=inject)
    [issue] = err.value.issues
    assert (issue.line, issue.rule) == (8, "enum")  # `Role: Feeling` is line 8 of the model's text
    assert "line 8: [enum]" in err.value.for_prompt()


def test_seed_headings_are_renumbered_and_units_get_session_ids() -> None:
    text = "## Intent Group\nAct: evaluate\nIntent: Is X safe?\nOutput: yes/no\n\n## Intent Group 1\nAct: define\nIntent: What is X?\nOutput: a definition\n\n## Context Unit my fact\nRole: Constraint\nTopic: t\nClaim: X runs on NFS."
    doc = parse_seeds(text, "sd-llm-fast", "turn-4", max_intents=8)
    assert [i.index for i in doc.intents] == [1, 2]
    assert [u.id for u in doc.units] == ["session::turn-4::unit-000"]
    assert parse_seeds(text, "sd-llm-fast", "turn-4", max_intents=1).intents[0].act == "evaluate"


def test_seeds_without_intents_are_invalid() -> None:
    with pytest.raises(ModelOutputError) as err:
        parse_seeds("## Context Unit 1\nRole: Narrative\nTopic: t\nClaim: c", "p", "t", 8)
    assert err.value.issues[0].rule == "no-intents"


@pytest.mark.parametrize("limit", [40, 100, 1000])
def test_split_parts_tile_the_text_within_the_limit(limit: int) -> None:
    text = "\n\n".join(f"Paragraph {i} says something about topic {i}. " * 3 for i in range(12))
    spans = split_parts(text, limit)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(b - a <= limit for a, b in spans)
    assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))
    if limit >= 200:
        assert all(text[a:b].endswith("\n\n") or b == len(text) for a, b in spans)  # paragraph boundaries


def test_answer_without_heading_and_sources_uses_inline_citations() -> None:
    draft = read_answer(
        "WAL needs shared memory (see src::chunk-000::unit-001).",
        "gs",
        {"src::chunk-000::unit-001", "other"},
        True,
    )
    assert draft.status == "success" and draft.sources == ["src::chunk-000::unit-001"]
    assert draft.answer.startswith("WAL needs shared memory")


def test_needs_decomposition_is_refused_when_not_allowed() -> None:
    with pytest.raises(PluginFailure):
        read_answer("NEEDS-DECOMPOSITION: too broad", "gs", {"a"}, allow_decompose=False)
    assert read_answer("needs decomposition: too broad", "gs", {"a"}, True).status == "needs-decomposition"


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Verdict: accepted\nReason: fine", "accepted"),
        ("verdict: Reject\nreason: no", "rejected"),
        ("- **Verdict**: rejected\n- Reason: unsupported number", "rejected"),
    ],
)
def test_verdicts(text: str, verdict: str) -> None:
    assert read_verdict(text)[0] == verdict


def test_a_placeholder_without_value_is_a_failure() -> None:
    assert fill("Q: {{ question }}", question="why?") == "Q: why?"
    with pytest.raises(PluginFailure):
        fill("{{missing}}")
