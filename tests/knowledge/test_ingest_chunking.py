"""Chunking never drops text (hypothesis) and prefers paragraph and sentence boundaries; tree merging."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.knowledge.chunking import MAX_CHAR_BYTES, chunk_spans, json_size
from mrpvm.knowledge.ku_tree import finish_tree, merge_chunk_trees
from mrpvm.protocol.document import KnowledgeUnit

# Any text without lone surrogates (a decoded file has none): control characters, quotes, emoji, CJK.
any_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=3000)
sentence = st.text(
    alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd", "Zs"), max_codepoint=0x2FFF),
    min_size=1,
    max_size=80,
)
paragraph = st.lists(sentence.map(lambda s: s.strip() + "."), min_size=1, max_size=8).map(" ".join)
document = st.lists(paragraph, min_size=1, max_size=30).map("\n\n".join)


def check_tiling(text: str, spans: list[tuple[int, int]], max_bytes: int) -> None:
    assert "".join(text[a:b] for a, b in spans) == text
    pos = 0
    for a, b in spans:
        assert a == pos and b > a
        assert json_size(text[a:b]) <= max_bytes
        pos = b
    assert pos == len(text)


@settings(max_examples=300, deadline=None)
@given(text=any_text, max_bytes=st.integers(min_value=MAX_CHAR_BYTES, max_value=600))
def test_chunks_tile_any_text_within_the_ceiling(text, max_bytes):
    check_tiling(text, chunk_spans(text, max_bytes), max_bytes)


@settings(max_examples=150, deadline=None)
@given(text=document, max_bytes=st.integers(min_value=200, max_value=2000))
def test_chunks_of_prose_tile_and_cut_at_whitespace(text, max_bytes):
    spans = chunk_spans(text, max_bytes)
    check_tiling(text, spans, max_bytes)
    for _, b in spans[:-1]:
        # every word fits the ceiling, so a cut never splits a word
        assert text[b - 1].isspace() or text[b].isspace()


def test_cuts_prefer_paragraph_then_sentence_boundaries():
    paragraphs = [" ".join(f"Sentence {p}.{s} is here." for s in range(6)) for p in range(40)]
    text = "\n\n".join(paragraphs)
    longest = max(json_size(p) for p in paragraphs)
    spans = chunk_spans(text, 3 * longest)
    assert len(spans) > 5
    for _, b in spans[:-1]:
        assert text[b - 2 : b] == "\n\n"  # every cut right after a blank line
    one_paragraph = " ".join(f"Sentence {s} says something." for s in range(200))
    for _, b in chunk_spans(one_paragraph, 300)[:-1]:
        assert one_paragraph[b - 2 : b] == ". "  # no paragraph break: cut after a sentence


def test_a_ceiling_that_cannot_hold_a_character_is_refused():
    with pytest.raises(ValueError):
        chunk_spans("abc", MAX_CHAR_BYTES - 1)
    assert chunk_spans("", 100) == []
    assert chunk_spans("\x00\x01", MAX_CHAR_BYTES) == [(0, 1), (1, 2)]  # each escapes to 6 bytes


def unit(uid: str, kind: str, chunk: str, parents=(), children=(), claim: str = "c") -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        sourceId="s",
        chunkId=chunk,
        kuType=kind,
        role="Description",
        topic="t",
        claim=claim,
        parentUnitIds=list(parents),
        childUnitIds=list(children),
    )


def chunk_tree(part: int) -> list[KnowledgeUnit]:
    """What a plugin returns for one chunk: numbering restarts at zero in every call."""
    return [
        unit(
            "s::source-summary",
            "aggregate",
            "s::chunk-000",
            children=["s::section-000"],
            claim=f"Summary of part {part}.",
        ),
        unit(
            "s::section-000",
            "composite",
            "s::chunk-000",
            parents=["s::source-summary"],
            children=["s::chunk-000::unit-000"],
        ),
        unit(
            "s::chunk-000::unit-000",
            "atomic",
            "s::chunk-000",
            parents=["s::section-000"],
            claim=f"Fact {part}.",
        ),
    ]


def test_merge_renumbers_ids_and_builds_one_source_aggregate():
    merged = merge_chunk_trees("s", [chunk_tree(0), chunk_tree(1), chunk_tree(2)])
    ids = [u.id for u in merged]
    assert ids == [
        "s::source-summary",
        "s::section-000",
        "s::chunk-000::unit-000",
        "s::section-001",
        "s::chunk-001::unit-000",
        "s::section-002",
        "s::chunk-002::unit-000",
    ]
    root = merged[0]
    assert root.childUnitIds == ["s::section-000", "s::section-001", "s::section-002"]
    assert root.claim == "Summary of part 0. Summary of part 1. Summary of part 2."
    by_id = {u.id: u for u in merged}
    assert by_id["s::chunk-002::unit-000"].parentUnitIds == ["s::section-002"]
    assert by_id["s::section-002"].childUnitIds == ["s::chunk-002::unit-000"]
    assert (
        by_id["s::chunk-001::unit-000"].claim == "Fact 1."
        and by_id["s::chunk-001::unit-000"].chunkId == "s::chunk-001"
    )


def test_merge_without_aggregates_and_dangling_references():
    trees = [[unit("s::x", "atomic", "s::c", parents=["s::gone"])], [unit("s::x", "atomic", "s::c")]]
    merged = merge_chunk_trees("s", trees)
    assert [u.id for u in merged] == ["s::x", "s::x-c001"] and all(u.kuType == "atomic" for u in merged)
    finished, dropped = finish_tree("s", merged, source_name="s.md")
    assert dropped == 1 and finished[0].parentUnitIds == [] and finished[0].sourceName == "s.md"


def test_finish_tree_fixes_only_the_references_that_need_it():
    """A unit whose references all name other units of the tree, once each, is kept as the same object; a
    dangling, a self or a repeated reference is dropped (and counted) in any of the three lists."""
    kept = unit("s::a", "composite", "s::c", children=["s::b", "s::c1"])
    units = [
        kept,
        unit("s::b", "atomic", "s::c", parents=["s::a", "s::a"]),  # repeated
        unit("s::c1", "atomic", "s::c", parents=["s::a"], children=["s::c1"]),  # itself
        msgspec.structs.replace(unit("s::d", "atomic", "s::c"), derivedFromUnitIds=["s::b", "s::zz"]),
    ]
    finished, dropped = finish_tree("s", units, source_name="s.md")
    assert dropped == 3
    assert finished[0].childUnitIds == ["s::b", "s::c1"] and finished[0].sourceName == "s.md"
    assert finished[1].parentUnitIds == ["s::a"] and finished[2].childUnitIds == []
    assert finished[3].derivedFromUnitIds == ["s::b"]
    tidy = [
        msgspec.structs.replace(kept, childUnitIds=["s::b"], sourceName="s.md"),
        msgspec.structs.replace(units[1], parentUnitIds=["s::a"], sourceName="s.md"),
    ]
    finished, dropped = finish_tree("s", tidy, source_name="s.md")
    assert dropped == 0 and all(a is b for a, b in zip(finished, tidy, strict=True))
