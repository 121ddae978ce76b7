"""Every LLM call a plugin makes fits the context window the kernel tells it (`llm.contextTokens`), also
when the conversation grows: sd-llm's corrective round and gs-llm-deep's refine pass. Through the real
plugin processes and the bridge, against the scripted server, which records each prompt: the test
measures it with the SDK's token estimate (tests/live checks that estimate against SmolLM2's tokenizer)
and asserts prompt + max_tokens ≤ window, and that a call that cannot fit is never made: a structured
error, or the deep plugin's draft alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_plugin_calls import numbered_unit, scripted
from mrpvm.plugins.sd_llm_common.sources import split_fitting
from mrpvm.plugins.sdk.window import estimate_tokens, prompt_tokens
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import DetectSeedsPayload, SolvePayload
from test_llm_plugins import INTENT, INVALID_SEEDS, VALID_SEEDS


def window(tokens: int) -> dict[str, str]:
    return {"MRPVM_LLM_CONTEXT_TOKENS": str(tokens)}


def assert_fits(body: dict[str, Any], tokens: int) -> None:
    assert prompt_tokens(body["messages"]) + body["max_tokens"] <= tokens


def unit(n: int, words: int = 1) -> KnowledgeUnit:
    claim = f"Setting number {n} keeps the journal " + "in shared memory across processes " * words + "."
    return numbered_unit(n, "src-w", f"setting {n}", claim)


def seeds(tmp_path: Path, tokens: int, payload: DetectSeedsPayload, *answers: str, prompt: str = ""):
    prompt = prompt or "Should I use WAL on NFS?"
    got = scripted(
        tmp_path, "sd-llm-deep", "detectSeeds", prompt, payload, *answers, env_extra=window(tokens)
    )
    return got.doc, got.events, got.bodies


# --------------------------------------------------------------------------- sd-llm: the corrective round


def test_the_corrective_round_fits_the_window_when_it_can(tmp_path: Path) -> None:
    doc, _, bodies = seeds(tmp_path, 2048, DetectSeedsPayload(), INVALID_SEEDS, VALID_SEEDS)
    assert doc.result.status == "success" and doc.result.confidence == "medium"
    assert len(bodies) == 2
    for body in bodies:
        assert_fits(body, 2048)
    assert bodies[1]["messages"][2] == {"role": "assistant", "content": INVALID_SEEDS}


def test_a_corrective_round_that_cannot_fit_is_not_sent(tmp_path: Path) -> None:
    """At 1536 tokens the first call fits; the invalid answer (about 500 tokens) and the list of its
    problems would leave no room for a reply: the answer's problems are the error, one call spent
    (session 8: at 1024 tokens this call asked llama.cpp for 1302 and was refused)."""
    invalid = INVALID_SEEDS + "Context: " + "the share is mounted over the network " * 60 + "\n"
    doc, events, bodies = seeds(tmp_path, 1536, DetectSeedsPayload(), invalid, VALID_SEEDS)
    assert len(bodies) == 1 and len(events) == 1
    assert_fits(bodies[0], 1536)
    assert doc.result.status == "error" and doc.result.code == "INVALID_MODEL_OUTPUT"
    assert "a corrective call takes about" in doc.result.result and "context tokens" in doc.result.result
    assert "[enum] Act 'ponder'" in doc.result.result  # the reason the answer was refused


def test_a_seed_prompt_that_leaves_no_room_for_a_reply_is_refused_without_a_call(tmp_path: Path) -> None:
    doc, events, bodies = seeds(tmp_path, 1024, DetectSeedsPayload(), prompt="Why? " + "Tell me more. " * 40)
    assert bodies == [] and events == []
    assert doc.result.status == "error" and doc.result.code == "CONTEXT_WINDOW_TOO_SMALL"
    assert "sd-llm-deep's seed prompt takes about" in doc.result.result


def test_earlier_turns_are_left_out_oldest_first_to_keep_the_reply_room(tmp_path: Path) -> None:
    history = [f"Old question {n}: " + "what about the journal and checkpoints " * 12 for n in range(6)]
    doc, _, bodies = seeds(tmp_path, 1536, DetectSeedsPayload(history=history), VALID_SEEDS)
    assert doc.result.status == "success"
    [body] = bodies
    assert_fits(body, 1536)
    assert body["max_tokens"] == 1536 // 4  # the full reply, not one squeezed by the history
    prompt = body["messages"][1]["content"]
    kept = [n for n in range(6) if f"Old question {n}:" in prompt]
    assert kept and kept == list(range(6 - len(kept), 6)) and len(kept) < 6  # the latest turns, in order


def test_source_parts_are_split_until_each_fits() -> None:
    dense = "--opt-1=A1B2 " * 400  # options and digits cost more tokens per character than prose
    spans = split_fitting(dense, 3000, 600)
    assert len(spans) > 1 and "".join(dense[a:b] for a, b in spans) == dense
    assert all(estimate_tokens(dense[a:b]) <= 600 for a, b in spans)


# --------------------------------------------------------------------------- gs-llm-deep: the refine pass


def gs(tmp_path: Path, plugin_id: str, tokens: int, evidence: list[KnowledgeUnit], *answers: str):
    payload = SolvePayload(intent=INTENT, evidence=evidence)
    return scripted(tmp_path, plugin_id, "solve", INTENT.intent, payload, *answers, env_extra=window(tokens))


def deep(tmp_path: Path, tokens: int, evidence: list[KnowledgeUnit], *answers: str):
    got = gs(tmp_path, "gs-llm-deep", tokens, evidence, *answers)
    return got.doc, got.events, got.bodies, got.users


def test_gs_llm_deep_drafts_and_refines_within_1024_tokens(tmp_path: Path) -> None:
    """Session 8: gs-llm-deep reserved two replies and failed CONTEXT_WINDOW_TOO_SMALL at 1024 tokens.
    Now the draft gets the evidence budget and the refine pass shows the cited unit and what else still
    fits, under the draft's labels."""
    evidence = [unit(n) for n in range(30)]
    draft = "## Answer\nNo: the journal needs shared memory [E7].\n\n## Sources\nUsed: E7"
    final = "## Answer\nNo: the journal must stay in shared memory across processes.\n\n## Sources\nUsed: E7"
    doc, events, bodies, users = deep(tmp_path, 1024, evidence, draft, final)
    assert len(bodies) == 2 and len(events) == 2
    for body in bodies:
        assert_fits(body, 1024)
    draft_prompt, refine_prompt = users[0][0], users[1][0]
    shown_first = [u for u in evidence if f"(Description; {u.topic})" in draft_prompt]
    shown_refine = [u for u in evidence if f"(Description; {u.topic})" in refine_prompt]
    assert 7 <= len(shown_first) < 30 and 1 <= len(shown_refine) < len(shown_first)
    assert f"[E7] (Description; {evidence[6].topic})" in refine_prompt  # same unit, same label
    assert bodies[1]["messages"][2] == {"role": "assistant", "content": draft}
    assert doc.result.status == "success" and doc.sources == [evidence[6].id]
    assert "drafted and refined" in doc.result.result


