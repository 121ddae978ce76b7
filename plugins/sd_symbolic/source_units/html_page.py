"""A raw HTML document (a saved web page, a generated manual or primer) read as its rendered page shows it.

Read as Markdown or plain text, an HTML source reached the units raw: tags (`<p>`, `<code>`, `<td>`) in
every sentence and entities never decoded ("Sun&gt;=8" for the "Sun>=8" a reader sees). Read here with the
standard library's html.parser into the *page text* — what a browser shows, in reading order — and the
blocks of that text, each piece keeping where it came from in the source:
- h1–h6 are headings (the section tree);
- the text of p, div, blockquote … is paragraphs; li items of a list (a "-" or "N." marker, as shown);
  dt a definition's term and the dd after it its description (one definition); a tr a table row, its td/th
  cells apart; pre a code block, its lines as they are;
- entities are decoded, tags left out, runs of blanks outside pre are one space;
- what a page does not show as text is left out: script, style, template, head (its title is the page's
  level-1 heading when the page has no h1), nav (the site's menus), noscript, svg, iframe, object and elements
  marked `hidden`;
- a details is one entry, its summary the term (details.py); an admonition's title labels its first
  paragraph ("Note: …", html_boxes.py).
The units are built from the page text (assemble.py), and their offsets are turned back into the source's:
every character of the page text knows the source span it shows (a decoded entity its whole entity, a
marker or a line break the tag that made it), so `charStart`/`charEnd` slice the source as every other
reader's do. A source is read so by its shape alone (`looks_like_html`), never by its name.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .details import fold_disclosures
from .html_blocks import Run, page_blocks
from .html_boxes import MAX_LABEL_CHARS, Boxes
from .html_shape import BLOCK, parseable
from .page_text import Page, ShownText

HIDDEN = frozenset(
    {"script", "style", "template", "head", "title", "nav", "noscript", "svg", "iframe", "object"}
)
VOID = frozenset(
    {
        *("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source"),
        "track",
        "wbr",
    }
)
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# the elements that say what their text is (the innermost open one decides): Run.role
ROLES = frozenset({*HEADINGS, "li", "dt", "dd", "td", "th", "pre", "caption"})
LISTS = frozenset({"ul", "ol", "menu"})
CELLS = frozenset({"td", "th"})
# what parts a table's cells and rows: any other block element inside a cell is read into the cell
TABLE_PARTS = frozenset({"td", "th", "tr", "table", "thead", "tbody", "tfoot", "caption"})
_BLANK_CHARS = " \t\n\r\f"
_BLANK_RUN = lazy_pattern(r"[ \t\n\r\f]{2,}")
_AS_SPACE = str.maketrans({c: " " for c in _BLANK_CHARS})
MAX_TITLE_CHARS = 1000  # a <title> longer than this (in the source) is no page's title
_H1 = lazy_pattern(r"<h1[\s/>]", re.I)
_ENTITY = lazy_pattern(r"&(?:#[0-9]{1,8};?|#[xX][0-9a-fA-F]{1,8};?|[A-Za-z][A-Za-z0-9]{0,31};?)")


def read_page(text: str) -> Page:
    """The page text of an HTML source and its blocks (see the module docstring)."""
    copy, end = parseable(text)
    parser = _Reader(text[:end])
    parser.feed(copy)
    parser.close()
    parser.finish()
    shown = "".join(parser.parts)
    blocks = fold_disclosures(shown, page_blocks(shown, parser.runs), parser.boxes.disclosures)
    return Page(shown, blocks, parser.starts, parser.ends)


@dataclass(slots=True)
class _Role:
    """An open element that says what its text is (ROLES): its tag, the group its runs belong to (a list's,
    a definition list's, a table's; -1: none) and an item's marker while no run has shown it."""

    tag: str
    group: int
    marker: str = ""


