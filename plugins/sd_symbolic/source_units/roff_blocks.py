"""Where a man page source's text goes (roff_page.py reads its lines): the run it is written in — a heading,
a paragraph, a definition's term or description, a list's item, a code block — the list or definition
list it belongs to, and the indented blocks (.RS, mdoc's .Bl and .Bd) it stands in. Filled text has its
blanks collapsed and its lines joined by a space; code keeps its lines."""

from __future__ import annotations

from dataclasses import dataclass

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .html_blocks import Run
from .page_text import ShownText
from .roff_mdoc import Mdoc, joined, render, words_of
from .roff_text import Text, argument_text, joins_next, plain

_BULLET = lazy_pattern(r"[•·∙◦▪\-*o+—–]|\(?(?:\d{1,3}|[a-zA-Z])[.)]|\d{1,3}")
_BLANK_RUN = lazy_pattern(r"[ \t]+")
_DEFINITION_LISTS = frozenset({"-tag", "-hang", "-ohang", "-inset", "-diag"})
MAX_TERM_CHARS = 80  # a term line over an indented block is at most this long
_BULLET_LISTS = frozenset({"-bullet", "-dash", "-hyphen"})


@dataclass(slots=True)
class Frame:
    """An indented block (.RS, mdoc's .Bl or .Bd): the context to return to at its end."""

    kind: str  # rs | bl | bd
    role: str
    group: int
    base: tuple[str, int]
    fill: bool
    list_kind: str = ""  # a .Bl's: def | bullet | enum | column | item
    count: int = 0
    list_group: int = -1  # a .Bl's group


