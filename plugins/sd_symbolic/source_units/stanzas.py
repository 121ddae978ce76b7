"""Stanza files (RFC 822 style: Debian's control and machine-readable copyright files, email-like header
blocks): paragraphs of `Field: value` lines separated by blank lines, a field's value going on over
indented continuation lines, a continuation line ` .` standing for an empty line inside the value.

Read as plain text, a stanza's field lines run together into one sentence ("Files: scrsize.c Copyright: …
License: …"), a continuation's numbered clauses become lists cut off from the field they belong to, and a
field line standing alone reads as a heading over every later stanza. Read here:
- every stanza is a section, headed by its first field ("Files: *", "License: GPL-3+"), whose continuation
  text (paragraphs parted at ` .` lines, numbered or bulleted clauses as lists) is the section's body;
- every later field's line is a statement of its own, in the section's paragraphs: continuation lines
  standing under the field's value ("Copyright: 2001 A" / "           2004 B") are more values, one
  statement with the field's line; any other continuation is text under the field, going on in the field's
  paragraph (its first paragraph; the others, and lists, follow as blocks of their own). Later fields stay
  under the stanza's heading,
  not under headings of their own: a stanza is one record, and what names it (the file a `Files:` field
  names) is what a question about any of its fields is found by.
The file is one when every paragraph is a stanza (a field line at the margin, then only field lines and
indented continuation lines), at least MIN_RECORDS stanzas hold two fields or more, and at most half of the
continuation lines have a structure of their own: a program's help text ("Usage: …", "Options:" over
indented options, terms and descriptions two spaces apart) and a YAML file (indented `key:` lines) do not
qualify.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .outline_layout import MARKER, Line, content, iter_lines, layout_lines
from .segments import Block, BlockList, Segment, sentences_in, split_long

# a field line: a name without blanks at the margin, a colon, then blanks or the line's end
_FIELD = lazy_pattern(r"[A-Za-z][\w.-]{0,40}:(?=[ \t]|$)")
# an indented line with a structure of its own: a YAML key or sequence item, a program's option, a term and its
# description two spaces apart ("list   show the packets")
_STRUCTURED = lazy_pattern(r"[\w.-]+:(?:[ \t]|$)|- |--?\w|.*?[^\s.!?:]  +\S")
_ENDS_SENTENCE = lazy_pattern(r"[.!?:]['\"”’)\]]*$")
MIN_RECORDS = 2  # stanzas of two fields or more
PROSE_WORDS = 8  # a continuation line this long is prose, not a value
MAX_TITLE_CHARS = 120
MAX_LINES_READ = 20_000


@dataclass(slots=True)
class _Field:
    line: Line  # the field's own line
    more: list[Line | None] = field(default_factory=list)  # continuation lines; None for a ` .` line

    @property
    def end(self) -> int:
        last = next((ln for ln in reversed(self.more) if ln is not None), self.line)
        return last.end


def looks_like_stanzas(text: str) -> bool:
    """Every paragraph is a stanza, and the stanzas have the shape of records (see the module docstring).
    A source whose first line is no field line is decided at once; any other stops at its first line that
    breaks the shape (a prose line at the margin), within its first MAX_LINES_READ lines."""
    head = text.lstrip("\ufeff\n\r")
    if not _FIELD.match(head[:48]):
        return False
    return _stanzas(text, islice(iter_lines(text), MAX_LINES_READ)) is not None


def _stanzas(text: str, lines: Iterable[Line | None]) -> list[list[_Field]] | None:
    """The stanzas of the text, or None when a line breaks the shape or the counts do not hold."""
    stanzas: list[list[_Field]] = []
    current: list[_Field] | None = None
    structured = continued = 0
    for line in lines:
        if line is None:
            current = None
            continue
        body = content(text, line)
        if line.indent == 0:
            if body.startswith("#") or not _FIELD.match(body):
                return None
            if current is None:
                current = []
                stanzas.append(current)
            current.append(_Field(line))
            continue
        if current is None:
            return None  # an indented line opening a paragraph: no stanza
        continued += 1
        structured += _STRUCTURED.match(body) is not None
        current[-1].more.append(None if body == "." else line)
    if sum(len(s) >= 2 for s in stanzas) < MIN_RECORDS or 2 * structured > continued:
        return None
    return stanzas


def _prose(text: str, f: _Field) -> bool:
    """The first field's continuation is text (a line ends a sentence or holds many words), not more values
    (which the stanza's heading then holds: "Files: a.c" / " b.c")."""
    return any(
        ln is not None
        and (_ENDS_SENTENCE.search(body := content(text, ln)) is not None or len(body.split()) >= PROSE_WORDS)
        for ln in f.more
    )


def _aligned(text: str, f: _Field) -> bool:
    """The field's continuation lines stand under its value ("Copyright: 2001 A" / "           2004 B"): more
    values, not a text under the field."""
    body = content(text, f.line)
    column = len(body) - len(body[body.index(":") + 1 :].lstrip())
    return all(ln is None or ln.indent == column for ln in f.more)


def _title(text: str, a: int, b: int) -> str:
    title = " ".join(text[a:b].split())
    if title.endswith(":"):
        title = title[:-1]  # "Comment:" over its text: the field's name
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS].rsplit(" ", 1)[0] + " …"
    return title


