"""sd-symbolic normalizePersistentContext: KU tree shape, links, offsets, coverage, roles, procedures, scale."""

from __future__ import annotations

import hashlib
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta, source_id_for
from mrpvm.plugins.sdk.text import sentence_spans
from mrpvm.protocol.document import KnowledgeUnit

GUIDE = """# Greenhouse Handbook

A cold frame is a low glazed box that protects seedlings from frost. Gardeners open the lid on sunny days.
The glass traps warmth during the day and releases it slowly at night.

## Watering

Seedlings must never sit in standing water because their roots rot quickly. Water early in the morning,
when evaporation is low. Unlike clay pots, plastic trays hold moisture for several days.

To water a seed tray from below:

1. Fill a basin with two centimetres of rainwater.
2. Set the tray in the basin for ten minutes.
3. Lift the tray out and let it drain.

## Troubleshooting

If the heater fails at night, the seedlings wilt by morning. Damping off is a fungal disease that kills young stems.
The vent is part of the lid.

| Symptom | Cause |
|---|---|
| yellow leaves | overwatering |
| leggy stems | low light |

```
vent.open(angle=30)
```

Last spring the old frame cracked during a storm. We rebuilt it with thicker glass and moved it closer to the wall.
"""

HEADING_OR_SEPARATOR = re.compile(r"^\s*(#{1,6}\s|\|?[\s:|-]*-[\s:|-]*\|?\s*$)")
ATOMIC_ID = re.compile(r"^(?P<sid>[^\s:]+)::chunk-(?P<chunk>\d{3,})::unit-(?P<unit>\d{3,})$")
SECTION_ID = re.compile(r"^(?P<sid>[^\s:]+)::section-(?P<n>\d{3,})$")


def tree(text: str, source_id: str = "src-guide", **meta) -> list[KnowledgeUnit]:
    return build_tree(
        text, SourceMeta(source_id, meta.pop("name", "guide.md"), "text", created_at="t0", **meta)
    )


@pytest.fixture(scope="module")
def guide_units() -> list[KnowledgeUnit]:
    return tree(GUIDE)


def by_level(units: list[KnowledgeUnit], level: str) -> list[KnowledgeUnit]:
    return [u for u in units if u.kuType == level]


def covered_chars(text: str, units: list[KnowledgeUnit]) -> list[int]:
    """How many atomic units cover each character of the text."""
    counts = [0] * (len(text) + 1)
    for u in by_level(units, "atomic"):
        counts[u.charStart] += 1
        counts[u.charEnd] -= 1
    running, out = 0, []
    for c in counts[:-1]:
        running += c
        out.append(running)
    return out


def assert_complete(text: str, units: list[KnowledgeUnit]) -> None:
    """Every non-blank character outside heading and table-separator lines is in exactly one atomic unit."""
    cover = covered_chars(text, units)
    pos = 0
    for line in text.split("\n"):
        if not HEADING_OR_SEPARATOR.match(line):
            for i, ch in enumerate(line):
                if not ch.isspace():
                    assert cover[pos + i] == 1, (
                        f"char {pos + i} ({line[:40]!r}) covered {cover[pos + i]} times"
                    )
        pos += len(line) + 1


# --------------------------------------------------------------------------- shape


def test_levels_and_ids(guide_units: list[KnowledgeUnit]) -> None:
    aggregates = by_level(guide_units, "aggregate")
    composites = by_level(guide_units, "composite")
    atomics = by_level(guide_units, "atomic")
    assert len(aggregates) == 1 and aggregates[0].id == "src-guide::source-summary"
    assert len(composites) == 3  # one per heading; the title heading's text opens the first section
    for c in composites:
        m = SECTION_ID.match(c.id)
        assert m and m.group("sid") == "src-guide"
        assert c.chunkId == f"src-guide::chunk-{m.group('n')}"
    for a in atomics:
        m = ATOMIC_ID.match(a.id)
        assert m and m.group("sid") == "src-guide"
        assert a.chunkId == f"src-guide::chunk-{m.group('chunk')}"
        assert a.unitIndex == int(m.group("unit")) and a.chunkIndex == int(m.group("chunk"))
    assert len({u.id for u in guide_units}) == len(guide_units)
    assert [c.title for c in composites] == ["Greenhouse Handbook", "Watering", "Troubleshooting"]
    assert composites[1].sectionTitle == "Greenhouse Handbook > Watering"


