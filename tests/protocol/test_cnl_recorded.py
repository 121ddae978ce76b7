"""Replies the built-in plugins gave in a daemon run (`tests/protocol/replies/<plugin>.<op>.<n>.md`, recorded by
`bench/daemon_kb_load.py --requests DIR`) parse on the fast path, and the fast path, on them and on mutated
copies, gives what the full parser gives: the same document or the same located issues."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mrpvm.protocol import cnl_fastpath
from mrpvm.protocol.cnl import CnlError, _parse_full, parse_document

REPLIES = sorted((Path(__file__).parent / "replies").glob("*.md"))
OP = {path: path.name.split(".")[1] for path in REPLIES}
# what a mutation may put in a line: empty, colonless, indented, out-of-range and unusual values
FRAGMENTS = [
    "",
    " ",
    "  continued",
    "\tcontinued",
    "\x0cform feed",
    "Used:",
    "Used",
    "Notes:",
    "Notes: ",
    "Notes",
    ": value",
    "Task: explain/nothing",
    "Success: nan",
    "Success: 1.5",
    "LatencyMs: -1",
    "Alpha: 0",
    "LLMCalls: inf",
    "Confidence: 2",
    "Status:",
    "Plugin:",
    "## Observation 01",
    "## Observation 0",
    "## Sources",
    "## Answer",
    "## Plan",
    "## Context Unit a b",
    "## Intent Group 1",
]


def outcome(text: str, op: str, parse) -> tuple[str, object]:  # type: ignore[no-untyped-def]
    try:
        return "ok", parse(text, op)
    except CnlError as err:
        return "error", [(i.line, i.rule, i.message) for i in err.issues]


def check_same(text: str, op: str) -> None:
    fast = cnl_fastpath.parse_fast(text, op)
    full = outcome(text, op, _parse_full)
    if fast is not None:
        assert full == ("ok", fast), text
    assert outcome(text, op, parse_document) == full, text


def test_there_are_recorded_replies_of_every_per_turn_op() -> None:
    assert {"detectSeeds", "buildPlan", "retrieve", "solve", "recordOutcome"} <= set(OP.values())


@pytest.mark.parametrize("path", REPLIES, ids=lambda p: p.stem)
def test_a_recorded_reply_takes_the_fast_path_and_gives_the_full_parsers_document(path: Path) -> None:
    text, op = path.read_text(encoding="utf-8"), OP[path]
    cnl_fastpath._UNITS.clear()
    for _ in range(2):  # its units read line by line, then remembered
        fast = cnl_fastpath.parse_fast(text, op)
        assert fast is not None and fast == _parse_full(text, op)


def test_an_empty_optional_field_is_left_out_and_a_second_one_is_a_duplicate() -> None:
    no_context = next(p for p in REPLIES if "Used:\n" in p.read_text(encoding="utf-8"))
    text = no_context.read_text(encoding="utf-8")
    doc = cnl_fastpath.parse_fast(text, "solve")
    assert doc is not None and doc.sources == [] and doc.result.confidence is None
    twice = text.replace("Used:\n", "Used:\nUsed:\n")
    assert cnl_fastpath.parse_fast(twice, "solve") is None
    with pytest.raises(CnlError) as err:
        parse_document(twice, "solve")
    assert [i.rule for i in err.value.issues] == ["duplicate-field"]
    colonless = text.replace("Used:\n", "Used\n")
    assert [i.rule for i in pytest.raises(CnlError, parse_document, colonless, "solve").value.issues] == [
        "field-syntax"
    ]


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), path=st.sampled_from(REPLIES))
def test_mutated_recorded_replies_fast_and_full_agree(data: st.DataObject, path: Path) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["delete", "duplicate", "insert", "empty-value", "replace-value"]))
        if action == "delete":
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "insert":
            lines.insert(i, data.draw(st.sampled_from(FRAGMENTS)))
        elif ":" in lines[i]:
            value = "" if action == "empty-value" else " " + data.draw(st.text(max_size=6))
            lines[i] = lines[i].split(":", 1)[0] + ":" + value
        if not lines:
            lines = [""]
    check_same("\n".join(lines), OP[path])
