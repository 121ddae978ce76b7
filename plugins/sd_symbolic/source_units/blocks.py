"""Split a source text into Markdown-ish blocks and those blocks into segments, keeping exact offsets.

A *block* is a heading, paragraph, list, table or fenced code block. A *segment* is the smallest piece
a Knowledge Unit is built from: a prose sentence, a list item, a table row or a whole code block. Every
non-blank character of the source outside headings, horizontal rules and table separator lines belongs
to exactly one segment, so KUs built from segments cover the text with nothing lost. One pass over the
lines: linear time.
"""

from __future__ import annotations

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import FENCE, TABLE_ROW, TABLE_SEP, trim_span

from .definition_lists import Definition, definition_at, opens_definition_list
from .drawings import drawing_end
from .page_markup import front_matter, hidden_html_end, wiki_heading
from .segments import Block, Segment, line_spans, sentences_in, split_long
from .shortcodes import markup_only
from .yaml_entries import Entry, ends_item, labels_sequence, yaml_entry

_ATX = lazy_pattern(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
# a heading's attributes (Pandoc, PHP Markdown Extra, kramdown, Hugo): "## Install {#install .wide}"
_HEADING_ATTRIBUTES = lazy_pattern(r"[ \t]*\{:?[ \t]*[#.][\w:.-]+(?:[ \t]+[^{}\n]*)?\}[ \t]*$")
_SETEXT = lazy_pattern(r"^ {0,3}(=+|-+)[ \t]*$")
_RULE = lazy_pattern(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ITEM = lazy_pattern(
    r"^(?P<indent>[ \t]*)(?P<marker>[-*+•‣◦]|\d{1,3}[.)]|\(\d{1,3}\)|[a-z][.)]|(?:Step|STEP|step)\s+\d{1,3}[:.)]?)"
    r"[ \t]+(?=\S)"
)
# an indented code block (CommonMark): four spaces or a tab, after a blank line, outside a list
_INDENTED = lazy_pattern(r"^(?: {4}|\t)[ \t]*\S")
# a word ending a sentence or a clause ("pip install ." ends none), or a list marker opening the line
_PROSE_LINE = lazy_pattern(r"[^\W_][.!?;,]['\"”’)\]]*\s*$|^\s*(?:[-*+•]|\d{1,3}[.)])\s")
_TERMINAL = lazy_pattern(r"[.!?:;,]['\"”’)]*$")
# What a line must open with (after blanks) for _ATX, FENCE, _ITEM, TABLE_ROW, _SETEXT or _RULE to match: a
# prose line that does not is a paragraph's next line without trying each of them.
_MAY_OPEN_BLOCK = lazy_pattern(r"\s*(?:[#`~\-*+•‣◦(|=_]|\d|[a-z][.)]|[Ss](?:tep|TEP))")


def _is_title_line(text: str, a: int, b: int) -> bool:
    """A lone short line without final punctuation reads as a title ("The Awakening of Lumina-7")."""
    line = text[a:b].strip()
    if not line or len(line) > 90 or _TERMINAL.search(line):
        return False
    n_words = len(line.split())
    return 1 <= n_words <= 12 and (line[0].isupper() or line[0].isdigit())


def parse_blocks(text: str) -> list[Block]:
    """The blocks of a text in order, with their segments."""
    lines = line_spans(text, 0, len(text))
    blocks: list[Block] = []
    i, n = 0, len(lines)
    if (page := front_matter(text, lines)) is not None:
        i, title = page
        if title:  # the page's title, which its template shows as its heading
            blocks.append(Block("heading", lines[0][0], lines[i - 1][1], level=1, title=title))
    while i < n:
        a, b = lines[i]
        line = text[a:b]
        if not line.strip() or markup_only(line):
            i += 1
            continue
        if line.lstrip().startswith("<") and (hidden := hidden_html_end(text, lines, i)) is not None:
            i = hidden  # a comment, a style or a script element: nothing shown
            continue
        if opens_definition_list(text, lines, i):
            found = definition_at(text, lines, i)
            blocks.append(_definition_block(text, found, len(blocks)))
            i = found.after
            continue
        if line.endswith(":") and (entry := yaml_entry(text, lines, i)) is not None:
            blocks.append(_entry_block(text, entry, len(blocks)))
            i = entry.after
            continue
        fence = FENCE.match(line)
        if (
            fence
            and not line.strip().strip(fence.group(1)[0])
            and i > 0
            and text[slice(*lines[i - 1])].strip()
        ):
            fence = None  # "~~~~" right under a line of text underlines it: not a code fence
        if fence:
            mark = fence.group(1)
            j = i + 1
            while j < n and not text[lines[j][0] : lines[j][1]].lstrip().startswith(mark[:3]):
                j += 1
            last = min(j, n - 1)
            s, e = trim_span(text, a, lines[last][1])
            blk = Block("code", s, e)
            blk.segments.append(Segment(s, e, "code", len(blocks)))
            blocks.append(blk)
            i = j + 1
            continue
        if _INDENTED.match(line) and (i == 0 or not text[slice(*lines[i - 1])].strip()):
            after = (
                _indented_code(text, lines, i, blocks) if not blocks or blocks[-1].kind != "list" else None
            )
            if after is not None:  # after a list, an indented line continues its item
                i = after
                continue
        if (drawn := drawing_end(text, lines, i)) is not None:
            s, e = trim_span(text, a, lines[drawn - 1][1])
            blocks.append(Block("code", s, e, segments=[Segment(s, e, "code", len(blocks))]))
            i = drawn
            continue
        if (wiki := wiki_heading(line)) is not None:
            s, e = trim_span(text, a, b)
            blocks.append(Block("heading", s, e, level=wiki[0], title=wiki[1]))
            i += 1
            continue
        atx = _ATX.match(line)
        if atx:
            s, e = trim_span(text, a, b)
            title = _HEADING_ATTRIBUTES.sub("", atx.group(2)).strip() or atx.group(2).strip()
            blocks.append(Block("heading", s, e, level=len(atx.group(1)), title=title))
            i += 1
            continue
        if _RULE.match(line):
            i += 1
            continue
        if TABLE_ROW.match(line):
            blk = Block("table", a, b)
            j = i
            separated = False
            while j < n and _in_table(text[lines[j][0] : lines[j][1]], separated):
                if separated and j + 1 < n and TABLE_SEP.match(text[lines[j + 1][0] : lines[j + 1][1]]):
                    break  # a header row over its own separator: the next table starts here
                ra, rb = lines[j]
                if TABLE_SEP.match(text[ra:rb]):
                    separated = True
                else:
                    s, e = trim_span(text, ra, rb)
                    blk.segments.append(Segment(s, e, "row", len(blocks)))
                j += 1
            blk.start, blk.end = trim_span(text, a, lines[j - 1][1])
            if blk.segments:
                blocks.append(blk)
            i = j
            continue
        if _ITEM.match(line):
            i = _parse_list(text, lines, i, blocks)
            continue
        # paragraph: until a blank line or the start of another block kind
        j = i + 1
        while j < n:
            la, lb = lines[j]
            nxt = text[la:lb]
            if nxt.endswith(":") and (
                labels_sequence(text, lines, j) or yaml_entry(text, lines, j) is not None
            ):
                break
            hidden = nxt.lstrip().startswith("<") and hidden_html_end(text, lines, j) is not None
            if nxt.strip() and not _MAY_OPEN_BLOCK.match(nxt) and not markup_only(nxt) and not hidden:
                j += 1
                continue
            if (
                not nxt.strip()
                or markup_only(nxt)
                or hidden
                or _ATX.match(nxt)
                or FENCE.match(nxt)
                or _ITEM.match(nxt)
                or TABLE_ROW.match(nxt)
            ):
                break
            if _SETEXT.match(nxt) or _RULE.match(nxt):
                break
            j += 1
        s, e = trim_span(text, a, lines[j - 1][1])
        if j < n and j == i + 1 and _SETEXT.match(text[lines[j][0] : lines[j][1]]):
            level = 1 if text[lines[j][0] : lines[j][1]].strip().startswith("=") else 2
            blocks.append(Block("heading", s, e, level=level, title=text[s:e].strip()))
            i = j + 1
            continue
        blk = Block("paragraph", s, e)
        blk.segments = sentences_in(text, s, e, len(blocks))
        blocks.append(blk)
        i = j
    _promote_titleline_spans(text, blocks)
    return blocks


def _entry_block(text: str, entry: Entry, index: int) -> Block:
    """A YAML entry as a definition: its key the term, its prose in sentences, each field one statement."""
    segments = [Segment(*entry.term, "term", index)]
    for (a, b), prose in entry.parts:
        segments += (
            sentences_in(text, a, b, index) if prose else [Segment(a, b, "sentence", index, field=True)]
        )
    return Block("definition", entry.start, entry.end, title=entry.key, segments=segments)


def _definition_block(text: str, found: Definition, index: int) -> Block:
    """A definition list's entry (definition_lists.py): its term, then its definitions' sentences."""
    segments = [Segment(*found.term, "term", index)]
    for a, b in found.paragraphs:
        segments += sentences_in(text, a, b, index)
    end = found.paragraphs[-1][1] if found.paragraphs else found.term[1]
    title = " ".join(text[found.term[0] : found.term[1]].split())
    return Block("definition", found.term[0], end, title=title, segments=segments)


def _indented_code(text: str, lines: list[tuple[int, int]], i: int, blocks: list[Block]) -> int | None:
    """The indented code block starting at line i (its lines indented, blank lines inside it): one code
    segment; the index of the line after it. None when a line of it ends a sentence or a clause ("… is
    rejected.") or opens with a list marker: indented prose or a list (a quotation, a text that indents its
    paragraphs), read as such."""
    j, last = i, i
    while j < len(lines):
        line = text[slice(*lines[j])]
        if line.strip():
            if not _INDENTED.match(line):
                break
            if _PROSE_LINE.search(line):
                return None
            last = j
        j += 1
    s, e = trim_span(text, lines[i][0], lines[last][1])
    blocks.append(Block("code", s, e, segments=[Segment(s, e, "code", len(blocks))]))
    return last + 1


def _in_table(line: str, separated: bool) -> bool:
    """A row of the table being read: `| a | b |`, or after the separator also `a | b |` (GFM rows may
    leave out the outer pipes)."""
    return TABLE_ROW.match(line) is not None or (separated and line.count("|") >= 2)


def _parse_list(text: str, lines: list[tuple[int, int]], i: int, blocks: list[Block]) -> int:
    """A run of list items (with indented or lazy continuation lines) as one list block."""
    n = len(lines)
    index = len(blocks)
    blk = Block("list", lines[i][0], lines[i][1])
    item_start = item_end = marker_start = -1
    marker_indent = 0
    marker = ""
    j = i
    blank_run = 0

    def close() -> None:
        if item_start >= 0:
            s, e = trim_span(text, item_start, item_end)
            ordered = marker[:1].isdigit() or marker.startswith("(") or marker.lower().startswith("step")
            for x, y in split_long(text, s, e):
                first = x == s  # an overlong item continues in marker-less pieces
                begin, mark = (marker_start, marker) if first else (x, "")
                blk.segments.append(
                    Segment(begin, y, "item", index, marker=mark, ordered=ordered, body_start=x)
                )

    while j < n:
        la, lb = lines[j]
        line = text[la:lb]
        if not line.strip():
            blank_run += 1
            j += 1
            continue
        m = _ITEM.match(line)
        if m:
            if blank_run > 1:
                break
            close()
            marker = m.group("marker")
            marker_start = la + len(m.group("indent"))
            marker_indent = len(m.group("indent"))
            item_start, item_end = la + m.end(), lb
            blank_run = 0
            j += 1
            continue
        if ends_item(line, marker_indent) or (line.endswith(":") and yaml_entry(text, lines, j) is not None):
            break  # a mapping's key: the structure the list stands in goes on
        indented = line.startswith("  ") or line.startswith("\t")
        fence = FENCE.match(line) if indented and item_start >= 0 else None
        if fence is not None and blank_run <= 1:
            # a fenced block indented under an item belongs to it: the step keeps the command it shows
            close()
            mark = fence.group(1)[:3]
            k = j + 1
            while k < n and not text[lines[k][0] : lines[k][1]].lstrip().startswith(mark):
                k += 1
            end = lines[min(k, n - 1)][1]
            blk.segments.append(Segment(la, end, "code", index))
            item_start = item_end = -1
            marker, blank_run, j = "", 0, k + 1
            continue
        if (indented or blank_run == 0) and not (
            _ATX.match(line) or FENCE.match(line) or TABLE_ROW.match(line) or _RULE.match(line)
        ):
            if blank_run and not indented:
                break
            if item_start < 0:  # text after an item's code block: the item goes on, without a marker
                item_start = la + len(line) - len(line.lstrip())
                marker_start = item_start
            item_end = lb
            blank_run = 0
            j += 1
            continue
        break
    close()
    last = j - 1
    while last > i and not text[lines[last][0] : lines[last][1]].strip():
        last -= 1
    blk.start, blk.end = trim_span(text, lines[i][0], lines[last][1])
    if blk.segments:
        blocks.append(blk)
    return last + 1


def _promote_titleline_spans(text: str, blocks: list[Block]) -> None:
    """A one-line paragraph that reads as a title and is followed by body text becomes a heading."""
    for k, blk in enumerate(blocks):
        if blk.kind != "paragraph" or len(blk.segments) != 1 or "\n" in text[blk.start : blk.end]:
            continue
        if k + 1 >= len(blocks) or blocks[k + 1].kind == "heading" or (k and blocks[k - 1].kind == "heading"):
            continue  # a line right under a heading opens its section's body
        nxt = blocks[k + 1]
        if nxt.kind == "paragraph" and len(nxt.segments) == 1 and _is_title_line(text, nxt.start, nxt.end):
            continue
        if _is_title_line(text, blk.start, blk.end):
            blk.kind = "heading"
            blk.level = 1 if k == 0 else 2
            blk.title = text[blk.start : blk.end].strip()
            blk.segments = []
    for k, blk in enumerate(blocks):
        for seg in blk.segments:
            seg.block = k