class _Writer(ShownText):
    """The page text, its runs, and the source span of each character: a run opened in a context."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.src = source

    def put(self, piece: str, a: int, b: int) -> None:
        """`piece` shown for the source's [a, b): the source's own characters when it is what the span holds,
        else text the span stands for (an escape, a defined string, a macro's words), whose every character
        shows the whole span — even when it is as long as the span by chance."""
        if piece:
            self._put(piece, a, b, whole=not self.src.startswith(piece, a, b) or b - a != len(piece))

    def last_blank(self) -> bool:
        return self._last_blank()

    def fill(self, pieces: Text) -> None:
        """Filled text: a run of blanks is one space, none after a blank."""
        for text, x, y in pieces:
            if y - x != len(text) or not self.src.startswith(text, x, y):  # text the span stands for
                if not (text.isspace() and self.last_blank()):
                    self.put(text, x, y)
                continue
            pos = 0
            for m in _BLANK_RUN.finditer(text):
                if m.start() > pos:
                    self.put(text[pos : m.start()], x + pos, x + m.start())
                if not self.last_blank():
                    self.put(" ", x + m.start(), x + m.end())
                pos = m.end()
            if pos < len(text):
                self.put(text[pos:], x + pos, y)

    def row(self, cells: list[Text], group: int, at: int) -> None:
        """A table's row: its cells apart (" | "), as the HTML reader shows a row."""
        self.close()
        while cells and not plain(cells[-1]).strip():
            cells.pop()
        if not cells:
            return
        start = self.size
        if self.size:
            same = bool(self.runs) and self.runs[-1].group == group
            self._put("\n" if same else "\n\n", at, at)
        run = self.run = Run("row", start, self.size, self.size, group)
        spans: list[tuple[int, int]] = []
        for k, cell in enumerate(cells):
            if k:
                self._put(" | ", at, at)
            body = self.size
            self.fill(cell)
            while self.size > body and self.parts[-1][-1:] == " ":
                self._drop_tail(1)
            spans.append((body, self.size))
        self.run = None
        if self._run_ended(run):
            run.cells = spans
            self.runs.append(run)

    def open(self, role: str, group: int, at: int, marker: str = "", level: int = 0) -> None:
        self.close()
        start = self.size
        if self.size:
            same = group >= 0 and bool(self.runs) and self.runs[-1].group == group
            self._put("\n" if same else "\n\n", at, at)
        if marker:
            self._put(marker + " ", at, at)
        self.run = Run(role, start, self.size, self.size, group, marker=marker, level=level)

    def close(self) -> None:
        run = self.run
        self.run = None
        if run is not None and self._run_ended(run):
            self.runs.append(run)


class RoffText:
    """The context the next text is written in, and the writing of it."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.w = _Writer(source)
        self.strings: dict[str, str] = {}
        self.role, self.group = "p", -1  # where the next text goes
        self.base: tuple[str, int] = ("p", -1)  # where a paragraph break (.PP) returns to
        self.frames: list[Frame] = []
        self.open_frames: dict[str, int] = {}  # how many of each kind are open
        self.depth: dict[int, int] = {}  # a group's frame depth
        self.groups = 0
        self.fill = True
        self.tag = False  # the next line of text is a term (.TP, .TQ)
        self.heading = 0  # the next line of text is a heading of this level (.SH without words)
        self.glue = False  # the last line ended with \c
        self.url: tuple[Text, int] | None = None
        self.mdoc = Mdoc()
        self.last_ie = True

    def _code_line(self, pieces: Text, a: int, b: int) -> None:
        w = self.w
        if w.run is None or w.run.role != "pre":
            if not plain(pieces).strip():
                return
            w.open("pre", self.group if self.role in ("dd", "li") else -1, a)
        elif w.size > w.run.body:
            w.put("\n", a - 1, a)
        for text, x, y in pieces:
            w.put(text, x, y)

    def _text(self, pieces: Text, at: int) -> None:
        """Filled text: blank runs are one space; a line's words join the line before with a space."""
        if not pieces or not plain(pieces).strip():
            if pieces and joins_next(pieces):
                self.glue = True
            return
        w = self.w
        if w.run is None:
            self._open(at)
        elif not self.glue and not w.last_blank():
            w.put(" ", at, at)
        self.glue = joins_next(pieces)
        w.fill(pieces)
        if self.heading or self.tag:
            self._end_line_role()

    def _open(self, at: int) -> None:
        if self.heading:
            self.w.open(f"h{self.heading}", -1, at, level=self.heading)
        elif self.tag:
            self.w.open("dt", self.group, at)
        else:
            self.w.open(self.role, self.group, at)

    def _end_line_role(self) -> None:
        """A heading's or a term's line is read: the text after it is the section's, or the description."""
        self.w.close()
        if self.tag:
            self.tag = False
            self.role = "dd"
            self.base = ("dd", self.group) if self.frames and self.frames[-1].kind == "bl" else self.base
        self.heading = 0

    def _break(self) -> None:
        """A paragraph break inside the current context (a blank line, .sp)."""
        if self.fill and not self.tag and not self.heading:
            self.w.close()

    def _args_text(self, args: list[tuple[int, int]], sep: str) -> Text:
        out: Text = []
        for k, (x, y) in enumerate(args):
            if k and sep:
                out.append((sep, x, x))
            out.extend(argument_text(self.src, x, y, self.strings))
        return out

    def _line_text(self, pieces: Text, a: int, b: int) -> None:
        """A request's text: filled, or a line of code in no-fill mode (.nf, .EX)."""
        if self.fill:
            self._text(pieces, a)
        else:
            self._code_line(pieces, a, b)

    def _list_group(self, roles: tuple[str, ...]) -> None:
        """The group of a list's next entry: the list's own when it goes on at this depth, else a new one."""
        if self.role in roles and self.group >= 0 and self.depth.get(self.group) == len(self.frames):
            return
        self.groups += 1
        self.group = self.groups
        self.depth[self.group] = len(self.frames)

    def _ip(self, args: list[tuple[int, int]], a: int) -> None:
        self.w.close()
        self.tag = False
        tag = argument_text(self.src, *args[0], self.strings) if args else []
        shown = plain(tag).strip()
        if not shown:  # a paragraph of the entry (or of the text) it follows
            self.role = "dd" if self.role == "dt" else self.role
            return
        if _BULLET.fullmatch(shown):
            self._list_group(("li",))
            self.role = "li"
            marker = shown if shown[0].isalnum() or shown[0] == "(" else "-"
            self.w.open("li", self.group, a, marker=marker)
            return
        self._list_group(("dt", "dd"))
        self.role, self.tag = "dt", True
        self._text(tag, a)

    def _indent(self) -> None:
        """.RS: an indented block; the text in it goes on in the entry it follows (a paragraph break in it
        returns there)."""
        self.w.close()
        role = "dd" if self.role == "dt" else self.role
        self._push(Frame("rs", role, self.group, self.base, self.fill))
        if role == "p" and self._term_line():  # a short line over the block: a term and its description
            role = self.role = "dd"
        self.base = (role, self.group)

    def _term_line(self) -> bool:
        """The paragraph just written is one short line without a closing stop, and an indented block
        follows it: as the rendered page lays them out, a term over its description (the plain-text
        reader reads such a page so). The line becomes a term of a new definition list."""
        w = self.w
        last = w.runs[-1] if w.runs else None
        if last is None or last.role != "p" or last.group >= 0 or last.end != w.size:
            return False
        if last.end - last.body > MAX_TERM_CHARS:
            return False
        tail, size = [], 0
        for part in reversed(w.parts):
            tail.append(part)
            size += len(part)
            if size >= last.end - last.body:
                break
        line = "".join(reversed(tail))[-(last.end - last.body) :]
        if "\n" in line or line.rstrip().endswith((".", ":", ";", ",", "!", "?")):
            return False
        self.groups += 1
        last.role, last.group = "dt", self.groups
        self.group = self.groups
        self.depth[self.group] = len(self.frames) - 1
        return True

    def _push(self, frame: Frame) -> None:
        self.frames.append(frame)
        self.open_frames[frame.kind] = self.open_frames.get(frame.kind, 0) + 1

    def _pop(self, kind: str) -> None:
        """The end of the innermost block of `kind` (and of any opened inside it); none open: nothing."""
        self.w.close()
        if not self.open_frames.get(kind):
            return
        while self.frames:
            frame = self.frames.pop()
            self.open_frames[frame.kind] -= 1
            self.role, self.group, self.base, self.fill = frame.role, frame.group, frame.base, frame.fill
            if frame.kind == kind:
                break
        self.tag = False

    # ------------------------------------------------------------------ mdoc

    def _mdoc_text(self, name: str, args: list[tuple[int, int]], a: int, b: int) -> Text:
        words = words_of(self.src, args, self.strings)
        return joined(render(name, words, (a, a + len(name) + 1), self.mdoc), (a, b))

    def _mdoc_block(self, name: str, args: list[tuple[int, int]], a: int, b: int) -> None:
        w = self.w
        flags = {self.src[x:y] for x, y in args}
        if name == "Bl":
            w.close()
            kind = "def" if flags & _DEFINITION_LISTS else "bullet" if flags & _BULLET_LISTS else "enum"
            kind = kind if kind != "enum" or "-enum" in flags else "column" if "-column" in flags else "item"
            self.groups += 1
            self._push(Frame("bl", self.role, self.group, self.base, self.fill, kind, 0, self.groups))
            self.group = self.groups
            self.depth[self.group] = len(self.frames)
        elif name == "It":
            self._item(args, a, b)
        elif name == "El":
            self._pop("bl")
        elif name == "Bd":
            w.close()
            self._push(Frame("bd", self.role, self.group, self.base, self.fill))
            self.fill = not flags & {"-literal", "-unfilled"}
        elif name == "Ed":
            self._pop("bd")
        elif name == "Dl":
            w.close()
            self._code_line(self._mdoc_text("No", args, a, b), a, b)
            w.close()
        elif name == "D1":
            w.close()
            self._text(self._mdoc_text("No", args, a, b), a)
            w.close()

    def _item(self, args: list[tuple[int, int]], a: int, b: int) -> None:
        self.w.close()
        if not self.open_frames.get("bl"):  # an item outside any list: its words are text
            self._text(self._mdoc_text("No", args, a, b), a)
            return
        while self.frames[-1].kind != "bl":  # blocks left open inside the item end with it
            self.open_frames[self.frames.pop().kind] -= 1
        frame = self.frames[-1]
        group = self.group = frame.list_group
        frame.count += 1
        self.fill, self.tag = True, False
        if frame.list_kind == "column":  # a row of a table: its cells parted by Ta (or a tab)
            self._column_row(args, a, b, group)
            return
        if frame.list_kind == "def":
            self.role, self.tag = "dt", True
            self._text(self._mdoc_text("No", args, a, b), a)
            if self.tag:  # an item without a term: its text is the description
                self.tag, self.role = False, "dd"
            self.base = ("dd", group)
            return
        marker = (
            "-" if frame.list_kind == "bullet" else f"{frame.count}." if frame.list_kind == "enum" else ""
        )
        self.role = "li"
        self.base = ("li", group)
        self.w.open("li", group, a, marker=marker)
        if args:
            self._text(self._mdoc_text("No", args, a, b), a)

    def _column_row(self, args: list[tuple[int, int]], a: int, b: int, group: int) -> None:
        cells: list[list[tuple[int, int]]] = [[]]
        prev = -1
        for x, y in args:
            if prev >= 0 and "\t" in self.src[prev:x]:
                cells.append([])
            if self.src[x:y] == "Ta":
                cells.append([])
            else:
                cells[-1].append((x, y))
            prev = y
        self.w.row([self._mdoc_text("No", cell, a, b) for cell in cells], group, a)