def stanza_blocks(text: str) -> list[Block]:
    """The blocks of a stanza file (see the module docstring)."""
    stanzas = _stanzas(text, layout_lines(text)) or []
    out = BlockList(text)
    for stanza in stanzas:
        first = stanza[0]
        prose = _prose(text, first)
        head_end = first.line.end if prose else first.end
        title = _title(text, first.line.body, head_end)
        out.add(Block("heading", first.line.body, head_end, level=1, title=title))
        if prose:
            for block in _body(text, first.more):
                out.add(block)
        pending: list[Segment] = []  # the statements of the paragraph under way
        for f in stanza[1:]:
            if not f.more or _aligned(text, f):  # its value, or values going on under it: one statement
                pending.append(Segment(f.line.body, f.end, "sentence", 0, field=True))
                continue
            pending.append(Segment(f.line.body, f.line.end, "sentence", 0, field=True))
            blocks = _body(text, f.more)
            if blocks and blocks[0].kind == "paragraph":  # the field's line opens its text's first paragraph
                pending += blocks.pop(0).segments
            _flush(out, pending)
            for block in blocks:
                out.add(block)
        _flush(out, pending)
    return out.blocks


def _flush(out: BlockList, statements: list[Segment]) -> None:
    if statements:
        out.add(Block("paragraph", statements[0].start, statements[-1].end, segments=list(statements)))
        statements.clear()


def _paragraphs(more: list[Line | None]) -> list[list[Line]]:
    parts: list[list[Line]] = [[]]
    for ln in more:
        if ln is None:
            parts.append([])
        else:
            parts[-1].append(ln)
    return [p for p in parts if p]


def _body(text: str, more: list[Line | None]) -> list[Block]:
    """A continuation's text as blocks: per paragraph (parted at ` .` lines), the prose before its first
    item, then a list of its items, each with its deeper-indented lines; a line between items at the items'
    indent ("or" between two alternatives) stays in the list as a line of its own."""
    blocks: list[Block] = []
    for lines in _paragraphs(more):
        items = _item_starts(text, lines)
        first = items[0] if items else len(lines)
        if first:
            blocks.append(
                Block(
                    "paragraph",
                    lines[0].body,
                    lines[first - 1].end,
                    segments=sentences_in(text, lines[0].body, lines[first - 1].end, 0),
                )
            )
        if not items:
            continue
        base = lines[first].indent
        listed = Block("list", lines[first].body, lines[-1].end)
        k = first
        while k < len(lines):
            j = k + 1
            while j < len(lines) and j not in items and (lines[j].indent > base or k not in items):
                j += 1
            listed.segments += _item(text, lines[k], lines[j - 1].end, k in items)
            k = j
        blocks.append(listed)
    return blocks


def _item(text: str, line: Line, end: int, marked: bool) -> list[Segment]:
    m = MARKER.match(content(text, line)) if marked else None
    at = line.body + m.end() if m else line.body
    marker = m.group(0).strip() if m else ""
    ordered = marker[:1].isdigit() or marker.startswith("(")
    return [
        Segment(
            line.body if x == at else x,
            y,
            "item",
            0,
            marker=marker if x == at else "",
            ordered=ordered,
            body_start=x,
        )
        for x, y in split_long(text, at, end)
    ]


def _item_starts(text: str, lines: list[Line]) -> list[int]:
    """Indexes of the paragraph's lines that open an item: a bullet, or a number ("1.", "(a)") opening the
    paragraph, following a line that ends a sentence or an item's deeper line, or counting on from the
    item before it ("or" / "2. …"); not a number a wrapped sentence happens to start a line with."""
    starts: list[int] = []
    last = 0
    for k, line in enumerate(lines):
        m = MARKER.match(content(text, line))
        if m is None:
            continue
        marker = m.group(0).strip()
        number = int(marker.strip("().")) if marker.strip("().").isdigit() else None
        prev = lines[k - 1] if k else None
        if (
            marker[0] in "-*+•·"
            or prev is None
            or _ENDS_SENTENCE.search(content(text, prev)) is not None
            or prev.indent > line.indent
            or (number is not None and number == last + 1)
        ):
            starts.append(k)
            last = number or last
    return starts
