"""Sections: the spans that become composite KUs (a heading's section, or a cluster of paragraphs).

Headings open sections (an empty section folds into the next one, keeping the heading path); a section
without headings or longer than MAX_SECTION_CHARS is cut at paragraph boundaries where the vocabulary
shifts, so long unheaded text becomes thematic clusters. One pass over the blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .pieces import Piece, overlap
from .segments import Block

MIN_SECTION_CHARS = 1500
MAX_SECTION_CHARS = 6000
SECTION_SIMILARITY_CUT = 0.15


@dataclass(slots=True)
class Section:
    title: str | None
    path: str | None
    start: int
    end: int
    blocks: list[int] = field(default_factory=list)
    part: int = 1


def make_sections(blocks: list[Block], pieces: dict[int, list[Piece]]) -> list[Section]:
    """Sections at headings; sections without headings or over MAX_SECTION_CHARS split at topic shifts."""
    raw: list[Section] = []
    stack: list[tuple[int, str]] = []
    current: Section | None = None
    for k, blk in enumerate(blocks):
        if blk.kind == "heading":
            while stack and stack[-1][0] >= blk.level:
                stack.pop()
            stack.append((blk.level, blk.title))
            path = " > ".join(t for _, t in stack)
            if current is not None and not current.blocks:
                current.title, current.path = blk.title, path  # an empty section folds into the next
                current.end = blk.end
            else:
                current = Section(blk.title, path, blk.start, blk.end)
                raw.append(current)
            continue
        if current is None:
            current = Section(None, None, blk.start, blk.end)
            raw.append(current)
        current.blocks.append(k)
        current.end = blk.end
    out: list[Section] = []
    for sec in raw:
        out.extend(_split_section(sec, blocks, pieces))
    return out


def _block_terms(k: int, pieces: dict[int, list[Piece]]) -> frozenset[str]:
    acc: set[str] = set()
    for p in pieces.get(k, ()):
        acc |= p.terms
    return frozenset(acc)


def _split_section(sec: Section, blocks: list[Block], pieces: dict[int, list[Piece]]) -> list[Section]:
    size = sum(blocks[k].end - blocks[k].start for k in sec.blocks)
    if size <= MAX_SECTION_CHARS or len(sec.blocks) < 2:
        return [sec]
    first = sec.blocks[0]
    parts = [Section(sec.title, sec.path, sec.start, blocks[first].end, [first])]
    part_size = blocks[first].end - blocks[first].start
    recent = _block_terms(first, pieces)  # terms of the part's last two blocks
    previous: frozenset[str] = frozenset()
    for k in sec.blocks[1:]:
        bt = _block_terms(k, pieces)
        length = blocks[k].end - blocks[k].start
        full = part_size + length > MAX_SECTION_CHARS
        shift = overlap(recent | previous, bt) < SECTION_SIMILARITY_CUT
        if part_size >= MIN_SECTION_CHARS and (full or shift):
            parts.append(
                Section(sec.title, sec.path, blocks[k].start, blocks[k].end, [k], part=len(parts) + 1)
            )
            part_size = 0
        else:
            parts[-1].blocks.append(k)
            parts[-1].end = blocks[k].end
        part_size += length
        previous, recent = recent, bt
    return parts
