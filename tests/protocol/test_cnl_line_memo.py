"""The fast path's typed lines (`cnl_fastpath._LINES`): a short line typed once is not typed again.

Replies repeat most of their lines call after call (`Status: success`; a batch of outcomes' observations,
`Success: 1.0`, `Alpha: 0.3`): the second time, a line's attribute and value come from the section kind's
memo. The document is still the one the full parser builds; a list value is never shared; a duplicated
field is still refused; the memo is bounded.
"""

from __future__ import annotations

import pytest
from mrpvm.protocol import cnl, cnl_fastpath
from mrpvm.protocol.cnl import CnlError, parse_document

OBSERVATION = (
    "## Observation {n}\nPlugin: lamp-kb\nTask: describe\nSuccess: 1.0\nLatencyMs: {ms}\nLLMCalls: 0.0\n"
    "Sufficiency: 1.0\nAlpha: 0.3\nOutcome: req_{n:04d}\n"
)


def batch_reply(first: int, ms: str = "2.5") -> str:
    observations = "\n".join(OBSERVATION.format(n=n, ms=ms) for n in range(first, first + 3))
    return (
        "## Plugin Result\nStatus: success\nPlugin: lamp-planner\nConfidence: high\n"
        f"Result: 3 observations\nLLMCalls: 0\nRequest: {first}\n\n" + observations
    )


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cnl_fastpath, "_LINES", {})


def test_a_line_typed_once_is_not_typed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    first = cnl_fastpath.parse_fast(batch_reply(1), "recordOutcome")
    assert first is not None and first == cnl._parse_full(batch_reply(1), "recordOutcome")
    typed: list[str] = []
    real = cnl_fastpath._settle
    monkeypatch.setattr(
        cnl_fastpath,
        "_settle",
        lambda fields, spec, raw, parts: typed.append(raw) or real(fields, spec, raw, parts),
    )
    text = batch_reply(4, ms="7.25")
    again = cnl_fastpath.parse_fast(text, "recordOutcome")
    assert again is not None and again == cnl._parse_full(text, "recordOutcome")
    assert [o.latencyMs for o in again.observations] == [7.25, 7.25, 7.25]
    assert typed == ["7.25"]  # only the new latency was typed; the rest came from the memo
    assert [o.outcome for o in again.observations] == ["req_0004", "req_0005", "req_0006"]


def test_a_list_value_is_never_shared_with_a_reader() -> None:
    text = "## Plugin Result\nStatus: success\nPlugin: p\nConfidence: high\n\n## Answer\nLit.\n\n## Sources\nUsed: a, b\n"
    first = cnl_fastpath.parse_fast(text, "solve")
    assert first is not None and first.sources == ["a", "b"]
    first.sources.append("changed")
    again = cnl_fastpath.parse_fast(text, "solve")
    assert again is not None and again.sources == ["a", "b"]


def test_a_remembered_line_given_twice_is_still_a_duplicate() -> None:
    assert cnl_fastpath.parse_fast(batch_reply(1), "recordOutcome") is not None
    twice = batch_reply(1).replace("Alpha: 0.3\n", "Alpha: 0.3\nAlpha: 0.3\n", 1)
    assert cnl_fastpath.parse_fast(twice, "recordOutcome") is None
    with pytest.raises(CnlError):
        parse_document(twice, "recordOutcome")


def test_a_remembered_line_before_a_continuation_is_read_with_it() -> None:
    text = "## Plugin Result\nStatus: success\nPlugin: p\nConfidence: high\nNotes: one\n"
    assert cnl_fastpath.parse_fast(text, None) is not None
    continued = text + "  two\n"
    doc = cnl_fastpath.parse_fast(continued, None)
    assert doc is not None and doc == cnl._parse_full(continued, None) and doc.result.notes == "one\ntwo"


def test_the_memo_is_bounded_and_keeps_short_lines_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cnl_fastpath, "_LINES_MAX", 8)
    for n in range(1, 41):
        assert cnl_fastpath.parse_fast(batch_reply(n, ms=f"{n}.5"), "recordOutcome") is not None
        assert all(len(memo) <= 8 for _, memo in cnl_fastpath._LINES.values())
    long_note = "Notes: " + "x" * 200
    text = f"## Plugin Result\nStatus: success\nPlugin: p\nConfidence: high\n{long_note}\n"
    assert cnl_fastpath.parse_fast(text, None) is not None
    assert all(long_note not in memo for _, memo in cnl_fastpath._LINES.values())
