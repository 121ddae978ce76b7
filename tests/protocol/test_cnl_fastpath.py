"""The CNL fast path (`cnl_fastpath.parse_fast`) never changes what `parse_document` returns or raises.

It is an optimisation for the kernel's per-call parse: for well-formed single-line documents it builds
the document in one cheap pass; on anything unusual it returns None and the full parser decides.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mrpvm.protocol import cnl, cnl_fastpath
from mrpvm.protocol.cnl import CnlError, parse_document, render_document
from mrpvm.protocol.examples import EXAMPLE_RESPONSES
from mrpvm.protocol.vocab import OPS

FRAGMENTS = [
    "## Plugin Result",
    "## Answer",
    "## Sources",
    "## Plan",
    "## Intent Group 1",
    "## Intent Group 01",
    "## Resolved Intent 1",
    "## Context Unit u::chunk-000::unit-000",
    "## Context Unit bad id",
    "## Other",
    "## ",
    "##x",
    "### Sub",
    "Status: success",
    "Status: splendid",
    "Status:",
    "Status",
    "Plugin: p",
    "Confidence: high",
    "Confidence: 2",
    "Request: 7",
    "LLMCalls: 3",
    "LLMCalls: -1",
    "Used: a, b",
    "Used:",
    "Act: explain",
    "Intent: why",
    "Output: prose",
    "SourceId: s",
    "ChunkId: c",
    "KUType: atomic",
    "Role: Procedure",
    "Role: Description",
    "Topic: t",
    "Claim: c",
    "Procedure: p",
    "Subject: a",
    "Relation: uses",
    "Object: b",
    "Confidence: 0.5",
    "Sufficient: yes",
    "Decompose: maybe",
    "  continued",
    "\tcontinued",
    " single",
    "",
    " ",
    "\x0cform feed",
    ":",
    "Plugin: q\r",
    "Bad Name: v",
]
OPS_OR_NONE = st.one_of(st.none(), st.sampled_from(OPS))


def outcome(text: str, op: str | None) -> tuple[str, object]:
    try:
        return "ok", parse_document(text, op)
    except CnlError as err:
        return "error", [(i.line, i.rule, i.message) for i in err.issues]


def full_outcome(text: str, op: str | None, monkeypatch: pytest.MonkeyPatch) -> tuple[str, object]:
    with monkeypatch.context() as patch:
        patch.setattr(cnl, "_parse_fast", lambda text, op: None)
        return outcome(text, op)


def check_same(text: str, op: str | None) -> None:
    fast = cnl_fastpath.parse_fast(text, op)
    with pytest.MonkeyPatch.context() as patch:
        full = full_outcome(text, op, patch)
    if fast is not None:
        assert full == ("ok", fast), text
    assert outcome(text, op) == full


@pytest.mark.parametrize("op", OPS)
def test_rendered_examples_take_the_fast_path_when_single_line(op: str) -> None:
    text = render_document(EXAMPLE_RESPONSES[op])
    check_same(text, op)
    if "\n  " not in text:
        assert cnl_fastpath.parse_fast(text, op) == parse_document(text, op)


def test_source_units_with_continued_values_take_the_fast_path() -> None:
    """sd's source units carry code blocks and procedures on continuation lines: one pass, not two."""
    unit = (
        "## Context Unit s::chunk-000::unit-{n}\nSourceId: s\nChunkId: s::chunk-000\nKUType: atomic\n"
        "Role: {role}\nTopic: T{n}\n{body}\nParentUnitIds: s::section-000,\n  s::section-001\n"
    )
    code = "Claim: ```js\n  const x = 1;\n  \n\n\tconsole.log(x);\n   \n  ```"
    steps = "Procedure:\n  1. Build.\n  2. Test."
    text = "## Plugin Result\nStatus: success\nPlugin: sd\nConfidence: high\n\n" + "\n".join(
        unit.format(n=n, role=role, body=body)
        for n, (role, body) in enumerate([("Description", code), ("Procedure", steps)] * 3)
    )
    fast = cnl_fastpath.parse_fast(text, "normalizePersistentContext")
    assert fast is not None and fast == cnl._parse_full(text, "normalizePersistentContext")
    assert fast.units[0].claim == "```js\nconst x = 1;\n\nconsole.log(x);\n \n```"
    assert fast.units[0].parentUnitIds == ["s::section-000", "s::section-001"]
    assert fast.units[1].procedure == "1. Build.\n2. Test."
    check_same(text, "normalizePersistentContext")


def test_a_typical_solve_reply_takes_the_fast_path() -> None:
    text = "## Plugin Result\nStatus: success\nPlugin: p\nConfidence: high\nRequest: 4\n\n## Answer\nText.\n\n## Sources\nUsed: a, b\n"
    doc = cnl_fastpath.parse_fast(text, "solve")
    assert (
        doc is not None and doc.answer == "Text." and doc.sources == ["a", "b"] and doc.result.request == "4"
    )


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    lines=st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=30),
    op=OPS_OR_NONE,
    crlf=st.booleans(),
    start_with_result=st.booleans(),
)
def test_line_soup_fast_and_full_agree(
    lines: list[str], op: str | None, crlf: bool, start_with_result: bool
) -> None:
    if start_with_result:
        lines = ["## Plugin Result", *lines]
    check_same(("\r\n" if crlf else "\n").join(lines), op)