def test_links_are_consistent_both_ways(guide_units: list[KnowledgeUnit]) -> None:
    index = {u.id: u for u in guide_units}
    aggregate = by_level(guide_units, "aggregate")[0]
    assert aggregate.parentUnitIds == []
    assert aggregate.childUnitIds == [c.id for c in by_level(guide_units, "composite")]
    for unit in guide_units:
        for child in unit.childUnitIds:
            assert unit.id in index[child].parentUnitIds
        for parent in unit.parentUnitIds:
            assert unit.id in index[parent].childUnitIds
        if unit.kuType == "atomic":
            assert len(unit.parentUnitIds) == 1 and index[unit.parentUnitIds[0]].kuType == "composite"
            assert unit.childUnitIds == []
        if unit.kuType == "composite":
            assert unit.parentUnitIds == [aggregate.id] and unit.childUnitIds
    assert sum(len(c.childUnitIds) for c in by_level(guide_units, "composite")) == len(
        by_level(guide_units, "atomic")
    )


def test_offsets_slice_back_to_the_source(guide_units: list[KnowledgeUnit]) -> None:
    for unit in by_level(guide_units, "atomic"):
        body = GUIDE[unit.charStart : unit.charEnd]
        assert unit.hash == hashlib.sha256(body.encode()).hexdigest()[:16]
        if unit.textBody is not None:
            assert unit.textBody == body
        else:  # the claim is the text body with its whitespace collapsed
            assert " ".join(unit.body.split()) == " ".join(body.split())
        assert " ".join(body.split())[:20].lstrip("0123456789. ") in " ".join(unit.body.split())
    for unit in by_level(guide_units, "composite"):
        assert GUIDE[unit.charStart : unit.charEnd].lstrip().startswith("#")


def test_provenance_on_every_unit(guide_units: list[KnowledgeUnit]) -> None:
    for unit in guide_units:
        assert unit.sourceId == "src-guide" and unit.sourceName == "guide.md" and unit.sourceType == "text"
        assert (
            unit.createdAt == "t0" and unit.hash and unit.charStart is not None and unit.charEnd is not None
        )
        assert unit.ingestedAt == "t0" and unit.author is None and unit.knowledgeDate is None
    dated = tree(GUIDE, author="Ada", knowledge_date="2024-05-01")
    assert {u.kuType for u in dated} == {"atomic", "composite", "aggregate"}
    assert {(u.author, u.knowledgeDate, u.ingestedAt) for u in dated} == {("Ada", "2024-05-01", "t0")}


def test_no_sentence_lost(guide_units: list[KnowledgeUnit]) -> None:
    assert_complete(GUIDE, guide_units)


def test_every_sentence_is_in_exactly_one_atomic(guide_units: list[KnowledgeUnit]) -> None:
    atomics = by_level(guide_units, "atomic")
    for start, end in sentence_spans(GUIDE):
        if GUIDE[start:end].lstrip().startswith(("#", "|", "```")):
            continue
        holders = [u for u in atomics if u.charStart <= start and end <= u.charEnd]
        overlapping = [u for u in atomics if u.charStart < end and start < u.charEnd]
        assert len(holders) == 1 or len(overlapping) >= 1, GUIDE[start:end]


# --------------------------------------------------------------------------- content


def find(units: list[KnowledgeUnit], needle: str) -> KnowledgeUnit:
    hits = [u for u in by_level(units, "atomic") if needle in u.body]
    assert len(hits) == 1, needle
    return hits[0]


def test_procedure_keeps_steps_in_order(guide_units: list[KnowledgeUnit]) -> None:
    unit = find(guide_units, "Fill a basin")
    assert unit.role == "Procedure" and unit.claim is None
    lines = unit.procedure.split("\n")
    assert lines[0] == "To water a seed tray from below:"
    assert lines[1].startswith("1. Fill a basin")
    assert lines[2].startswith("2. Set the tray")
    assert lines[3].startswith("3. Lift the tray")
    assert unit.topic == "water a seed tray from below"


