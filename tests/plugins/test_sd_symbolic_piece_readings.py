"""A piece's reading (keys, role cue, past tense, mood, triple) is made once per distinct kind and text in a
build (session 29): a reference manual repeats many of its sentences, and the reading depends on nothing else.

The tree built with the shared readings must be the tree built piece by piece; a repeated sentence is read
once; a sentence and a list item with the same text are read apart (the mood and triple depend on the kind).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from mrpvm.plugins.sd_symbolic.source_units import assemble, pieces
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_analysed_tree, build_tree
from mrpvm.plugins.sd_symbolic.source_units.outline import read_blocks
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta

META = SourceMeta(source_id="s", source_name="manual.md", source_type="text", created_at="t")

# invented: an API reference whose entries repeat the same lines
REPEATED = "\n\n".join(
    f"## widget.{name}()\n\nAdded in: v1.2.0\n\nReturns: the widget's {name}.\n\n"
    "The callback is called once. Call it again to refresh the cache.\n\n"
    "- Call it again to refresh the cache.\n- The value is cached.\n\n"
    "| Option | Default |\n|---|---|\n| size | 4 |\n"
    for name in ("width", "height", "depth", "colour")
)

DEV = sorted(Path(__file__).resolve().parents[2].joinpath("eval", "dev").glob("*/story.nl"))[:6]


def _piecewise(monkeypatch: pytest.MonkeyPatch) -> None:
    """make_piece without the shared readings (each piece read on its own, as before)."""
    plain = pieces.make_piece
    monkeypatch.setattr(assemble, "make_piece", lambda text, seg, seen=None: plain(text, seg))


def _bytes(units: object) -> bytes:
    return msgspec.msgpack.encode(units)


@pytest.mark.parametrize("path", [None, *DEV], ids=lambda p: "invented" if p is None else p.parent.name)
def test_shared_readings_build_the_same_tree(path: Path | None, monkeypatch: pytest.MonkeyPatch) -> None:
    text = REPEATED if path is None else path.read_text(encoding="utf-8")
    shared = build_analysed_tree(text, META, halves=False)
    with monkeypatch.context() as m:
        _piecewise(m)
        alone = build_analysed_tree(text, META, halves=False)
    assert _bytes(shared) == _bytes(alone)
    assert _bytes(build_tree(text, META, halves=False)) == _bytes(alone[0])


def test_a_repeated_text_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    read = pieces.read_piece

    def counted(kind: str, body: str) -> pieces.Reading:
        calls.append((kind, body))
        return read(kind, body)

    monkeypatch.setattr(pieces, "read_piece", counted)
    build_tree(REPEATED, META, halves=False)
    assert calls.count(("sentence", "Added in: v1.2.0")) == 1
    assert calls.count(("sentence", "The callback is called once.")) == 1
    assert len(calls) == len(set(calls))
    segments = [s for b in read_blocks(REPEATED) for s in b.segments if s.kind != "code"]
    assert len(calls) < len(segments) / 2  # four entries of the same lines


def test_kind_keeps_readings_apart() -> None:
    text = "Call it again to refresh the cache.\n\n- Call it again to refresh the cache.\n"
    segs = [s for b in read_blocks(text) for s in b.segments]
    assert [s.kind for s in segs] == ["sentence", "item"]
    seen: dict[tuple[str, str], pieces.Reading] = {}
    shared = [pieces.make_piece(text, s, seen) for s in segs]
    alone = [pieces.make_piece(text, s) for s in segs]
    assert len(seen) == 2
    assert [(p.clean, p.terms, p.cue, p.triple, p.imperative, p.past) for p in shared] == [
        (p.clean, p.terms, p.cue, p.triple, p.imperative, p.past) for p in alone
    ]
    assert shared[0].imperative and shared[1].imperative
    assert shared[0].triple == alone[0].triple and shared[1].triple is None  # an item in the imperative


def test_halves_share_nothing_they_should_not() -> None:
    """The forked build (each side its own readings) gives the serial tree."""
    text = REPEATED * 30
    assert _bytes(build_analysed_tree(text, META, halves=True)) == _bytes(
        build_analysed_tree(text, META, halves=False)
    )