class _Reader(HTMLParser, ShownText):
    """html.parser's events turned into the page text and its runs (html_blocks.Run). Every step is
    constant time or amortised over the elements opened, so a source of any shape reads in linear time."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=False)
        self.source = source
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.parts: list[str] = []
        self.size = 0  # the page text's length so far
        self.starts = array("q")
        self.ends = array("q")
        self.runs: list[Run] = []
        self.stack: list[str] = []  # the open elements
        self.open: dict[str, int] = {}  # how many of each are open
        self.roles: list[_Role] = []  # the open ROLES elements
        self.lists: list[list[int]] = []  # the open lists: [ordered, the last item's number, group]
        self.hidden = 0  # open elements that show nothing
        self.groups = 0  # a list, a dl or a table: the runs of one group are one block
        self.tables: list[int] = []  # the open tables' groups
        self.dls: list[int] = []  # the open definition lists' groups
        self.run: Run | None = None
        self.cells: list[tuple[int, int]] = []  # the current row's cells (page-text spans)
        self.row_from = -1  # where the current row's run starts (its separator included)
        self.boxes = Boxes(self.runs)  # details and admonitions (html_boxes.py)
        # the <title>'s text pieces (source text, where): the page's heading when the page has no h1 of its own
        self.title: list[tuple[str, int]] | None = None
        self.titled = _H1.search(source) is not None

    # ------------------------------------------------------------------ positions and text

    def _at(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def _text(self, raw: str, a: int) -> None:
        """Text of the source at `a`: entities decoded, blanks collapsed outside pre."""
        if self.hidden or not raw:
            return
        if self.run is None:
            if not raw.strip():
                return
            self._open_run(a)
        assert self.run is not None
        pre = self.run.role == "pre"
        if pre and self.size == self.run.body:  # a pre's first line break shows nothing
            lead = len(raw) - len(raw.lstrip("\r\n"))
            raw, a = raw[lead:], a + lead
        pos = 0
        for m in _ENTITY.finditer(raw) if "&" in raw else ():
            self._plain(raw[pos : m.start()], a + pos, pre)
            shown = unescape(m.group())
            self._put(shown, a + m.start(), a + m.end())
            pos = m.end()
        self._plain(raw[pos:], a + pos, pre)

    def _plain(self, raw: str, a: int, pre: bool) -> None:
        """Text without entities: as it is in a pre; elsewhere a run of blanks is one space (a run of two or
        more is cut; a lone blank is shown as a space in its place, so a line's words go out in one piece)."""
        if not raw:
            return
        if pre:
            self._put(raw, a, a + len(raw))
            return
        pos = 0
        for m in _BLANK_RUN.finditer(raw):
            self._words(raw, a, pos, m.start())
            if not self._last_blank():
                self._put(" ", a + m.start(), a + m.end())
            pos = m.end()
        self._words(raw, a, pos, len(raw))

    def _words(self, raw: str, a: int, i: int, j: int) -> None:
        """raw[i:j], no two blanks in a row in it, each blank shown as a space; a blank first after a blank
        is left out."""
        if i < j and raw[i] in _BLANK_CHARS and self._last_blank():
            i += 1
        if i < j:
            self._put(raw[i:j].translate(_AS_SPACE), a + i, a + j)

    # ------------------------------------------------------------------ runs

    def _open_run(self, at: int) -> None:
        top = self.roles[-1] if self.roles else _Role("p", -1)
        role, group, marker = top.tag, top.group, top.marker
        if (label := self.boxes.labels(role, group, marker)) is not None:  # "Note: …": an admonition's title
            self._put(" " if self.parts[-1].endswith(":") else ": ", at, at)
            self.run = Run(role, label.start, label.body, self.size, group)
            return
        start = self.size
        if role in CELLS and self.row_from >= 0 and self.cells:
            sep = " | "
        else:
            sep = "\n" if group >= 0 and self.runs and self.runs[-1].group == group else "\n\n"
        if self.size:
            self._put(sep, at, at)
        if marker:  # an item's marker, before its first run only
            top.marker = ""
            self._put(marker + " ", at, at)
        level = int(role[1]) if role in HEADINGS else 0
        self.run = Run(role, start, self.size, self.size, group, marker=marker, level=level)

    def _close_run(self) -> None:
        run = self.run
        if run is None:
            return
        self.run = None
        if not self._run_ended(run):  # nothing shown: the run and its separator are undone
            return
        if run.role in CELLS and self.row_from >= 0:
            self.cells.append((run.body, run.end))
            return
        if not self.boxes.waits() or not self.boxes.took(run, self._tail(run)):
            self.runs.append(run)

    def _tail(self, run: Run) -> str:
        """The text of `run`, the last one shown, when it is short enough to be a title ("" otherwise)."""
        if run.end - run.body > MAX_LABEL_CHARS:
            return ""
        got: list[str] = []
        n = 0
        for piece in reversed(self.parts):
            got.append(piece)
            n += len(piece)
            if n >= run.end - run.body:
                break
        return "".join(reversed(got))[-(run.end - run.body) :]

    def _end_row(self) -> None:
        self._close_run()
        if self.row_from >= 0 and self.cells:
            self.boxes.flush()
            self.runs.append(
                Run(
                    "row",
                    self.row_from,
                    self.cells[0][0],
                    self.cells[-1][1],
                    self.tables[-1] if self.tables else -1,
                )
            )
            self.runs[-1].cells = list(self.cells)
        self.cells = []
        self.row_from = -1

    # ------------------------------------------------------------------ events

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        at = self._at()
        if tag == "br":
            if self.run is not None and not self.hidden:
                self._put("\n", at, at + len(self.get_starttag_text() or ""))
            return
        if tag in BLOCK:
            self._part(tag, at)
        if tag in VOID:
            return
        self.stack.append(tag)
        self.open[tag] = self.open.get(tag, 0) + 1
        if tag in HIDDEN or any(name == "hidden" for name, _ in attrs):
            self.hidden += 1
            self.stack[-1] = tag + " hidden"
            self.open[tag + " hidden"] = self.open.get(tag + " hidden", 0) + 1
            self.open[tag] -= 1
            if tag == "title" and not self.titled and self.size == 0 and not self.open.get("svg hidden"):
                self.title = []
            return
        self._entered(tag, attrs)

    def _part(self, tag: str, at: int) -> None:
        """A block element's start or end: the run of text ends (inside a table's cell, a blank parts it)."""
        if tag not in TABLE_PARTS and self.roles and self.roles[-1].tag in CELLS and self.row_from >= 0:
            if self.run is not None and not self._last_blank():
                self._put(" ", at, at)
            return
        self._close_run()

    def _entered(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.boxes.opened(tag, attrs, len(self.stack))
        # a list, a table's cell or a code block inside an item or a description is part of its group
        inherited = self.roles[-1].group if self.roles else -1
        if tag in LISTS:
            self.groups += 1
            nested = bool(self.roles) and self.roles[-1].tag in ("li", "dd")
            first = next((v for k, v in attrs if k == "start" and v and v.strip().isdigit()), "1")
            self.lists.append([int(tag == "ol"), int(first) - 1, inherited if nested else self.groups])
        elif tag == "dl":
            self.groups += 1
            self.dls.append(self.groups)
        elif tag == "table":
            self.groups += 1
            self.tables.append(self.groups)
        elif tag == "tr":
            self._end_row()
            self.row_from = self.size
        if tag not in ROLES:
            return
        marker = ""
        group = inherited
        if tag == "li":
            lst = self.lists[-1] if self.lists else [0, 0, -1]
            lst[1] += 1
            marker = f"{lst[1]}." if lst[0] else "-"
            group = lst[2]
        elif tag in ("dt", "dd"):
            group = self.dls[-1] if self.dls else -1
        elif tag in CELLS:
            group = self.tables[-1] if self.tables else -1
        elif tag in HEADINGS or tag == "caption":
            group = -1
        self.roles.append(_Role(tag, group, marker))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        hidden = tag + " hidden"
        if not self.open.get(tag) and not self.open.get(hidden):
            return  # an end tag for nothing open: ignored, as a browser does
        if tag in BLOCK:
            self._part(tag, self._at())
        while self.stack:
            top = self.stack.pop()
            self.open[top] -= 1
            self._left(top)
            if top in (tag, hidden):
                break

    def _left(self, top: str) -> None:
        if top == "title hidden" and self.title is not None:
            self._title_heading(self.title)
        if top.endswith(" hidden"):
            self.hidden -= 1
            return
        if top in ROLES and self.roles:
            self._close_run()
            self.roles.pop()
        if top == "tr" or top == "table":
            self._end_row()
        if top in LISTS and self.lists:
            self.lists.pop()
        elif top == "dl" and self.dls:
            self.dls.pop()
        elif top == "table" and self.tables:
            self.tables.pop()
        elif top == "summary":
            self.boxes.summary_closed()
        elif top == "details":
            self.boxes.details_closed(self.size)
        self.boxes.closed(len(self.stack))

    def _title_heading(self, pieces: list[tuple[str, int]]) -> None:
        """The page's <title>, what a browser shows in its tab, as its level-1 heading (the page has none)."""
        self.title, self.titled = None, True
        if sum(len(raw) for raw, _ in pieces) > MAX_TITLE_CHARS:
            return
        hidden, self.hidden = self.hidden, 0
        self.roles.append(_Role("h1", -1))
        for raw, a in pieces:
            self._text(raw, a)
        self._close_run()
        self.roles.pop()
        self.hidden = hidden

    def handle_data(self, data: str) -> None:
        a = self._at()
        if self.title is not None and self.stack and self.stack[-1] == "title hidden":
            self.title.append((self.source[a : a + len(data)], a))
            return
        self._text(self.source[a : a + len(data)], a)  # the source's own characters (_parseable)

    def finish(self) -> None:
        self._end_row()
        self._close_run()
        while self.boxes.details:  # a details left open ends with the page
            self.boxes.details_closed(self.size)
        self.boxes.flush()
