"""The whole KU tree of a source (tree.py makes each section's units): its blocks, their pieces, its
sections, every section's units, the footnotes' names and the source's aggregate; with
`build_analysed_tree`, every unit analysed for the kb-plugins as well (protocol/handoff.py `analyse_unit`,
the analysis a compact reply ships).

The pieces of the blocks and the units of the sections are the two jobs that take most of the time on a
large source; both run on both cores (halves.py). When the headings cut the source near its middle, ONE
forked child does both jobs for the heading sections after the cut (a heading section's split and units
need only its own blocks' pieces): it sends its pieces early (the aggregate's summary needs every piece),
learns how many sections precede its own (their numbers) and sends its sections' units. Otherwise (one
long heading section) each job's second half runs in a child of its own (split_map, per block, then per
section). A section's units are analysed in the job that builds them: the child sends a section's units
with their analysis. A footnote's unit renamed afterwards (footnotes.py) is analysed again. The parent sums
up the source's aggregate while the child still builds units, not after.
"""

from __future__ import annotations

import bisect
import pickle
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.handoff import UnitAnalysis, analyse_unit

from . import halves
from .blocks import Block
from .footnotes import name_footnotes
from .halves import MIN_CHARS, PARENT_SHARE, cores, split_map, split_point
from .outline import read_blocks
from .pieces import Piece, make_piece, piece_fields, pieces_from_fields
from .sections import Section, heading_sections, make_sections, split_sections
from .summaries import aggregate_summary, join_summary
from .tree import SourceMeta, content_hash, majority_role, section_units

# What a child of halves.py sends back of a section: its units, and with the analysis theirs (its pieces:
# pieces.piece_fields).
_UNITS_ENCODER = msgspec.msgpack.Encoder()
_UNITS_DECODER = msgspec.msgpack.Decoder(list[tuple[list[KnowledgeUnit], KnowledgeUnit]])
_ANALYSED_DECODER = msgspec.msgpack.Decoder(
    list[tuple[list[KnowledgeUnit], KnowledgeUnit, list[UnitAnalysis]]]
)


def build_tree(text: str, meta: SourceMeta, *, halves: bool | None = None) -> list[KnowledgeUnit]:
    """All units of the source: atomic units in text order, then section composites, then the aggregate.

    `halves`: build the pieces and the sections' units of the source's second half in a forked child
    (halves.py); None: when the source is large and a second CPU is there. The units are the same."""
    return _build(text, meta, halves, analysed=False)[0]


def build_analysed_tree(
    text: str, meta: SourceMeta, *, halves: bool | None = None
) -> tuple[list[KnowledgeUnit], list[UnitAnalysis]]:
    """`build_tree`'s units and their analysis: `analysis[i]` is `analyse_unit(units[i])`."""
    return _build(text, meta, halves, analysed=True)


def _build(
    text: str, meta: SourceMeta, halves: bool | None, *, analysed: bool
) -> tuple[list[KnowledgeUnit], list[UnitAnalysis]]:
    blocks = read_blocks(text)
    if halves is None:
        halves = len(text) >= MIN_CHARS and cores() > 1
    raw = heading_sections(blocks)
    cut = split_point([sec.end - sec.start for sec in raw], PARENT_SHARE) if halves else len(raw)
    one_child = 0 < cut < len(raw) and _balanced(text, raw[cut].start)

    def job(pieces: dict[int, list[Piece]], sec: Section, i: int) -> tuple[Any, ...]:
        children, composite = section_units(text, meta, blocks, pieces, sec, i)
        if not analysed:
            return children, composite
        return children, composite, [analyse_unit(u) for u in (*children, composite)]

    decode = (_ANALYSED_DECODER if analysed else _UNITS_DECODER).decode
    if one_child:
        summary, built = _one_child(text, blocks, raw, cut, job, decode)
    else:
        summary, built = _two_children(text, blocks, job, decode, halves)
    atomics = [u for b in built for u in b[0]]
    composites = [b[1] for b in built]
    renamed = {id(u) for u in name_footnotes(atomics)}
    aggregate = _aggregate(text, meta, blocks, composites, summary)
    units = [*atomics, *composites, aggregate]
    if not analysed:
        return units, []
    analysis = [a for b in built for a in b[2][:-1]] + [b[2][-1] for b in built] + [analyse_unit(aggregate)]
    if renamed:
        for k, unit in enumerate(atomics):
            if id(unit) in renamed:
                analysis[k] = analyse_unit(unit)
    return units, analysis


Job = Callable[[dict[int, list[Piece]], Section, int], tuple[Any, ...]]
Built = tuple[list[Piece], list[tuple[Any, ...]]]  # the aggregate's summary; each section's job


def _balanced(text: str, at: int) -> bool:
    """A cut at a heading section's start leaves the parent a fair share (else: the per-block split)."""
    return 0.3 <= at / max(1, len(text)) <= 0.6


