"""The CNL parser never raises anything but CnlError, whatever the input and however many issues it has.

Before: once a document had more than MAX_ISSUES problems, a later section with a missing required field
made `parse_document` raise TypeError (the issue cap hid the section's own problems from the check that
skips a faulty section). The campaign below generates and mutates documents with a seeded generator
(reproducible: the seed is in the failure message) and calls the parser's layers directly, so a crash
cannot hide behind `parse_document`'s last-resort guard.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.protocol import cnl, cnl_fastpath
from mrpvm.protocol.cnl import MAX_ISSUES, CnlError, parse_document, render_document
from mrpvm.protocol.examples import EXAMPLE_RESPONSES
from mrpvm.protocol.vocab import OPS

FUZZ_DOCUMENTS = 100_000
FUZZ_SEED = 12

HEADINGS = [
    "## Plugin Result",
    "## Answer",
    "## Sources",
    "## Plan",
    "## Intent Group 1",
    "## Intent Group 2",
    "## Intent Group 0",
    "## Intent Group 99999999999",
    "## Resolved Intent 1",
    "## Resolved Intent x",
    "## Context Unit u::chunk-000::unit-000",
    "## Context Unit u::chunk-000::unit-001",
    "## Context Unit two words",
    "## Context Unit",
    "## Unknown Thing",
    "## ",
    "##",
    "### Sub",
]
FIELDS = [
    "Status",
    "Plugin",
    "Confidence",
    "Result",
    "LLMCalls",
    "Request",
    "Act",
    "Intent",
    "Output",
    "SourceId",
    "ChunkId",
    "KUType",
    "Role",
    "Topic",
    "Claim",
    "Procedure",
    "Subject",
    "Relation",
    "Object",
    "UtilityActs",
    "PhaseScopes",
    "ChunkIndex",
    "CharStart",
    "Score",
    "Sufficient",
    "Purpose",
    "KULevelsUsed",
    "TotalKUsConsidered",
    "Selected",
    "Decompose",
    "SeedDetectorOrder",
    "Used",
    "Bogus",
    "bad name",
    "",
]
VALUES = [
    "success",
    "error",
    "splendid",
    "high",
    "0.5",
    "2",
    "-1",
    "nan",
    "inf",
    "1e999",
    "-0",
    "99999999999999999999999",
    "9223372036854775807",
    "9223372036854775808",
    "yes",
    "maybe",
    "explain",
    "Procedure",
    "Description",
    "atomic",
    "uses",
    "a, b, , c",
    "kb-plugin, nowhere",
    "",
    " ",
    "x" * 300,
    "\x00",
    "\u2028line separator",
    "é\u0301",
    "\ud7ff",
    "a: b: c",
]
NOISE = ["", "  continued", "\tcontinued", " single space", "\x0c", "plain prose", ":", "\r", "```", "- item"]


def _random_text(rng: random.Random, size: int) -> str:
    alphabet = "ab :#\n\r\t -,.0123456789ÄΩ\x00\u2028\U0001f600"
    return "".join(rng.choice(alphabet) for _ in range(size))


def _line(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(HEADINGS)
    if roll < 0.75:
        return f"{rng.choice(FIELDS)}: {rng.choice(VALUES)}"
    if roll < 0.9:
        return rng.choice(NOISE)
    return _random_text(rng, rng.randint(0, 30))


def _past_the_cap(rng: random.Random, lines: list[str]) -> None:
    """Push the document past MAX_ISSUES: unknown fields at the start, or many faulty sections."""
    at = rng.randint(0, len(lines))
    if rng.random() < 0.5:
        junk = [f"Unknown{i}: x" for i in range(rng.randint(MAX_ISSUES - 5, MAX_ISSUES + 30))]
    else:
        junk = []
        for i in range(rng.randint(10, 40)):
            junk += [f"## Intent Group {i + 1}", "Act: ponder", f"Intent: q{i}"]
    lines[at:at] = junk


def _mutate(rng: random.Random, lines: list[str]) -> None:
    action = rng.randrange(11)
    i = rng.randrange(len(lines)) if lines else 0
    if action == 0 and lines:
        del lines[i]
    elif action == 1 and lines:
        lines.insert(i, lines[i])
    elif action == 2:
        lines.insert(i, _line(rng))
    elif action == 3 and lines and ":" in lines[i]:
        lines[i] = lines[i].split(":", 1)[0] + ": " + rng.choice(VALUES + [_random_text(rng, 8)])
    elif action == 4 and lines:
        lines[i] = "  " + lines[i]
    elif action == 5 and lines:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif action == 6 and lines and lines[i]:
        k = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:k] + rng.choice("#:\n\r \x00é") + lines[i][k + 1 :]
    elif action == 7 and lines:
        del lines[i:]
    elif action == 8:
        _past_the_cap(rng, lines)
    elif action == 9 and lines:
        lines[i] = lines[i].rstrip() + "\r"
    elif action == 10 and lines:
        lines.insert(i, lines[i].split(":", 1)[0] + ":")  # an empty (possibly required) field


def generate(rng: random.Random) -> tuple[str, str | None]:
    """One document: a mutated example response (most), or line soup, sometimes past the issue cap."""
    op = rng.choice(OPS)
    if rng.random() < 0.7:
        lines = RENDERED[op].split("\n")
    else:
        lines = ["## Plugin Result", *(_line(rng) for _ in range(rng.randint(0, 25)))]
    for _ in range(rng.randint(0, 5)):
        _mutate(rng, lines)
    if rng.random() < 0.2:
        _past_the_cap(rng, lines)
    sep = "\r\n" if rng.random() < 0.1 else "\n"
    parse_op = rng.choice([op, op, op, None, "notAnOp"])
    return sep.join(lines), parse_op


RENDERED = {op: render_document(EXAMPLE_RESPONSES[op]) for op in OPS}


def _outcome(parse, text: str, op: str | None) -> CnlError | None:
    """The CnlError, or None for a document; anything else propagates (and fails the test with the seed)."""
    try:
        parse(text, op)
    except CnlError as err:
        assert err.issues and len(err.issues) <= MAX_ISSUES and err.total >= len(err.issues)
        return err
    return None


def test_generated_and_mutated_documents_never_crash_the_parser() -> None:
    rng = random.Random(FUZZ_SEED)
    counts = {"ok": 0, "error": 0, "past-cap": 0}
    for n in range(FUZZ_DOCUMENTS):
        text, op = generate(rng)
        try:
            error = _outcome(cnl._parse_full, text, op)
            fast = cnl_fastpath.parse_fast(text, op)  # a document or None, never an exception
        except Exception as err:  # noqa: BLE001 - report the reproducer, not just the exception
            pytest.fail(f"document {n} (seed {FUZZ_SEED}) crashed the parser: {err!r}\n{text[:2000]!r}")
        assert fast is None or error is None, text  # the fast path never accepts what the full one refuses
        counts["ok" if error is None else "error"] += 1
        counts["past-cap"] += error is not None and error.total > MAX_ISSUES
    assert counts["ok"] + counts["error"] == FUZZ_DOCUMENTS
    # The campaign reaches both outcomes and the region past the cap, where the old crash lived.
    assert counts["ok"] > 1000 and counts["error"] > 10_000 and counts["past-cap"] > 5000, counts


@pytest.mark.parametrize(
    "section",
    [
        "## Intent Group 1\nAct: explain\n",  # Intent and Output missing
        "## Context Unit u::c::u\nSourceId: s\n",
        "## Resolved Intent 1\nSelected: a\n",
        "## Plugin Result\nPlugin: again\n",
    ],
)
@pytest.mark.parametrize("junk", [MAX_ISSUES - 1, MAX_ISSUES, MAX_ISSUES + 1, 300])
def test_a_faulty_section_after_the_issue_cap_is_a_cnl_error(section: str, junk: int) -> None:
    head = "## Plugin Result\n" + "".join(f"Bogus{i}: x\n" for i in range(junk))
    text = head + "Status: success\nPlugin: p\nConfidence: high\n\n" + section
    with pytest.raises(CnlError) as err:
        parse_document(text, None)
    assert len(err.value.issues) == min(MAX_ISSUES, len(err.value.issues))
    assert err.value.total > junk  # the section's own problem is counted even when not listed
    assert f"+{err.value.total - 3} more" in str(err.value)


def test_input_that_is_not_text_is_a_cnl_error() -> None:
    for value in (b"## Plugin Result\n", None, 7):
        with pytest.raises(CnlError) as err:
            parse_document(value, "solve")  # type: ignore[arg-type]
        assert err.value.issues[0].rule == "not-text"


def test_an_unexpected_parser_fault_becomes_a_cnl_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str, op: str | None) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(cnl, "_parse_full", broken)
    with pytest.raises(CnlError) as err:
        parse_document("## Plugin Result\nStatus: splendid\n", "solve")
    assert [i.rule for i in err.value.issues] == ["internal"] and "a bug" in str(err.value)


@settings(max_examples=400, deadline=None)
@given(
    junk=st.integers(0, 2 * MAX_ISSUES),
    sections=st.lists(st.sampled_from(HEADINGS), max_size=6),
    fields=st.lists(st.tuples(st.sampled_from(FIELDS), st.sampled_from(VALUES)), max_size=12),
    op=st.one_of(st.none(), st.sampled_from(OPS)),
)
def test_documents_past_the_cap_give_a_document_or_a_cnl_error(junk, sections, fields, op) -> None:
    lines = ["## Plugin Result", *(f"Junk{i}: v" for i in range(junk)), "Status: success", "Plugin: p"]
    for heading in sections:
        lines.append(heading)
        lines.extend(f"{name}: {value}" for name, value in fields)
    _outcome(cnl._parse_full, "\n".join(lines), op)
    _outcome(parse_document, "\n".join(lines), op)