def test_roles_from_surface_cues(guide_units: list[KnowledgeUnit]) -> None:
    assert find(guide_units, "cold frame is a low glazed box").role == "Definition"
    assert find(guide_units, "must never sit").role in ("Constraint", "Explanation")
    assert find(guide_units, "Unlike clay pots").role == "Comparison"
    assert find(guide_units, "If the heater fails").role == "Diagnostic"
    assert find(guide_units, "Last spring the old frame cracked").role == "Narrative"


def test_fact_sentences_get_their_own_unit_with_a_triple(guide_units: list[KnowledgeUnit]) -> None:
    vent = find(guide_units, "The vent is part of the lid.")
    assert vent.claim == "The vent is part of the lid."
    assert (vent.subject, vent.relation, vent.object, vent.confidence) == ("vent", "part_of", "lid", 0.9)
    frame = find(guide_units, "cold frame is a low glazed box")
    assert (frame.subject, frame.relation, frame.object) == ("cold frame", "instance_of", "low glazed box")
    assert frame.confidence is not None and 0.6 <= frame.confidence < 0.9


def test_related_sentences_are_grouped(guide_units: list[KnowledgeUnit]) -> None:
    unit = find(guide_units, "Gardeners open the lid")
    assert "The glass traps warmth" in unit.body
    prose = [u for u in by_level(guide_units, "atomic") if u.unitType == "sentence-group"]
    assert prose, "prose sentences should be grouped"


def test_table_and_code_units(guide_units: list[KnowledgeUnit]) -> None:
    table = find(guide_units, "yellow leaves")
    assert table.unitType == "table" and "overwatering" in table.body
    code = find(guide_units, "vent.open(angle=30)")
    assert code.unitType == "code"


def test_summaries_are_extractive(guide_units: list[KnowledgeUnit]) -> None:
    flat = " ".join(GUIDE.split())
    for unit in by_level(guide_units, "composite") + by_level(guide_units, "aggregate"):
        assert unit.claim
        for sentence in re.split(r"(?<=[.!?])\s+|\n", unit.claim):  # list items: one per line
            assert sentence.removeprefix("- ").lstrip("0123456789. ") in flat, sentence
    aggregate = by_level(guide_units, "aggregate")[0]
    assert aggregate.topic == "Greenhouse Handbook"


# --------------------------------------------------------------------------- sizes and options


