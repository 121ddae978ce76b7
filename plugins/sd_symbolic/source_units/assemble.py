"""The whole KU tree of a source (tree.py makes each section's units): its blocks, their pieces, its
sections, every section's units, the footnotes' names and the source's aggregate; with
`build_analysed_tree`, every unit analysed for the kb-plugins as well (protocol/handoff.py `analyse_unit`,
the analysis a compact reply ships).

The pieces of the blocks and the units of the sections are the two jobs that take most of the time on a
large source; each runs on both cores (halves.py). A section's units are analysed in the job that builds
them, so the analysis needs no third pass (nor a third forked child) after the tree: the child sends a
section's units with their analysis. A footnote's unit renamed afterwards (footnotes.py) is analysed again.
The source's aggregate needs only the sections' pieces: the parent picks its sentences first, while the child
takes its first runs of units (split_map's `meanwhile`), not after them.
"""

from __future__ import annotations

import pickle
import re
from typing import Any

import msgspec
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.handoff import UnitAnalysis, analyse_unit

from .footnotes import name_footnotes
from .halves import split_map, worth_halves
from .html_page import read_page
from .html_shape import looks_like_html
from .latex_page import read_latex
from .latex_shape import looks_like_latex
from .outline import read_source
from .page_text import Page
from .pieces import Piece, Reading, make_piece, piece_fields, pieces_from_fields
from .roff_page import read_roff
from .roff_text import looks_like_roff
from .sections import make_sections
from .segments import Block
from .summaries import aggregate_summary, join_summary
from .tree import SourceMeta, content_hash, majority_role, section_units
from .yaml_tree import read_yaml

# What a child of halves.py sends back of a section: its units, and with the analysis theirs (its pieces:
# pieces.piece_fields).
_UNITS_ENCODER = msgspec.msgpack.Encoder()
_UNITS_DECODER = msgspec.msgpack.Decoder(list[tuple[list[KnowledgeUnit], KnowledgeUnit]])
_ANALYSED_DECODER = msgspec.msgpack.Decoder(
    list[tuple[list[KnowledgeUnit], KnowledgeUnit, list[UnitAnalysis]]]
)


def build_tree(text: str, meta: SourceMeta, *, halves: bool | None = None) -> list[KnowledgeUnit]:
    """All units of the source: atomic units in text order, then section composites, then the aggregate.

    `halves`: share the pieces and the sections' units of the source with a forked child
    (halves.py); None: when the source is large and a second CPU is free (`worth_halves`). The units are
    the same."""
    return _build(text, meta, halves, analysed=False)[0]


def build_analysed_tree(
    text: str, meta: SourceMeta, *, halves: bool | None = None
) -> tuple[list[KnowledgeUnit], list[UnitAnalysis]]:
    """`build_tree`'s units and their analysis: `analysis[i]` is `analyse_unit(units[i])`."""
    return _build(text, meta, halves, analysed=True)


def _build(
    text: str, meta: SourceMeta, halves: bool | None, *, analysed: bool
) -> tuple[list[KnowledgeUnit], list[UnitAnalysis]]:
    # every slice below is of the text the blocks are read from: an HTML, LaTeX or man page (roff) source's
    # page text (html_page.py, latex_page.py, roff_page.py) or a YAML document's reading (yaml_tree.py), their
    # units' offsets turned back into the source's at the end, else read_source's text
    page = _page(text)
    if page is not None and page.blocks:
        text, blocks = page.text, page.blocks
    else:
        page = None
        text, blocks = read_source(text)
    if halves is None:
        halves = worth_halves(len(text))
    seen: dict[tuple[str, str], Reading] = {}  # each side of split_map fills its own
    per_block = split_map(
        range(len(blocks)),
        [b.end - b.start for b in blocks],
        lambda k: [make_piece(text, s, seen) for s in blocks[k].segments],
        lambda lists: pickle.dumps([[piece_fields(p) for p in ps] for ps in lists], pickle.HIGHEST_PROTOCOL),
        lambda data: pieces_from_fields(blocks, pickle.loads(data)),
        halves=halves,
    )
    pieces: dict[int, list[Piece]] = dict(enumerate(per_block))
    sections = make_sections(blocks, pieces)

    def job(i: int) -> tuple[Any, ...]:
        children, composite = section_units(text, meta, blocks, pieces, sections[i], i)
        if not analysed:
            return children, composite
        return children, composite, [analyse_unit(u) for u in (*children, composite)]

    section_pieces = [[p for k in sec.blocks for p in pieces.get(k, ())] for sec in sections]
    summary: list[list[Piece]] = []  # the aggregate's sentences: the parent finds them while the child works
    built = split_map(
        range(len(sections)),
        [sec.end - sec.start for sec in sections],
        job,
        _UNITS_ENCODER.encode,
        (_ANALYSED_DECODER if analysed else _UNITS_DECODER).decode,
        halves=halves,
        meanwhile=lambda: summary.append(aggregate_summary(section_pieces)),
    )
    atomics = [u for b in built for u in b[0]]
    composites = [b[1] for b in built]
    renamed = {id(u) for u in name_footnotes(atomics)}
    aggregate = _aggregate(text, meta, blocks, composites, summary[0])
    units = [*atomics, *composites, aggregate]
    if page is not None:
        _source_offsets(page, units, meta.char_offset)
    if not analysed:
        return units, []
    analysis = [a for b in built for a in b[2][:-1]] + [b[2][-1] for b in built] + [analyse_unit(aggregate)]
    if renamed:
        for k, unit in enumerate(atomics):
            if id(unit) in renamed:
                analysis[k] = analyse_unit(unit)
    return units, analysis


def _page(text: str) -> Page | None:
    """The page text of a marked-up source, read by its shape (never its name); None: read_source reads it."""
    if looks_like_html(text):
        return read_page(text)
    if looks_like_latex(text):
        return read_latex(text)
    if looks_like_roff(text):
        return read_roff(text)
    return read_yaml(text)  # None when the text is no YAML tree (yaml_shape.py)


def _source_offsets(page: Page, units: list[KnowledgeUnit], off: int) -> None:
    """Units built from a marked-up source's page text (HTML, LaTeX, roff, YAML): their offsets turned back into
    the source's."""
    for unit in units:
        if unit.charStart is not None and unit.charEnd is not None:
            a, b = page.source_span(unit.charStart - off, unit.charEnd - off)
            unit.charStart, unit.charEnd = a + off, b + off


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