def _block_pieces(text: str, blocks: list[Block], ks: range) -> list[list[Piece]]:
    return [[make_piece(text, s) for s in blocks[k].segments] for k in ks]


def _section_pieces(sections: list[Section], pieces: dict[int, list[Piece]]) -> list[list[Piece]]:
    return [[p for k in sec.blocks for p in pieces.get(k, ())] for sec in sections]


def _one_child(
    text: str, blocks: list[Block], raw: list[Section], cut: int, job: Job, decode: Callable[[bytes], list]
) -> Built:
    """The heading sections from `cut` on in ONE forked child, pieces and units: it sends its blocks' pieces
    early (the aggregate's summary needs them), learns from the parent how many sections precede its own
    (their numbers), and sends its sections' units."""
    first = bisect.bisect_left([b.start for b in blocks], raw[cut].start)
    rest = range(first, len(blocks))

    def work(child: halves.Child) -> bytes:
        own = dict(zip(rest, _block_pieces(text, blocks, rest), strict=True))
        child.say(_encode_pieces(own.values()))
        sections = split_sections(raw[cut:], blocks, own)
        base = int(child.heard())
        return _UNITS_ENCODER.encode([job(own, sec, base + j) for j, sec in enumerate(sections)])

    child = halves.Child.start(work)
    pieces = dict(enumerate(_block_pieces(text, blocks, range(first))))
    sections = split_sections(raw[:cut], blocks, pieces)
    if child is not None:
        child.tell(str(len(sections)).encode())
    built = [job(pieces, sec, i) for i, sec in enumerate(sections)]
    sent = child.early() if child is not None else None
    theirs = pieces_from_fields(blocks, pickle.loads(sent)) if sent is not None else None
    if theirs is None or len(theirs) != len(rest):
        theirs = _block_pieces(text, blocks, rest)
    pieces.update(zip(rest, theirs, strict=True))
    later = split_sections(raw[cut:], blocks, pieces)
    summary = aggregate_summary(_section_pieces(sections + later, pieces))
    data = child.result() if child is not None else None
    second = decode(data) if data is not None else None
    if second is None or len(second) != len(later):
        second = [job(pieces, sec, len(sections) + j) for j, sec in enumerate(later)]
    return summary, built + second


def _encode_pieces(lists: Iterable[list[Piece]]) -> bytes:
    return pickle.dumps([[piece_fields(p) for p in ps] for ps in lists], pickle.HIGHEST_PROTOCOL)


def _two_children(
    text: str, blocks: list[Block], job: Job, decode: Callable[[bytes], list], halves_: bool
) -> Built:
    """The pieces of the blocks, then the units of the sections, each job's second half in a child."""
    per_block = split_map(
        range(len(blocks)),
        [b.end - b.start for b in blocks],
        lambda k: [make_piece(text, s) for s in blocks[k].segments],
        _encode_pieces,
        lambda data: pieces_from_fields(blocks, pickle.loads(data)),
        halves=halves_,
    )
    pieces: dict[int, list[Piece]] = dict(enumerate(per_block))
    sections = make_sections(blocks, pieces)
    section_pieces = _section_pieces(sections, pieces)
    summary: list[list[Piece]] = []  # the aggregate's sentences: the parent finds them while the child works
    built = split_map(
        range(len(sections)),
        [sec.end - sec.start for sec in sections],
        lambda i: job(pieces, sections[i], i),
        _UNITS_ENCODER.encode,
        decode,
        halves=halves_,
        meanwhile=lambda: summary.append(aggregate_summary(section_pieces)),
    )
    return summary[0], built


def _aggregate(
    text: str,
    meta: SourceMeta,
    blocks: list[Block],
    composites: list[KnowledgeUnit],
    summary: list[Piece],
) -> KnowledgeUnit:
    """The source's aggregate unit: `summary`, its sections' central sentences (`aggregate_summary`)."""
    sid = meta.source_id
    off = meta.char_offset
    doc_title = _document_title(blocks, meta)
    start = blocks[0].start if blocks else 0
    end = blocks[-1].end if blocks else 0
    return KnowledgeUnit(
        **meta.provenance(),
        id=f"{sid}::source-summary",
        chunkId=f"{sid}::chunk-{meta.chunk_base:03d}",
        kuType="aggregate",
        role=majority_role([c.role for c in composites]),
        topic=doc_title,
        claim=join_summary(summary) or doc_title,
        title=doc_title,
        hash=content_hash(text),
        unitType="source-summary",
        childUnitIds=[c.id for c in composites],
        charStart=start + off,
        charEnd=end + off,
        chunkType="source",
    )


def _document_title(blocks: list[Block], meta: SourceMeta) -> str:
    if blocks and blocks[0].kind == "heading":
        return blocks[0].title
    if meta.source_name:
        name = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", meta.source_name.rsplit("/", 1)[-1])
        return name.replace("_", " ").replace("-", " ").strip() or meta.source_id
    return meta.source_id
