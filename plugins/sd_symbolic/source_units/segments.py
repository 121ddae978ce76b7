"""The pieces a source text is cut into, with exact offsets: blocks (a heading, paragraph, list, table, code
block or definition) and their segments (a sentence, list item, table row or code block), plus the cuts
every reader shares: a span's lines, its sentences, and an overlong span split at whitespace."""

from __future__ import annotations

from dataclasses import dataclass, field

from mrpvm.plugins.sdk.text import sentence_spans, trim_span

# Sentences longer than this are cut at a whitespace boundary so no segment grows without bound.
MAX_SEGMENT_CHARS = 1200


@dataclass(slots=True)
class Segment:
    start: int
    end: int
    kind: str  # sentence | item | row | code | term (a definition's term, or a FAQ's question)
    block: int  # index of the block it belongs to
    marker: str = ""  # list marker ("1.", "-", "Step 2:") for items
    ordered: bool = False  # numbered item
    body_start: int = -1  # where an item's text starts after its marker (-1: at start)
    cells: list[str] | None = None  # a plain-text table row's cells (Markdown rows keep their pipes)
    comment: bool = False  # a sentence of a configuration file's comment block: its `#` marks are not text
    field: bool = (
        False  # a YAML entry's short field (`type: int`): a statement of its own, without a full stop
    )
    # words a plain-text renderer broke at a line's end, joined (hyphenation.py): (hyphen, resume, kept)
    joins: tuple[tuple[int, int, bool], ...] = ()


@dataclass(slots=True)
class Block:
    kind: str  # heading | paragraph | list | table | code | definition (a term or lead and its text)
    start: int
    end: int
    level: int = 0  # heading level (1-6)
    title: str = ""  # heading text
    segments: list[Segment] = field(default_factory=list)


@dataclass(slots=True)
class BlockList:
    """A reader's blocks of `text` in order, each segment numbered with its block's index as it is added."""

    text: str
    blocks: list[Block] = field(default_factory=list)

    def sentences(self, a: int, b: int) -> list[Segment]:
        """The sentences of text[a:b], numbered for the next block."""
        return sentences_in(self.text, a, b, len(self.blocks))

    def add(self, block: Block) -> None:
        for seg in block.segments:
            seg.block = len(self.blocks)
        self.blocks.append(block)


def line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of each line in text[start:end], newline (and a CR before it) excluded; a newline that
    ends the span opens no line. One split of the span, not a search per line."""
    out: list[tuple[int, int]] = []
    if end <= start:
        return out
    append = out.append
    a = start
    for line in text[start:end].split("\n"):
        b = a + len(line)
        append((a, b - 1) if line.endswith("\r") else (a, b))
        a = b + 1
    if out[-1][0] == end:  # the empty text after a final newline
        out.pop()
    return out


def split_long(text: str, a: int, b: int, limit: int = MAX_SEGMENT_CHARS) -> list[tuple[int, int]]:
    """Cut an overlong span at whitespace (preferring line breaks and '; ') into pieces of at most ~limit."""
    pieces: list[tuple[int, int]] = []
    while b - a > limit:
        window = text[a : a + limit]
        cut = max(window.rfind("\n"), window.rfind("; "), window.rfind(", "))
        if cut < limit // 3:
            cut = window.rfind(" ")
        if cut <= 0:
            cut = limit
        else:
            cut += 1
        x, y = trim_span(text, a, a + cut)
        if y > x:
            pieces.append((x, y))
        a = a + cut
        a, b = trim_span(text, a, b)
    if b > a:
        pieces.append((a, b))
    return pieces


def sentences_in(text: str, a: int, b: int, block: int) -> list[Segment]:
    out = []
    for s, e in sentence_spans(text, a, b):
        for x, y in split_long(text, s, e):
            out.append(Segment(x, y, "sentence", block))
    return out