@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), op=st.sampled_from(OPS))
def test_mutated_examples_fast_and_full_agree(data: st.DataObject, op: str) -> None:
    lines = render_document(EXAMPLE_RESPONSES[op]).split("\n")
    for _ in range(data.draw(st.integers(0, 3))):
        i = data.draw(st.integers(0, max(0, len(lines) - 1)))
        action = data.draw(st.sampled_from(["delete", "duplicate", "insert", "replace-value"]))
        if action == "delete" and lines:
            del lines[i]
        elif action == "duplicate" and lines:
            lines.insert(i, lines[i])
        elif action == "insert":
            lines.insert(i, data.draw(st.sampled_from(FRAGMENTS)))
        elif lines and ":" in lines[i]:
            lines[i] = lines[i].split(":", 1)[0] + ": " + data.draw(st.text(max_size=8))
    check_same("\n".join(lines), data.draw(st.one_of(st.none(), st.just(op))))


RETRIEVE_REPLY = (
    "## Plugin Result\nStatus: success\nPlugin: kb\nConfidence: high\n\n"
    "## Context Unit {uid}\nSourceId: s\nChunkId: s::chunk-000\nKUType: atomic\nRole: Description\n"
    "Topic: Build\nClaim: Run make.\nUtilityActs: describe, explain\nParentUnitIds: s::section-000\n"
)


def test_a_unit_read_before_is_not_read_again_and_its_reader_cannot_change_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kb-plugins send the same units turn after turn: the second reply's unit comes from the remembered
    fields (no line typed again), as a unit of its own, equal to what the full parser builds."""
    monkeypatch.setattr(cnl_fastpath, "_UNITS", {})
    first_text = RETRIEVE_REPLY.format(uid="s::chunk-000::unit-000")
    first = cnl_fastpath.parse_fast(first_text, "retrieve")
    assert first is not None and len(cnl_fastpath._UNITS) == 1
    first.units[0].parentUnitIds.append("changed")
    first.units[0].utilityActs.clear()

    typed: list[str] = []
    real = cnl_fastpath._fields
    monkeypatch.setattr(
        cnl_fastpath, "_fields", lambda body, by_name: typed.append(body) or real(body, by_name)
    )
    again_text = RETRIEVE_REPLY.format(uid="s::chunk-000::unit-007")  # the same unit text, another id
    again = cnl_fastpath.parse_fast(again_text, "retrieve")
    assert again is not None and again == cnl._parse_full(again_text, "retrieve")
    assert again.units[0].id == "s::chunk-000::unit-007"
    assert again.units[0].parentUnitIds == ["s::section-000"] and again.units[0].utilityActs == [
        "describe",
        "explain",
    ]
    assert len(typed) == 1 and typed[0].startswith("Status: success")  # the result section only


def test_a_unit_that_breaks_a_rule_is_never_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cnl_fastpath, "_UNITS", {})
    bad = RETRIEVE_REPLY.format(uid="s::chunk-000::unit-000").replace("Role: Description", "Role: Procedure")
    for _ in range(2):
        assert cnl_fastpath.parse_fast(bad, "retrieve") is None
        with pytest.raises(CnlError):
            parse_document(bad, "retrieve")
    assert cnl_fastpath._UNITS == {}


def test_remembered_units_are_bounded_in_number_and_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin sending many or huge units never makes the kernel keep them all."""
    monkeypatch.setattr(cnl_fastpath, "_UNITS", {})
    monkeypatch.setattr(cnl_fastpath, "_units_chars", 0)
    monkeypatch.setattr(cnl_fastpath, "_UNITS_MAX", 3)
    for n in range(7):
        text = RETRIEVE_REPLY.format(uid="s::chunk-000::unit-000").replace("Run make.", f"Run make {n}.")
        assert cnl_fastpath.parse_fast(text, "retrieve") is not None
        assert 1 <= len(cnl_fastpath._UNITS) <= 3
    monkeypatch.setattr(cnl_fastpath, "_UNITS_MAX", 100)
    monkeypatch.setattr(cnl_fastpath, "_UNITS_MAX_CHARS", 1000)
    for n in range(7):
        claim = f"Run make {n} " + "and wait " * 40  # ~380 characters: two fit in 1000
        text = RETRIEVE_REPLY.format(uid="s::chunk-000::unit-000").replace("Run make.", claim)
        assert cnl_fastpath.parse_fast(text, "retrieve") is not None
        assert 1 <= len(cnl_fastpath._UNITS) <= 2 and cnl_fastpath._units_chars <= 1000
    huge = RETRIEVE_REPLY.format(uid="s::chunk-000::unit-000").replace("Run make.", "x" * 20_000)
    assert cnl_fastpath.parse_fast(huge, "retrieve") is not None
    assert all(len(text) < 20_000 for text in cnl_fastpath._UNITS)