def essay(paragraphs: int, seed: int = 3) -> str:
    rng = random.Random(seed)
    themes = [
        ("orchard", "apples", "pruning", "blossom"),
        ("harbour", "ships", "tides", "cargo"),
        ("library", "manuscripts", "catalogue", "scribes"),
        ("mountain", "glaciers", "avalanche", "climbers"),
    ]
    out = []
    for p in range(paragraphs):
        a, b, c, d = themes[(p // 5) % len(themes)]
        sentences = [
            f"The {a} near the valley was known for its {b} in the year {rng.randint(1800, 1900)}.",
            f"Every season the {c} of the {b} took several weeks of careful work by the {d}.",
            f"Visitors often remarked that the {a} looked different after the {c} had finished.",
        ]
        out.append(" ".join(sentences[: rng.randint(2, 3)]))
    return "\n\n".join(out)


def test_long_unheaded_text_is_clustered_into_sections() -> None:
    text = essay(60)
    units = tree(text, "src-essay", name="")
    composites = by_level(units, "composite")
    assert len(composites) >= 3
    assert all(c.title is None for c in composites)
    assert_complete(text, units)


def test_not_one_unit_per_sentence() -> None:
    text = essay(20)
    units = tree(text, "src-essay")
    n_sentences = len(sentence_spans(text))
    assert len(by_level(units, "atomic")) < n_sentences * 0.7


def test_payload_offsets_shift_ids_and_positions() -> None:
    text = "The pump moves water uphill. It runs on solar power during the day."
    units = tree(text, "src-pump", chunk_base=4, char_offset=1000)
    atomic = by_level(units, "atomic")[0]
    assert atomic.id.startswith("src-pump::chunk-004::unit-")
    assert atomic.charStart == 1000
    assert by_level(units, "composite")[0].id == "src-pump::section-004"


def test_source_id_is_stable() -> None:
    assert (
        source_id_for("Field Notes.md", "a") == source_id_for("Field Notes.md", "b") == "src-field-notes-md"
    )
    assert source_id_for("", "text one") == source_id_for("", "text one") != source_id_for("", "text two")


def generated_megabyte(seed: int = 11) -> str:
    rng = random.Random(seed)
    nouns = ["valve", "ledger", "beacon", "kiln", "loom", "turbine", "granary", "sluice"]
    names = ["Ostra", "Belvin", "Caradoc", "Maren", "Tolvik", "Ysolde"]
    parts: list[str] = []
    size = 0
    while size < 1_000_000:
        roll = rng.random()
        if roll < 0.05:
            parts.append(f"## {rng.choice(names)} {rng.choice(nouns)}")
        elif roll < 0.1:
            parts.append("\n".join(f"{i}. Check the {rng.choice(nouns)} before noon." for i in range(1, 5)))
        elif roll < 0.2:
            parts.append(f"{rng.choice(names)} uses the {rng.choice(nouns)}.")
        else:
            parts.append(
                " ".join(
                    f"The {rng.choice(nouns)} of {rng.choice(names)} was repaired in {rng.randint(1700, 1990)} "
                    f"after the {rng.choice(nouns)} failed."
                    for _ in range(rng.randint(2, 5))
                )
            )
        size += len(parts[-1]) + 2
    return "\n\n".join(parts)


def test_one_megabyte_source_is_complete() -> None:
    text = generated_megabyte()
    units = tree(text, "src-big")
    assert_complete(text, units)
    assert len(by_level(units, "aggregate")) == 1
    assert sum(1 for u in units if u.relation == "uses") > 100


FRAGMENTS = [
    "# Title", "## Sub", "Setext\n===", "- item one", "* item two uses X.", "1. Open the box.", "2) Close it.",
    "Step 3: Wait.", "| a | b |", "|---|---|", "| 1 | 2 |", "```", "code()", "    indented", "The mill uses water.",
    "It rained. Then it stopped!", "Dr. Who is a show.", "", "", "\t", "Ünïcödé wörds hère.", "What is this?",
    "x" * 1500, "word " * 300, "---", "> quote", "🙂 emoji line", ":", "a", "Questions:", "1.5 is a number.",
    "**Bold** uses *it*.",
]  # fmt: skip


def test_random_documents_keep_the_invariants() -> None:
    """Odd Markdown, CRLF, huge lines: atomic units never overlap and every segment is in exactly one."""
    from mrpvm.plugins.sd_symbolic.source_units.outline import read_blocks
    from mrpvm.protocol.cnl import parse_document, render_document
    from mrpvm.protocol.document import CnlDocument, PluginResult

    rng = random.Random(5)
    for _ in range(250):
        text = "\n".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 20)))
        if rng.random() < 0.3:
            text = text.replace("\n", "\r\n")
        if not text.strip():
            continue
        units = tree(text, "src-rand")
        doc = CnlDocument(
            result=PluginResult(status="success", plugin="sd-symbolic", confidence="high"), units=units
        )
        assert len(parse_document(render_document(doc), "normalizePersistentContext").units) == len(units)
        atoms = sorted((u.charStart, u.charEnd) for u in by_level(units, "atomic"))
        assert all(b1 <= a2 for (_, b1), (a2, _) in zip(atoms, atoms[1:], strict=False)), text
        for block in read_blocks(text):
            for seg in block.segments:
                assert sum(1 for a, b in atoms if a <= seg.start and seg.end <= b) == 1, text
        ids = {u.id for u in units}
        assert all(ref in ids for u in units for ref in u.parentUnitIds + u.childUnitIds)


