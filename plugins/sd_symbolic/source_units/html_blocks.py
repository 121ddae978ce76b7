"""The blocks of an HTML source's page text (html_page.py): its runs of text, each made by one element,
grouped as the page shows them — a heading; a paragraph; a list's items (with a code block or a nested
list inside an item) as one list; a definition list's term (dt) and its description (dd) as one
definition; a table's rows as one table; a pre as a code block. The result is the block list the Markdown
reader (blocks.py) makes, so sections, grouping and the KU tree treat all alike."""

from __future__ import annotations

from dataclasses import dataclass

from .segments import Block, Segment, sentences_in, split_long


@dataclass(slots=True)
class Run:
    """Page text one element shows: [body, end) after its separator and marker, from `start`."""

    role: str  # the innermost element that says what the text is: h1–h6, li, dt, dd, td, th, pre, caption, p
    start: int
    body: int
    end: int
    group: int  # the list, definition list or table it belongs to (-1: none)
    marker: str = ""  # an item's "-" or "3." (only its first run)
    level: int = 0  # a heading's
    cells: list[tuple[int, int]] | None = None  # a table row's cells (page-text spans)


def _kind(run: Run) -> str:
    if run.level:
        return "heading"
    if run.role == "pre":
        return "code"
    if run.role == "li":
        return "item"
    if run.role in ("dt", "dd"):
        return run.role
    if run.role == "row":
        return "row"
    return "paragraph"


def page_blocks(text: str, runs: list[Run]) -> list[Block]:
    """The blocks of the page text `text` made of `runs` (see the module docstring)."""
    blocks: list[Block] = []
    i, n = 0, len(runs)
    while i < n:
        run = runs[i]
        kind = _kind(run)
        j = i + 1
        if kind != "heading" and run.group >= 0:
            if kind == "dt":  # the terms, then their description
                while j < n and runs[j].group == run.group and _kind(runs[j]) == "dt":
                    j += 1
            while j < n and runs[j].group == run.group and _kind(runs[j]) not in ("heading", "dt"):
                j += 1
        blocks.append(_block(text, kind, runs[i:j], len(blocks)))
        i = j
    return blocks


def _block(text: str, kind: str, runs: list[Run], index: int) -> Block:
    first, last = runs[0], runs[-1]
    if kind == "heading":
        return Block(
            "heading",
            first.body,
            first.end,
            level=first.level,
            title=" ".join(text[first.body : first.end].split()),
        )
    if kind == "dt":
        terms = [r for r in runs if _kind(r) == "dt"]
        segs = [Segment(r.body, r.end, "term", index) for r in terms]
        segs += _described(text, runs[len(terms) :], index)
        title = ", ".join(" ".join(text[r.body : r.end].split()) for r in terms)
        return Block("definition", first.body, last.end, title=title, segments=segs)
    if kind == "row" and all(_kind(r) == "row" for r in runs):
        return Block("table", first.body, last.end, segments=[_row(text, r, index) for r in runs])
    if kind == "item":
        segs = []
        for r in runs:
            if _kind(r) == "code":
                segs.append(Segment(r.body, r.end, "code", index))
                continue
            for x, y in split_long(text, r.body, r.end):
                head = x == r.body and bool(r.marker)
                segs.append(
                    Segment(
                        x - len(r.marker) - 1 if head else x,  # its marker shown before it
                        y,
                        "item",
                        index,
                        marker=r.marker if head else "",
                        ordered=r.marker[:1].isdigit(),
                        body_start=x,
                    )
                )
        return Block("list", first.body, last.end, segments=segs)
    if kind == "code" and len(runs) == 1:
        return Block("code", first.body, first.end, segments=[Segment(first.body, first.end, "code", index)])
    return Block("paragraph", first.body, last.end, segments=_described(text, runs, index))


def _described(text: str, runs: list[Run], index: int) -> list[Segment]:
    """A description's segments: sentences, a code block whole, an item's first sentence with its marker."""
    segs: list[Segment] = []
    for r in runs:
        if _kind(r) == "code":
            segs.append(Segment(r.body, r.end, "code", index))
            continue
        if _kind(r) == "row":  # a row of a table whose other cells stand outside any row
            segs.append(_row(text, r, index))
            continue
        found = sentences_in(text, r.body, r.end, index)
        if found and r.marker:
            found[0].marker = r.marker
        segs += found
    return segs


def _row(text: str, run: Run, index: int) -> Segment:
    """A table row's segment, its cells' text with blanks collapsed (a <br> inside a cell is one)."""
    return Segment(
        run.body, run.end, "row", index, cells=[" ".join(text[a:b].split()) for a, b in run.cells or ()]
    )
