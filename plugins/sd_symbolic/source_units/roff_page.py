"""A man page's roff source (man(7) macros, BSD mdoc(7) macros) read as its rendered page shows it.

Read as plain text, a man source reached the units raw: `.TP`, `.IP \\[bu]`, `.BR`, `\\fB` and `\\-` in every
sentence, a list of tagged paragraphs one unit. Read here, line by line, by a small table of the man and mdoc
macros (no full troff: no macro of the page's own is expanded, no register computed), into the *page text*
and its blocks (html_blocks.Run, the same runs the HTML reader makes, so the same blocks come of them):
- `.SH`/`.Sh` are headings, `.SS`/`.Ss` headings below them; `.TH`/`.Dt` the page's title line "name(5)";
- `.TP`'s (and `.TQ`'s) next line, `.IP`'s tag and mdoc's `.It` in a tag list are a definition's term, the
  text after it its description; a bullet or number tag an item of a list; a paragraph break inside the
  entry (a blank line, `.sp`, `.IP` without a tag, an indented `.RS` … `.RE` block, mdoc's `.Pp` inside an
  item) keeps the text in the entry, `.PP`/`.LP`/`.P` (back to the margin) ends it;
- `.nf`/`.fi`, `.EX`/`.EE`, mdoc's `.Bd -literal`/`.Ed` and `.Dl` are code, kept line by line;
- font macros (`.B`, `.BR` …) show their words (alternating ones without spaces), inline escapes show what
  they print (roff_text.py), mdoc's semantic macros what a BSD page prints (roff_mdoc.py); comments,
  unknown requests, macro definitions and conditional text for typesetters are left out.
Every character of the page text knows the source span it shows, so the units' offsets are turned back into
the source's as the HTML reader's are (assemble.py). Each line is read once: linear in the source.
"""

from __future__ import annotations

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .html_blocks import page_blocks
from .page_text import Page
from .roff_blocks import RoffText
from .roff_mdoc import CALLABLE
from .roff_table import Table
from .roff_text import Text, argument_text, escaped, plain, request

_JOINED_FONTS = frozenset({"BR", "BI", "IB", "IR", "RB", "RI"})
_SPACED_FONTS = frozenset({"B", "I", "SM", "SB"})
_BULLET = lazy_pattern(r"[•·∙◦▪\-*o+—–]|\(?(?:\d{1,3}|[a-zA-Z])[.)]|\d{1,3}")
_BLANK_RUN = lazy_pattern(r"[ \t]+")
_DEFINITION_LISTS = frozenset({"-tag", "-hang", "-ohang", "-inset", "-diag"})
_BULLET_LISTS = frozenset({"-bullet", "-dash", "-hyphen"})
_WRAPPED = frozenset({"RS", "RE", "PP", "LP", "P", "TP", "IP", "sp", "br"})
_SKIPPED_BLOCKS = frozenset({"de", "de1", "am", "am1", "ig", "dei", "ami"})
_COND_TRUE = lazy_pattern(r"(?:n|\\n\(\.g|\\n\[\.g\])(?=[ \t]|\\\{|$)")
_COND = lazy_pattern(r"(?:'[^'\n]{0,200}'[^'\n]{0,200}'|\\n\([^\n]{2}|\\n\[[^\]\n]{0,40}\]|[^ \t\n\\]+)")


def read_roff(source: str) -> Page:
    """The page text of a man page's roff source and its blocks (see the module docstring)."""
    reader = _Roff(source)
    reader.read()
    w = reader.w
    w.close()
    shown = "".join(w.parts)
    return Page(shown, page_blocks(shown, w.runs), w.starts, w.ends)