def test_imperative_prose_becomes_an_ordered_procedure() -> None:
    text = (
        "The router sits in the hallway cupboard. To reset the router, follow these steps. "
        "Unplug the power cable. Wait thirty seconds. Plug the cable back in. Check that the green light is on."
    )
    units = tree(text, "src-router")
    procedure = [u for u in by_level(units, "atomic") if u.role == "Procedure"]
    assert len(procedure) == 1
    lines = procedure[0].procedure.split("\n")
    assert lines == [
        "To reset the router, follow these steps.",
        "1. Unplug the power cable.",
        "2. Wait thirty seconds.",
        "3. Plug the cable back in.",
        "4. Check that the green light is on.",
    ]
    assert procedure[0].topic == "reset the router"
    assert_complete(text, units)


def test_bullets_of_facts_are_not_a_procedure() -> None:
    text = "Key features:\n\n- Fast startup\n- Low memory use\n- Plain text configuration"
    units = tree(text, "src-features")
    atomics = by_level(units, "atomic")
    assert len(atomics) == 1 and atomics[0].role != "Procedure"
    assert atomics[0].claim.split("\n")[0] == "Key features:"
    assert_complete(text, units)


def test_items_judged_by_their_first_sentence_and_noun_phrases_are_not_commands() -> None:
    from mrpvm.plugins.sd_symbolic.shared.roles import is_imperative

    assert not is_imperative("Support for the legacy protocol is disabled by default.")
    assert not is_imperative("Support for the v00 format has been removed.")
    assert is_imperative("Search for the file and open it.") and is_imperative("Wait for the light.")
    # a changelog's bullets state facts, with a piece of advice inside one of them: not steps
    text = (
        "Release 7.0 disables weak cryptography.\n\n"
        "   * Support for the v1 protocol is disabled at compile time. Use the v2 protocol instead.\n"
        "   * Support for 1024-bit keys is disabled at run time. Please ask the server administrator.\n"
        "   * Support for the v00 cert format has been removed.\n"
    )
    units = tree(text, "src-changes")
    assert all(u.role != "Procedure" for u in by_level(units, "atomic"))
    assert_complete(text, units)


def test_summaries_skip_sentences_that_lean_on_the_one_before() -> None:
    text = (
        "The Larkspur V2 is a ferry for coastal routes of up to 200 passengers. It carries twelve cars and "
        "has two diesel engines. The V2 is serviced in the north yard and does not need a dry dock. Its hull "
        "receives a new coating every four years.\n\n"
        "The Heron V7 is a ferry for river routes of up to 60 passengers. It carries no cars and has one "
        "electric engine. The V7 is serviced in the city basin, so it needs a crane. Its hull receives a new "
        "coating every six years. The V7 costs 2 million euros. Neither ferry has a bar."
    )
    units = tree(text, "src-ferries")
    summaries = [u for u in units if u.kuType != "atomic"]
    pronoun = re.compile(r"(?:^|\.\s+)(?:It|Its|They|Their|He|His|She|Her)\b")
    for u in summaries:
        assert not pronoun.search(u.claim), u.claim
    # parallel definitions of two models are not redundant: the codes tell them apart
    whole = next(u for u in summaries if u.kuType == "aggregate").claim
    assert "Larkspur V2 is a ferry" in whole and "Heron V7 is a ferry" in whole


def test_a_unit_opening_with_a_pronoun_is_about_the_subject_before_it() -> None:
    text = (
        "The Orin B4 is a tablet for field surveys. It has a sunlit display and a 12-hour battery, and its "
        "case survives a two-metre drop."
    )
    atomics = by_level(tree(text, "src-tablet"), "atomic")
    first, second = atomics[0], atomics[1]
    assert first.subject == "Orin B4"
    assert second.claim.startswith("It has") and second.topic == "Orin B4"


def test_a_command_after_a_leading_phrase_is_a_procedure_step() -> None:
    text = (
        "## Closing the shop\n\n"
        "At the end of each day, lock the back door and switch off the ovens. Empty the till. "
        "Set the alarm before leaving."
    )
    procedure = [u for u in by_level(tree(text, "src-shop"), "atomic") if u.role == "Procedure"]
    assert len(procedure) == 1
    assert procedure[0].procedure.split("\n") == [
        "1. At the end of each day, lock the back door and switch off the ovens.",
        "2. Empty the till.",
        "3. Set the alarm before leaving.",
    ]


