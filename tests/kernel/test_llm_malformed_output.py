"""Each class of unusable completion a small real model writes, through the real plugin processes and the
bridge, against the scripted server: malformed, truncated, off-format, hallucinated source, empty. Every
one becomes a structured error (or no-context) whose code and message say why — never a crash, never a
citation of an id the plugin was not given. Also: prompts fit the context window the kernel announces
(`llm.contextTokens`), whole units only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_plugin_calls import numbered_unit, run, user_messages
from llm_server import ScriptedLLM, reply
from mrpvm.kernel.llm.bridge import options_from_environ
from mrpvm.plugins.sdk.llm import fit_units
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.envelope import SolvePayload, ValidatePayload
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER
from test_llm_plugins import INTENT, NFS, WAL


def solve(llm: ScriptedLLM, tmp_path: Path, evidence: list[KnowledgeUnit], **kwargs):
    payload = SolvePayload(intent=INTENT, evidence=evidence)
    return run(llm, tmp_path, "gs-llm-fast", "solve", INTENT.intent, payload, units=evidence, **kwargs)


@pytest.mark.parametrize(
    ("completion", "finish", "code", "says"),
    [
        ("", "stop", "INVALID_MODEL_OUTPUT", "completion is empty"),
        ("   \n\n  ", "stop", "INVALID_MODEL_OUTPUT", "completion is empty"),
        ("## Answer\n\n## Sources\nUsed: x", "stop", "INVALID_MODEL_OUTPUT", "answer is empty"),
        (  # SmolLM2 on real05 q09 (session 12): its answer was "The answer is:" and nothing else
            "## Answer\nThe answer is: [E1]\n\n## Sources\nUsed: E1",
            "stop",
            "INVALID_MODEL_OUTPUT",
            "answer is empty",
        ),
        (
            f"## Answer\nNo: WAL needs shared memory, which an NFS share cannot\n\n## Sources\nUsed: {WAL.id}",
            "length",
            "INVALID_MODEL_OUTPUT",
            "cut at its max_tokens limit",
        ),
        ("Sure! Here is a poem about databases.", "stop", "UNGROUNDED_ANSWER", "cites no evidence"),
        (
            "## Answer\nYes, WAL works everywhere.\n\n## Sources\nUsed: sqlite-docs::chunk-9::unit-4",
            "stop",
            "UNGROUNDED_ANSWER",
            "sqlite-docs::chunk-9::unit-4",
        ),
        (
            f"## Answer\nNo.\n\n## Sources\nUsed: {WAL.id}, {WAL.id}-made-up",
            "stop",
            "UNGROUNDED_ANSWER",
            "1 id(s) it was not given",
        ),
        (  # SmolLM2 on real02 (session 11): the answer format's placeholder, copied
            "<the answer in Markdown; use ### or smaller headings if you need headings, never ##>",
            "stop",
            "INVALID_MODEL_OUTPUT",
            "copied the prompt ('<the answer in Markdown')",
        ),
        (  # SmolLM2 on real04 (session 11): an evidence header with a made-up topic and the budget note
            "The answer is: (Definition; Debian 3.0) Python 2 will be replaced in 2019.",
            "stop",
            "INVALID_MODEL_OUTPUT",
            "copied the prompt ('(Definition; Debian 3.0)')",
        ),
        (
            f"No [E1].\n(+1 more evidence items left out for length)\n\n## Sources\nUsed: {WAL.id}",
            "stop",
            "INVALID_MODEL_OUTPUT",
            "copied the prompt ('more evidence items left out for length)')",
        ),
        (  # a quotation the cited unit does not hold (it says the opposite)
            '## Answer\nYes: the manual says "WAL works over a network filesystem".\n\n## Sources\nUsed: E1',
            "stop",
            "UNGROUNDED_ANSWER",
            "quotes 'WAL works over a network filesystem', which is not in the unit(s) it cites",
        ),
        (  # the quoted sentence is NFS's, but the answer cites only WAL's unit
            "## Answer\nNo.\n> The database sits on an NFS share mounted by three servers.\n\n## Sources\nUsed: E1",
            "stop",
            "UNGROUNDED_ANSWER",
            "quotes 'The database sits on an NFS share",
        ),
        (  # SmolLM2 on real04 (session 11): a number and a field none of the cited units holds
            "## Answer\nX-Python3-Version = 2.10.4 is required for Python packages.\n\n## Sources\nUsed: E1, E2",
            "stop",
            "UNGROUNDED_ANSWER",
            "of the answer's words are in the unit(s) it cites",
        ),
    ],
    ids=[
        "empty",
        "blank",
        "empty-answer",
        "only-an-opener",
        "truncated",
        "off-format",
        "hallucinated",
        "one-made-up",
        "format-placeholder",
        "made-up-evidence-header",
        "budget-note",
        "misquoted",
        "quoted-from-an-uncited-unit",
        "cited-units-do-not-say-it",
    ],
)
def test_an_unusable_completion_is_a_structured_error_with_its_reason(
    tmp_path: Path, completion: str, finish: str, code: str, says: str
) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(completion, finish_reason=finish))
        doc, events = solve(llm, tmp_path, [WAL, NFS])
    assert doc.result.status == "error", doc.answer
    assert doc.result.code == code
    assert says in doc.result.result
    assert doc.sources in (None, [])  # no citation leaves the plugin
    assert [e.status for e in events] == ["success"]  # one real call, counted by the bridge


@pytest.mark.parametrize(
    "completion",
    [
        "## Answer\nNO-CONTEXT\n\n## Sources\nUsed:",
        # the protocol's refusal sentence written out, then a stray answer opener
        f"{NO_CONTEXT_ANSWER}\n\nThe answer is: (https://github.com/example/plugin)\n\n## Sources\nUsed: E1",
    ],
    ids=["marker", "refusal-sentence"],
)
def test_no_context_inside_the_answer_section_is_no_context(tmp_path: Path, completion: str) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(completion))
        doc, _ = solve(llm, tmp_path, [WAL])
    assert doc.result.status == "no-context" and doc.answer == NO_CONTEXT_ANSWER and doc.sources == []


def test_an_id_left_out_for_the_window_cannot_be_cited(tmp_path: Path) -> None:
    """A unit the budget left out was never shown to the model: citing it is a hallucination too."""
    big = KnowledgeUnit(
        id="src-big::chunk-002::unit-001",
        sourceId="src-big",
        chunkId="src-big::chunk-002",
        kuType="atomic",
        role="Description",
        topic="a long unit",
        claim="A long statement about checkpoints. " * 120,
    )
    answer = f"## Answer\nNo.\n\n## Sources\nUsed: {WAL.id}, {big.id}"
    with ScriptedLLM() as llm:
        llm.push(reply(answer))
        doc, _ = solve(llm, tmp_path, [WAL, big, NFS], env_extra={"MRPVM_LLM_CONTEXT_TOKENS": "1024"})
        prompt = user_messages(llm, 0)[0]
        max_tokens = llm.bodies[0]["max_tokens"]
    assert WAL.claim in prompt and NFS.claim in prompt and "checkpoints" not in prompt  # left out whole
    assert "[E1]" in prompt and "[E2]" in prompt and "[E3]" not in prompt  # short labels, in order given
    assert "(+1 more evidence items left out for length)" in prompt
    assert max_tokens == 1024 // 4  # the reply fits the window too
    assert doc.result.status == "error" and doc.result.code == "UNGROUNDED_ANSWER"
    assert big.id in doc.result.result


def test_prompts_fit_the_announced_window(tmp_path: Path) -> None:
    claim = "Option --opt-{n} sets the value number {n} for the archive writer. " * 4
    units = [numbered_unit(n, "src-m", f"option {n}", claim.format(n=n)) for n in range(60)]
    answer = "## Answer\nIt sets value 3 [E4].\n\n## Sources\nUsed: E4"
    with ScriptedLLM() as llm:
        llm.push(reply(answer))
        doc, _ = solve(llm, tmp_path, units, env_extra={"MRPVM_LLM_CONTEXT_TOKENS": "2048"})
        body = llm.bodies[0]
    prompt_chars = sum(len(m["content"]) for m in body["messages"])
    assert prompt_chars / 3.0 + body["max_tokens"] <= 2048  # at the budget's chars-per-token ratio
    shown = [u for u in units if f"option {units.index(u)})" in body["messages"][1]["content"]]
    assert 3 < len(shown) < len(units)
    assert all(u.body.strip() in body["messages"][1]["content"] for u in shown)  # whole units
    assert doc.result.status == "success" and doc.sources == [units[3].id]
    assert "left out to fit the context window" in doc.result.result


@pytest.mark.parametrize(
    ("completion", "sources", "confidence"),
    [
        ("## Answer\nNo: WAL needs shared memory [E1].\n\n## Sources\nUsed: E1, E2", ["W", "N"], "high"),
        ("No: WAL needs shared memory [E2, E1].", ["N", "W"], "high"),
        (f"## Answer\nNo.\n\n## Sources\nUsed: {WAL.id}", ["W"], "high"),
        ("No, WAL mode does not work over a network filesystem.\n\n## Answer", ["W"], "medium"),
        (  # quoted word for word, whatever the case and punctuation
            '## Answer\nNo: "WAL does NOT work over a network filesystem" [E1].\n\n## Sources\nUsed: E1',
            ["W"],
            "high",
        ),
    ],
    ids=["labels", "inline-labels", "real-id", "attributed", "right-quotation"],
)
def test_cited_labels_map_back_to_the_units_given(
    tmp_path: Path, completion: str, sources: list[str], confidence: str
) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply(completion))
        doc, _ = solve(llm, tmp_path, [WAL, NFS])
    assert doc.result.status == "success", doc.result.result
    assert doc.sources == [{"W": WAL.id, "N": NFS.id}[s] for s in sources]
    assert doc.result.confidence == confidence
    assert "[E" not in doc.answer and "## Answer" not in doc.answer  # labels and stray headings removed
    if confidence == "medium":
        assert "attributed by the plugin" in doc.result.evidence


def test_a_label_that_was_not_given_is_a_hallucinated_source(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.push(reply("## Answer\nNo [E1].\n\n## Sources\nUsed: E1, E7"))
        doc, _ = solve(llm, tmp_path, [WAL, NFS])
    assert doc.result.status == "error" and doc.result.code == "UNGROUNDED_ANSWER"
    assert "E7" in doc.result.result and doc.sources in (None, [])


def test_no_unit_fits_is_a_structured_error_without_a_call(tmp_path: Path) -> None:
    huge = KnowledgeUnit(
        id="src-h::chunk-000::unit-000",
        sourceId="src-h",
        chunkId="src-h::chunk-000",
        kuType="atomic",
        role="Description",
        topic="huge",
        claim="word " * 3000,
    )
    with ScriptedLLM() as llm:
        doc, events = solve(llm, tmp_path, [huge], env_extra={"MRPVM_LLM_CONTEXT_TOKENS": "1024"})
    assert doc.result.status == "error" and doc.result.code == "CONTEXT_WINDOW_TOO_SMALL"
    assert llm.count == 0 and events == []


@pytest.mark.parametrize(
    ("completion", "finish"),
    [
        ("", "stop"),
        ("I think it is fine.", "stop"),
        ("Verdict: accepted\nVerdict: rejected", "stop"),
        ("Verdict: <accepted or rejected>\nReason: <one sentence>", "stop"),
        ("Verdict: accepted (or: Verdict: rejected)", "stop"),
    ],
    ids=["empty", "no-verdict", "conflicting", "template-echo", "both-on-one-line"],
)
def test_val_llm_unusable_verdicts_are_errors_never_accepts(
    tmp_path: Path, completion: str, finish: str
) -> None:
    payload = ValidatePayload(intent=INTENT, answer="No.", sources=[WAL.id], evidence=[WAL])
    with ScriptedLLM() as llm:
        llm.push(reply(completion, finish_reason=finish))
        doc, _ = run(llm, tmp_path, "val-llm", "validate", INTENT.intent, payload, units=[WAL])
    assert doc.result.status == "error" and doc.result.code == "INVALID_MODEL_OUTPUT"


def test_val_llm_puts_the_cited_units_first_within_the_window(tmp_path: Path) -> None:
    filler = [
        KnowledgeUnit(
            id=f"src-f::chunk-{n:03d}::unit-001",
            sourceId="src-f",
            chunkId=f"src-f::chunk-{n:03d}",
            kuType="atomic",
            role="Description",
            topic="filler",
            claim="Unrelated filler text about archive formats and their many options. " * 5,
        )
        for n in range(40)
    ]
    payload = ValidatePayload(intent=INTENT, answer="No.", sources=[WAL.id], evidence=[*filler, WAL])
    with ScriptedLLM() as llm:
        llm.push(reply("Verdict: accepted\nReason: supported."))
        doc, _ = run(
            llm,
            tmp_path,
            "val-llm",
            "validate",
            INTENT.intent,
            payload,
            units=[WAL],
            env_extra={"MRPVM_LLM_CONTEXT_TOKENS": "1024"},
        )
        prompt = user_messages(llm, 0)[0]
    assert WAL.claim in prompt and "more evidence items left out for length" in prompt
    assert doc.result.status == "accepted"


def test_fit_units_skips_a_unit_too_long_and_keeps_later_ones() -> None:
    long = KnowledgeUnit(
        id="l", sourceId="s", chunkId="s::c", kuType="atomic", role="Description", topic="t", claim="x" * 500
    )
    lines, given = fit_units([WAL, long, NFS], 120)  # tokens (estimated)
    assert [u.id for u in given] == [WAL.id, NFS.id]
    assert "x" * 10 not in lines and lines.endswith("(+1 more evidence items left out for length)")


def test_the_context_window_setting_is_read_and_checked() -> None:
    assert options_from_environ({"MRPVM_LLM_CONTEXT_TOKENS": "2048"}).context_tokens == 2048
    assert options_from_environ({}).context_tokens == 0
    from mrpvm.kernel.errors import ConfigError

    with pytest.raises(ConfigError):
        options_from_environ({"MRPVM_LLM_CONTEXT_TOKENS": "lots"})