def test_a_refine_pass_that_cannot_fit_leaves_the_draft(tmp_path: Path) -> None:
    evidence = [unit(n, words=14) for n in range(3)]
    draft = "## Answer\nNo. " + "The journal needs memory that every process shares. " * 22 + "[E1]"
    draft += "\n\n## Sources\nUsed: E1"
    doc, events, bodies, _ = deep(tmp_path, 1024, evidence, draft)
    assert len(bodies) == 1 and len(events) == 1
    assert_fits(bodies[0], 1024)
    assert doc.result.status == "success" and doc.sources == [evidence[0].id]
    assert "draft only: the refine pass does not fit the context window" in doc.result.result


def test_the_refine_pass_cannot_cite_a_unit_it_no_longer_shows(tmp_path: Path) -> None:
    evidence = [unit(n) for n in range(30)]
    draft = "## Answer\nNo: the journal needs shared memory [E2].\n\n## Sources\nUsed: E2"
    final = "## Answer\nNo: setting 10 keeps it in shared memory [E11].\n\n## Sources\nUsed: E11"
    doc, _, bodies, users = deep(tmp_path, 1024, evidence, draft, final)
    assert len(bodies) == 2 and "[E11]" in users[0][0] and "[E11]" not in users[1][0]
    assert doc.result.status == "success" and doc.sources == [evidence[1].id]  # the draft stands
    assert "draft only: the refine pass failed (UNGROUNDED_ANSWER)" in doc.result.result


@pytest.mark.parametrize("tokens", [1024, 2048, 4096])
def test_gs_llm_fast_fits_every_window(tmp_path: Path, tokens: int) -> None:
    evidence = [unit(n) for n in range(80)]
    got = gs(tmp_path, "gs-llm-fast", tokens, evidence, "## Answer\nNo [E1].\n\n## Sources\nUsed: E1")
    [body] = got.bodies
    assert_fits(body, tokens)
    assert prompt_tokens(body["messages"]) + body["max_tokens"] > tokens - 120  # the budget is used
    assert got.doc.result.status == "success"


def test_a_space_before_a_number_is_counted_as_its_own_token() -> None:
    # byte-pair tokenizers that split digits one by one (SmolLM2's) emit the space before a number apart
    assert estimate_tokens("0 1 2 3") == 7  # four digits and the three spaces between them
    assert estimate_tokens(" 7") == 2 and estimate_tokens(" seven") == 1  # a space before a word joins it
