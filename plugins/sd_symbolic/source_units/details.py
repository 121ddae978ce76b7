"""A disclosure element, `<details><summary>Question</summary>answer …</details>`, read as one entry: its
summary the term, what it discloses the text (a FAQ entry, an option's long help, a platform's steps).

A FAQ page, a README rendered as HTML and a Markdown README alike write a collapsible entry so; the summary is
what a reader sees of it before opening it — the heading of its body. Both readers give the entries they find
(`Disclosure`: the summary's text span, the body's span and the whole element's span in the text their blocks
are read from): the HTML reader from its parse (html_page.py), the Markdown reader from the raw tags it leaves
in place (`markdown_disclosures`); `fold_disclosures` then makes each one definition block here, the one home of
the rule. An entry is folded when its body holds no other entry (the innermost of nested ones) and no heading
(a body with headings is a section of its own, read by its headings), and its summary states something; the
tags around the summary and the body are no text of the entry. Text of a block outside every entry is kept in
blocks of its own, re-cut at sentences where an entry's edge cut a paragraph.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern

from .segments import Block, Segment, sentences_in

MAX_SUMMARY_CHARS = 300  # a longer "summary" is a body of its own, not an entry's heading
_TAG = lazy_pattern(r"<(/?)(details|summary)\b[^<>]{0,500}>", re.I)
_ANY_TAG = lazy_pattern(r"</?[A-Za-z][^<>]{0,500}>")
_BLANKS = lazy_pattern(r"[ \t\r\n]*")


class Disclosure(msgspec.Struct, frozen=True):
    """One `<details>` element in the text the blocks are read from: [start, end) the whole element, [term_start,
    term_end) its summary's text, [body_start, body_end) what it discloses."""

    start: int
    end: int
    term_start: int
    term_end: int
    body_start: int
    body_end: int


@dataclass(slots=True)
class _OpenTag:
    """An open `<details>` tag of a Markdown text: where it starts, its summary's text span and where its body
    starts (-1: not yet), and where a summary opening it may start (-1: none may: the tag opens no line, or
    something else came first)."""

    start: int
    summary_at: int
    term_start: int = -1
    term_end: int = -1
    body_start: int = -1


def markdown_disclosures(text: str) -> list[Disclosure]:
    """The `<details>` elements written as raw HTML in a Markdown (or plain) text: a details opening tag whose
    first content is a summary element, closed by its own `</details>` (the nearest unclosed one: nesting is
    read). A summary anywhere else, and a details left unclosed, make no entry. One pass over the tags."""
    if "<details" not in text and "<DETAILS" not in text:
        return []
    found: list[Disclosure] = []
    stack: list[_OpenTag] = []  # the open details
    line_start = scanned = indent = 0  # the last tag's line: its start, the blanks opening it; the text seen
    for m in _TAG.finditer(text):
        closing, name = m.group(1) == "/", m.group(2).lower()
        if (nl := text.rfind("\n", scanned, m.start())) >= 0 or not scanned:
            line_start = nl + 1
            indent = _blank_end(text, line_start)
        scanned = m.start()
        if name == "details" and not closing:
            # an HTML block opens a line (CommonMark): "`<details>`" in a sentence is code, not the element
            opens_line = indent >= m.start()
            stack.append(_OpenTag(m.start(), _blank_end(text, m.end()) if opens_line else -1))
        elif name == "details" and stack:
            top = stack.pop()
            if top.term_start >= 0:
                found.append(
                    Disclosure(top.start, m.end(), top.term_start, top.term_end, top.body_start, m.start())
                )
        elif name == "summary" and stack and not closing:
            top = stack[-1]
            if top.summary_at == m.start():  # its first content: the entry's summary (closed below)
                top.term_start = m.end()
            top.summary_at = -1
        elif name == "summary" and stack and stack[-1].term_start >= 0 and stack[-1].term_end < 0:
            stack[-1].term_end, stack[-1].body_start = m.start(), m.end()
    return [_trimmed(text, d) for d in found if d.term_end >= 0]


def _blank_end(text: str, i: int) -> int:
    """Where the run of blanks at `i` ends."""
    found = _BLANKS.match(text, i)
    return found.end() if found is not None else i


_EDGE_TAG = lazy_pattern(r"\s*</?[A-Za-z][^<>]{0,500}>\s*")


def _trimmed(text: str, d: Disclosure) -> Disclosure:
    """The summary's span without the tags and blanks around its text (`<summary><b>Why …?</b></summary>`)."""
    a, b = d.term_start, d.term_end
    while (m := _EDGE_TAG.match(text, a, b)) is not None and m.end() > a:
        a = m.end()
    while a < b and text[b - 1] in " \t\r\n":
        b -= 1
    while (
        a < b and text[b - 1] == ">" and (k := text.rfind("<", a, b)) >= a and _EDGE_TAG.fullmatch(text, k, b)
    ):
        b = k
        while a < b and text[b - 1] in " \t\r\n":
            b -= 1
    return msgspec.structs.replace(d, term_start=a, term_end=b)