def test_tables_whose_rows_leave_out_the_outer_pipes_and_tables_back_to_back():
    from mrpvm.plugins.sd_symbolic.source_units.outline import read_blocks

    text = (
        "| ID | Uses LLM |\n|---|---|\nsd-symbolic | No |\nsd-llm-fast | Yes |\n"
        "| ID | Backend |\n|---|---|\nkb-fast | BM25 |\n"
        "After the tables.\n"
    )
    blocks = read_blocks(text)
    assert [b.kind for b in blocks] == ["table", "table", "paragraph"]
    rows = [[text[s.start : s.end] for s in b.segments] for b in blocks[:2]]
    assert rows == [
        ["| ID | Uses LLM |", "sd-symbolic | No |", "sd-llm-fast | Yes |"],
        ["| ID | Backend |", "kb-fast | BM25 |"],
    ]


def test_a_short_list_is_its_own_section_summary_one_item_per_line():
    units = tree(
        "# Tool\n\nThe tool weaves files.\n\n## Exit Codes\n- 0 — success\n- 1 — processing error\n"
        "- 2 — invalid input\n\n## Usage\n\nRun it daily. It is fast.\n"
    )
    sections = {u.title: u for u in units if u.kuType == "composite"}
    assert sections["Exit Codes"].claim == "- 0 — success\n- 1 — processing error\n- 2 — invalid input"
    summary = next(u for u in units if u.kuType == "aggregate").claim
    assert "\n- " in summary and "success 1 —" not in summary  # items never run together as one sentence


DESIGN_DOC = """# Tidepool

## Design Goals

Tidepool never overwrites a file that changed on two machines at once. It keeps both copies.

- resumable after a crash
- bounded in memory

## Exit Codes

- 0 — success
- 2 — invalid input
"""


def test_a_list_without_a_lead_in_is_about_its_heading_and_prose_sums_up_a_section() -> None:
    units = tree(DESIGN_DOC)
    lists = [u for u in units if u.unitType == "list"]
    assert {u.topic for u in lists} == {"Design Goals", "Exit Codes"}  # not "success" from an item
    goals = next(u for u in units if u.kuType == "composite" and u.title == "Design Goals")
    # a section that opens with prose is summed up by it, not by its list's fragments
    assert goals.claim.startswith("Tidepool never overwrites") and "bounded in memory" not in goals.claim
    codes = next(u for u in units if u.kuType == "composite" and u.title == "Exit Codes")
    assert "- 0 — success" in codes.claim  # a section that is only a short list is summed up by its items


def test_a_sentence_group_about_two_things_is_labelled_with_both() -> None:
    units = tree("The hammer is in the red box. The saw is kept in the garage.\n")
    group = next(u for u in units if u.kuType == "atomic")
    assert group.unitType == "sentence-group" and group.topic == "hammer, saw"
    one_topic = tree("The boiler heats the water. The boiler shuts off at 90 degrees.\n")
    assert ", " not in next(u for u in one_topic if u.kuType == "atomic").topic  # one subject: one topic


@given(st.text(alphabet="ab \r\n", max_size=16), st.data())
@settings(max_examples=400, deadline=None)
def test_lines_are_the_newline_separated_spans_without_a_trailing_cr(value: str, data) -> None:
    from mrpvm.plugins.sd_symbolic.source_units.segments import line_spans as _lines

    start = data.draw(st.integers(0, len(value)))
    end = data.draw(st.integers(start, len(value)))
    expected, a = [], start
    for line in value[start:end].split("\n"):
        b = a + len(line)
        expected.append((a, b - 1 if line.endswith("\r") else b))
        a = b + 1
    if value[start:end].endswith("\n") or start == end:
        expected.pop()  # no line after a final newline, none in an empty span
    assert _lines(value, start, end) == expected
