"""Re-basing units into another source (KB save and fork) keeps the tree consistent."""

from __future__ import annotations

from mrpvm.knowledge.ops import rebase_units
from mrpvm.protocol.document import KnowledgeUnit


def ku(uid: str, source: str, parents=(), children=(), derived=()) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid,
        sourceId=source,
        chunkId=f"{source}::chunk-000",
        kuType="atomic",
        role="Description",
        topic="t",
        claim=f"claim of {uid}",
        parentUnitIds=list(parents),
        childUnitIds=list(children),
        derivedFromUnitIds=list(derived),
    )


def test_fork_renames_the_source_prefix_and_every_reference():
    units = [
        ku("src-a::source-summary", "src-a", children=["src-a::chunk-000::unit-000"]),
        ku(
            "src-a::chunk-000::unit-000", "src-a", parents=["src-a::source-summary"], derived=["elsewhere::x"]
        ),
    ]
    out = rebase_units(units, "copy-1", old_prefix="src-a")
    assert [u.id for u in out] == ["copy-1::source-summary", "copy-1::chunk-000::unit-000"]
    assert {u.sourceId for u in out} == {"copy-1"} and {u.chunkId for u in out} == {"copy-1::chunk-000"}
    assert out[0].childUnitIds == ["copy-1::chunk-000::unit-000"]
    assert out[1].parentUnitIds == ["copy-1::source-summary"]
    assert out[1].derivedFromUnitIds == []  # a reference outside the copied units is dropped
    assert [u.claim for u in out] == [u.claim for u in units]


def test_save_keeps_units_of_several_sources_apart():
    units = [
        ku("a::chunk-000::unit-000", "a"),
        ku("b::chunk-000::unit-000", "b", parents=["a::chunk-000::unit-000"]),
    ]
    out = rebase_units(units, "notes-1")
    ids = [u.id for u in out]
    assert len(set(ids)) == 2 and all(i.startswith("notes-1::") for i in ids)
    assert out[1].parentUnitIds == [out[0].id]