def summary_title(text: str, d: Disclosure) -> str:
    """The summary's text as a title: tags left out, blanks collapsed."""
    return " ".join(_ANY_TAG.sub(" ", text[d.term_start : d.term_end]).split())


def fold_disclosures(text: str, blocks: list[Block], found: list[Disclosure]) -> list[Block]:
    """`blocks` with each foldable entry of `found` one definition block (see the module docstring)."""
    entries = _foldable(text, blocks, found)
    if not entries:
        return blocks
    out: list[Block] = []
    pending = list(reversed(blocks))  # the blocks still to place, the next one last
    for d in entries:
        inside: list[Block] = []
        while pending and pending[-1].start < d.end:
            blk = pending.pop()
            if blk.end <= d.start:
                out.append(blk)
                continue
            before = _part(text, blk, blk.start, d.start)
            after = _part(text, blk, d.end, blk.end)
            if before is not None:
                out.append(before)
            inside.append(blk)
            if after is not None:
                pending.append(after)
                break
        body = [s for blk in inside for s in _clipped(text, blk, d.body_start, d.body_end)]
        term = Segment(d.term_start, d.term_end, "term", 0)
        end = body[-1].end if body else d.term_end
        out.append(
            Block("definition", d.term_start, end, title=summary_title(text, d), segments=[term, *body])
        )
    out.extend(reversed(pending))
    for k, blk in enumerate(out):
        for seg in blk.segments:
            seg.block = k
    return out


def _foldable(text: str, blocks: list[Block], found: list[Disclosure]) -> list[Disclosure]:
    """The entries folded: innermost (no other entry inside), with a summary that states something, no heading
    in the body; in text order."""
    ordered = sorted(found, key=lambda d: (d.start, -d.end))
    heads = [b.start for b in blocks if b.kind == "heading"]
    code = [b for b in blocks if b.kind == "code"]  # a page showing HTML source in a code block
    code_starts = [b.start for b in code]
    shown: dict[int, str] = {}  # a code block's text without tags, read once
    out = []
    for k, d in enumerate(ordered):
        if k + 1 < len(ordered) and ordered[k + 1].start < d.end:
            continue  # another entry inside it
        title = summary_title(text, d)
        if not title or len(title) > MAX_SUMMARY_CHARS:
            continue
        h = bisect.bisect_left(heads, d.body_start)
        if h < len(heads) and heads[h] < d.body_end:
            continue
        c = bisect.bisect_right(code_starts, d.term_start) - 1
        if c >= 0 and code[c].end > d.term_start:
            if c not in shown:
                shown[c] = " ".join(_ANY_TAG.sub(" ", text[code[c].start : code[c].end]).split())
            # a page showing the element's source; but a code block of nothing but its tags and its summary is
            # the layout reader's reading of a line of tags, no code the page shows
            if shown[c] != title:
                continue
        out.append(d)
    return out


def _part(text: str, blk: Block, a: int, b: int) -> Block | None:
    """What of `blk` lies in [a, b), as a block of its own; None when that holds no text."""
    if a <= blk.start and blk.end <= b:
        return blk
    if a >= b or blk.kind == "heading" or not text[max(a, blk.start) : min(b, blk.end)].strip():
        return None
    segs = _clipped(text, blk, a, b)
    if not segs:
        return None
    own = {id(s) for s in blk.segments}
    kind = blk.kind if all(id(s) in own for s in segs) else "paragraph"
    title = blk.title if kind == blk.kind else ""
    return Block(kind, segs[0].start, segs[-1].end, level=blk.level, title=title, segments=segs)


def _clipped(text: str, blk: Block, a: int, b: int) -> list[Segment]:
    """The segments of `blk` within [a, b): whole ones kept (a nested term read as a sentence), one cut by
    an edge re-cut at sentences (a code block or a row trimmed to the span)."""
    out: list[Segment] = []
    for s in blk.segments:
        if s.end <= a or s.start >= b:
            continue
        if a <= s.start and s.end <= b:
            out.append(s if s.kind != "term" or blk.kind != "definition" else _as_sentence(s))
            continue
        x, y = max(s.start, a), min(s.end, b)
        if not text[x:y].strip():
            continue
        if s.kind in ("code", "row"):
            lead = len(text[x:y]) - len(text[x:y].lstrip())
            tail = len(text[x:y]) - len(text[x:y].rstrip())
            out.append(Segment(x + lead, y - tail, s.kind, 0, cells=s.cells))
        else:
            out += sentences_in(text, x, y, 0)
    return [s for s in out if _ANY_TAG.sub("", text[s.start : s.end]).strip()]


def _as_sentence(s: Segment) -> Segment:
    return Segment(s.start, s.end, "sentence", 0)