class _Roff(RoffText):
    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.table: Table | None = None  # a tbl table being read (.TS … .TE)
        self.aliases: dict[str, str] = {}  # a page's own macros that wrap one request (_defined)
        self.defining = ""
        self.wraps: set[str] = set()
        self.table_group = -1

    # ------------------------------------------------------------------ lines

    def read(self) -> None:
        src = self.src
        n = len(src)
        a = 0
        skip_until = ""  # a macro definition or an ignored block: lines up to its end are no text
        depth = 0  # \{ … \} of a conditional not taken
        while a < n:
            b = src.find("\n", a)
            b = n if b < 0 else b
            line_end = b - 1 if b > a and src[b - 1] == "\r" else b
            if skip_until:
                if src[a:line_end].strip() == skip_until:
                    skip_until = ""
                    self._defined()
                elif self.defining:
                    req = request(src, a, line_end)
                    if req is not None and req[0] in _WRAPPED:
                        self.wraps.add(req[0])
            elif depth:
                depth += src.count("\\{", a, line_end) - src.count("\\}", a, line_end)
                depth = max(depth, 0)
            elif self.table is not None:
                self._table_line(a, line_end)
            else:
                skip_until, depth = self._line(a, line_end)
            a = b + 1

    def _defined(self) -> None:
        """The end of a page's own macro: one that wraps a single indent or paragraph request (rst2man's
        INDENT is an .RS) is read as that request; any other is left out, as it was read."""
        if self.defining and len(self.wraps) == 1:
            self.aliases[self.defining] = next(iter(self.wraps))
        self.defining = ""

    def _table_line(self, a: int, b: int) -> None:
        assert self.table is not None
        if self.src.startswith(".TE", a, b):
            self.table = None
            self.w.close()
            return
        row = self.table.line(self.src, a, b, self._cell_text)
        if row is not None:
            if self.table_group < 0:
                self.groups += 1
                self.table_group = self.groups
            self.w.row(row, self.table_group, a)

    def _cell_text(self, a: int, b: int) -> Text:
        """What a table's cell (or a line of a T{ … T} block) shows: its text, a font request's words."""
        req = request(self.src, a, b)
        if req is None:
            return escaped(self.src, a, b, self.strings)
        name, args = req
        if name in _SPACED_FONTS or name in _JOINED_FONTS:
            return self._args_text(args, " " if name in _SPACED_FONTS else "")
        return []

    def _line(self, a: int, b: int) -> tuple[str, int]:
        """One input line; what to skip after it: the end line of a block (.de … ..) or \\{ depth."""
        src = self.src
        while True:
            req = request(src, a, b)
            if req is None:
                self._text_line(a, b)
                return "", 0
            name, args = req
            if name in ("if", "ie", "el"):
                taken, body = self._condition(name, args, a, b)
                if body >= b:
                    return "", 0
                opens = src.startswith("\\{", body)
                if not taken:
                    count = src.count("\\{", body, b) - src.count("\\}", body, b)
                    return "", max(count, 0)
                a = body + 2 if opens else body
                if a >= b:
                    return "", 0
                if src[a] not in ".'":
                    self._text_line(a, b)
                    return "", 0
                continue
            name = self.aliases.get(name, name)
            if name in _SKIPPED_BLOCKS:  # .de NAME [END], .ig [END]: up to ".END", else ".."
                self.defining = src[args[0][0] : args[0][1]] if name.startswith("de") and args else ""
                self.wraps = set()
                k = 0 if name == "ig" else 1
                end = src[args[k][0] : args[k][1]] if len(args) > k else "."
                return "." + end, 0
            self._request(name, args, a, b)
            return "", 0

    def _condition(self, name: str, args: list[tuple[int, int]], a: int, b: int) -> tuple[bool, int]:
        """Whether a conditional's body is read (nroff's view: `n` and groff's `\\n(.g` hold, the rest not),
        and where its body starts."""
        src = self.src
        i = src.find(name, a, b) + len(name)
        while i < b and src[i] in " \t":
            i += 1
        if name == "el":
            return not self.last_ie, i
        negated = src.startswith("!", i)
        m = _COND_TRUE.match(src, i + negated, b)
        taken = bool(m) != negated
        m = m or _COND.match(src, i + negated, b)
        j = m.end() if m else i
        while j < b and src[j] in " \t":
            j += 1
        if name == "ie":
            self.last_ie = taken
        return taken, j

    def _text_line(self, a: int, b: int) -> None:
        src = self.src
        if not self.fill:
            pieces = escaped(src, a, b, self.strings)
            self._code_line(pieces, a, b)
            return
        if a >= b or not src[a:b].strip():
            self._break()
            return
        if src[a] in " \t" and self.w.run is not None:
            self.w.put("\n", a, a)
        self._text(escaped(src, a, b, self.strings), a)

    def _request(self, name: str, args: list[tuple[int, int]], a: int, b: int) -> None:
        w = self.w
        if name in _SPACED_FONTS or name in _JOINED_FONTS:
            if args:
                self._line_text(self._args_text(args, " " if name in _SPACED_FONTS else ""), a, b)
        elif name in ("SH", "SS", "Sh", "Ss"):
            self._section(1 if name in ("SH", "Sh") else 2, name, args, a)
        elif name in ("PP", "LP", "P", "Pp", "Lp", "HP"):
            w.close()
            self.tag = False
            self.role, self.group = self.base
        elif name in ("TP", "TQ"):
            w.close()
            if name == "TP" or self.role not in ("dt", "dd"):
                self._list_group(("dt", "dd"))
            self.role, self.tag = "dt", True
        elif name == "IP":
            self._ip(args, a)
        elif name == "RS":
            self._indent()
        elif name == "RE":
            self._pop("rs")
        elif name in ("nf", "EX"):
            w.close()
            self.fill = False
        elif name in ("fi", "EE"):
            w.close()
            self.fill = True
        elif name == "br":
            if w.run is not None and self.fill and w.size > w.run.body:
                w.put("\n", a, b)
        elif name == "sp":
            self._break()
        elif name == "TS":
            w.close()
            self.table, self.table_group = Table(), -1
        elif name in ("TH", "Dt"):
            self._title(args, a)
        elif name in ("UR", "MT"):
            self.url = (self._args_text(args[:1], ""), a)
        elif name in ("UE", "ME"):
            self._link_end(args, a)
        elif name == "SY":
            w.close()
            self._text(self._args_text(args, " "), a)
        elif name == "OP":
            text = self._args_text(args, " ")
            end = args[-1][1] if args else b
            self._text([("[", a, a + 3), *text, ("]", end, end)], a)
        elif name == "YS":
            w.close()
        elif name == "ds" and args:
            key = self.src[args[0][0] : args[0][1]]
            value = self.src[args[1][0] - (self.src[args[1][0] - 1] == '"') : b] if len(args) > 1 else ""
            value = value[1:] if value.startswith('"') else value  # `.ds name "value`: one quote opens it
            self.strings[key] = plain(escaped(value, 0, len(value), self.strings))[:1000]
        elif name in ("Bl", "It", "El", "Bd", "Ed", "Dl", "D1"):
            self._mdoc_block(name, args, a, b)
        elif name in CALLABLE:
            self._line_text(self._mdoc_text(name, args, a, b), a, b)

    def _section(self, level: int, name: str, args: list[tuple[int, int]], a: int) -> None:
        self.w.close()
        self.frames.clear()
        self.open_frames.clear()
        self.role, self.group, self.base = "p", -1, ("p", -1)
        self.fill, self.tag = True, False
        self.heading = level
        if args:
            words = self._mdoc_text(name, args, a, a) if name in ("Sh", "Ss") else self._args_text(args, " ")
            self._text(words, a)
            self.heading = 0
            self.w.close()

    def _title(self, args: list[tuple[int, int]], a: int) -> None:
        """The page's title line, as a rendered page heads itself: "name(5)"."""
        self.w.close()
        if len(args) >= 2:
            title = argument_text(self.src, *args[0], self.strings)
            sec = argument_text(self.src, *args[1], self.strings)
            self.w.open("p", -1, a)
            gap, end = args[0][1], args[1][1]
            shown = [*title, ("(", gap, args[1][0]), *sec, (")", end, end)] if plain(sec).strip() else title
            self._text(shown, a)
            self.w.close()

    def _link_end(self, args: list[tuple[int, int]], a: int) -> None:
        if self.url is not None and plain(self.url[0]).strip():
            text, at = self.url
            self._text([("<", at, at), *text, (">", a, a)], at)
        self.url = None
        if args:
            self.glue = True
            self._text(self._args_text(args, ""), a)
