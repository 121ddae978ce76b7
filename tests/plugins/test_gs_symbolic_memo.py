"""gs-symbolic analyses a unit's text once per distinct text (issue 22): a warm worker sees the same KB
units call after call; what split_units returns is the same as a first analysis, and never shared."""

from __future__ import annotations

from mrpvm.plugins.gs_symbolic import evidence, unit_pieces
from mrpvm.plugins.gs_symbolic.evidence import split_units
from mrpvm.protocol.document import KnowledgeUnit


def unit(ident: str, claim: str, *, role: str = "Description", title: str | None = None) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=ident, sourceId="s", chunkId=f"s::{ident}", kuType="atomic", role=role, topic="router",
        claim=claim, title=title,
    )  # fmt: skip


def shape(sentences):
    return [(s.text, s.terms, s.carried, s.under, s.code, s.unit.id) for s in sentences]


TEXT = "Hold the reset button for ten seconds. It restores the factory password. Is the light blue?"


def test_a_text_is_analysed_once_and_reads_the_same(monkeypatch):
    evidence._statements.cache_clear()
    calls = []
    real = unit_pieces.markdown_pieces
    monkeypatch.setattr(unit_pieces, "markdown_pieces", lambda *a: calls.append(a) or real(*a))
    first = split_units([unit("a", TEXT)])
    again = split_units([unit("a", TEXT)])
    assert len(calls) == 1
    assert shape(first) == shape(again)
    assert [s.text for s in first] == [
        "Hold the reset button for ten seconds.",
        "It restores the factory password.",
    ]
    first[0].terms.append("mutated")  # a caller's change never reaches the next call
    assert "mutated" not in split_units([unit("a", TEXT)])[0].terms


def test_units_sharing_a_text_under_another_role_or_title_are_not_confused():
    """Every unit reads as a fresh analysis of it alone, whatever was analysed before."""
    steps = "1. Unplug the router. 2. Hold the reset button: the light blinks."
    row = "| lan | 2 |"
    units = [
        unit("p", steps, role="Procedure"),
        unit("d", steps),
        unit("r", row, title="Columns: Name | Port"),
        unit("r2", row),
        unit("r3", row, title="Columns: Name | Socket"),
    ]
    fresh = []
    for u in units:
        evidence._statements.cache_clear()
        fresh.append(shape(split_units([u])))
    split_units(units)  # all of them analysed and kept
    assert [shape(split_units([u])) for u in units] == fresh
    assert [f[0][0] for f in fresh[2:]] == ["lan — Port: 2", "lan — 2", "lan — Socket: 2"]
