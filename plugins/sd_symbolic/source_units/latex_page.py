"""A LaTeX source (a paper, a thesis, a tutorial kept as .tex) read as the text its typeset page shows.

Read as Markdown or plain text, a LaTeX source reached the units raw: a paragraph after `\\subsubsection{…}`
read as a code block, `\\footnote{…}`, `\\emph{…}` and `\\label{…}` in every sentence. Read here with a small
scanner into the *page text* — what a reader of the typeset document sees, in reading order — and its runs
(html_blocks.Run, the HTML reader's), each character keeping the source span it shows:
- the preamble is dropped (the body is what `\\begin{document}` opens; a file without it is all body);
- `\\part` … `\\subparagraph` (starred too) are headings, ranked among those the document uses;
- an `itemize`/`enumerate` item is a list item ("-" or "N." as shown); a `description` item's `[term]` is a
  definition's term, the text after it its description;
- `verbatim`/`lstlisting`/`minted`/`Verbatim` (and environments named as code ones) are code blocks, their
  lines as written; `\\verb|…|` is its text as written; drawings (`tikzpicture` …) and `comment` show nothing;
- a `\\footnote{…}` (and a `\\caption`, a `\\marginpar`) is a paragraph of its own where it is cited, in the
  list or definition it stands in: on the page a note stands apart from the running text (at the foot), and
  read into its sentence it would make one sentence of two unrelated statements; kept where it is cited, it
  stays beside the text it annotates (a note cited mid-sentence parts that sentence's two halves);
- formatting commands show their argument (`\\emph{x}` → x, `\\href{u}{x}` → x, `\\url{u}` → u); references,
  citations, labels, lengths and definitions show nothing; unknown commands show nothing, their braced
  arguments are text; unknown environments' bodies are prose; `%` comments are dropped (`\\%` is a percent
  sign); math is kept as its source text (`$x^2$` as written, an equation environment's body); `~` is a
  space, `\\\\` a line break (in a tabular a row's end, `&` a cell's);
- `\\input`/`\\include` are never followed: no other file is read.
Every step moves forward through the source; a search for a construct's end is bounded (by the enclosing
construct's end, a line's end or a constant), so a source of any shape (unbalanced braces, `\\begin` with
no `\\end`, a `\\verb` never closed) reads in linear time and never fails.
"""

from __future__ import annotations

import re
import unicodedata

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .html_blocks import page_blocks
from .latex_shape import (
    ACCENTS,
    BLANK_LINE,
    BREAKS,
    CONTROL,
    DESCRIPTIONS,
    DRAWINGS,
    ESCAPED,
    LISTS,
    MATH,
    MAX_OPTIONAL,
    NOTES,
    ORDERED,
    SEEN_AFTER,
    SYMBOLS,
    TABLES,
    UNSEEN_ARGS,
    URLS,
    Arguments,
    body_span,
    defined_macros,
    is_verbatim,
    section_levels,
    short_verb,
)
from .latex_text import BLANKS, Env, PageText
from .page_text import Page

_SPECIALS = r"[\\{}%$~&\n]|``|''"
_SPECIAL = lazy_pattern(_SPECIALS)
_NEWLINES = lazy_pattern(r"\n(?:[ \t\r\f]*\n)*[ \t\r\f]*")
_ENV_NAME = lazy_pattern(r"[ \t]*\{([A-Za-z]+\*?)\}")
_DIMEN = lazy_pattern(r"[ \t]*=?[ \t]*-?(?:\d+\.?\d*|\.\d+)[ \t]*(?:pt|em|ex|cm|mm|in|bp|pc|sp|dd|cc)")


def read_latex(text: str) -> Page:
    """The page text of a LaTeX source and its blocks (see the module docstring)."""
    scan = _Scanner(text)
    scan.read()
    shown = "".join(scan.parts)
    return Page(shown, page_blocks(shown, scan.runs), scan.starts, scan.ends)


class _Scanner(PageText, Arguments):
    def __init__(self, src: str):
        PageText.__init__(self, src)
        Arguments.__init__(self, src)
        self.levels = section_levels(src)
        self.macros = defined_macros(src, self.pairs)
        self.short_verb = short_verb(src)
        self.special = (
            re.compile(_SPECIALS + "|" + re.escape(self.short_verb)) if self.short_verb else _SPECIAL
        )
        self.quiet = 0  # inside a heading's title or a note: headings, notes and items there are text
        self.open_envs: dict[str, int] = {}
        self.closers: list[tuple[int, str, int]] = []  # where a title, note or term ends, what ends, skip
        self.groups = 0
        self.verb_missing: dict[str, int] = {}  # a \verb delimiter not found before this line end
        self.math_missing: dict[str, int] = {}  # a math closer not found before this point (_math_end)

    # ------------------------------------------------------------------ the scan

    def read(self) -> None:
        i, end = body_span(self.src)
        while True:
            stop = min(self.closers[-1][0], end) if self.closers else end
            if i >= stop:
                if not self.closers:
                    break
                pos, what, skip = self.closers.pop()
                self._ended(what)
                i = max(i, pos + skip) if pos < end else end
                continue
            m = self.special.search(self.src, i, stop)
            j = m.start() if m else stop
            if j > i:
                self.text(i, j)
            i = stop if m is None else self._special(m.group(), j, stop)
        self.close_run()

    def _ended(self, what: str) -> None:
        """A title's, a note's or a term's end: its run ends; a term's description follows."""
        if what == "label":
            return
        self.close_run()
        self.pending = None
        if what != "term":
            self.quiet -= 1

    def _special(self, c: str, j: int, stop: int) -> int:
        src = self.src
        if c == self.short_verb:
            return self._verb(j, stop)
        if c == "\n":
            m = _NEWLINES.match(src, j, stop)
            k = m.end() if m else j + 1
            if src.count("\n", j, k) >= 2:
                self.close_run()
            else:
                self.blank(j, k)
            return k
        if c == "%":  # a comment: its line's end and the next line's leading blanks go with it
            e = self._line_end(j, stop)
            m = _NEWLINES.match(src, e, stop)
            return e if m is None or src.count("\n", e, m.end()) >= 2 else m.end()
        if c == "\\":
            return self._command(j, stop)
        if c == "$":
            return self._dollar(j, stop)
        if c == "~":
            self.blank(j, j + 1)
        elif c in ("``", "''"):
            self.shown('"', j, j + 2)
        elif c == "&":
            env = self.context()
            if env is not None and env.kind == "table":
                self.cell_end(j)
            else:
                self.shown("&", j, j + 1)
        return j + len(c)  # a group's brace shows nothing

    def _math(self, a: int, b: int, skip: int) -> int:
        self.text(a, b)
        return b + skip

    def _dollar(self, j: int, stop: int) -> int:
        d = "$$" if self.src.startswith("$$", j) else "$"
        k = self.src.find(d, j + len(d), stop)
        if k < 0 or BLANK_LINE.search(self.src, j, k):  # no math closes in this paragraph: a dollar sign
            self.shown("$", j, j + 1)
            return j + 1
        return self._math(j, k + len(d), 0)

    # ------------------------------------------------------------------ commands

    def _command(self, j: int, stop: int) -> int:
        m = CONTROL.match(self.src, j, stop)
        if m is None:
            return j + 1
        name, sym, k = m.group(1), m.group(3), m.end()
        if sym is not None:
            return self._symbol(sym, j, k, stop)
        if name in ("begin", "end"):
            e = _ENV_NAME.match(self.src, k, stop)
            if e is None:
                return k
            return (
                self._begin(e.group(1), e.end(), stop) if name == "begin" else self._end(e.group(1), e.end())
            )
        if name in ("item", "bibitem"):
            return self._item(name, k, stop)
        if name in self.levels or name in NOTES:
            return self._titled(name, k, stop)
        if name == "verb":
            return self._verb(k, stop)
        if name in URLS:
            a = self._skip_blanks(k, stop)
            p = self.pairs[a] if a < stop and self.src[a] == "{" else -1
            if 0 <= p < stop:
                self.shown(self.src[a + 1 : p], a + 1, p)
                return p + 1
            return k
        if name in UNSEEN_ARGS:
            return self._skip_args(k, UNSEEN_ARGS[name], stop)
        if name in SEEN_AFTER:
            return self._skip_args(k, SEEN_AFTER[name], stop)
        if name in ("def", "gdef", "edef", "xdef", "let"):
            return self._definition(name, k, stop)
        if name in BREAKS:
            self.close_run()
            d = _DIMEN.match(self.src, k, stop) if name == "vskip" else None
            return d.end() if d else k
        shown = SYMBOLS.get(name) or self.macros.get(name)
        if shown:
            self.shown(shown, j, k, whole=True)  # \tool → "Quill": no letter of it is the command's
        return k  # an unknown command shows nothing; its braced arguments are text

    def _symbol(self, sym: str, j: int, k: int, stop: int) -> int:
        src = self.src
        if sym == "\\":  # a line break; in a table a row's end
            env = self.context()
            if env is not None and env.kind == "table":
                self.close_run()
            else:
                self.shown("\n", j, k)
            k = k + 1 if src.startswith("*", k) else k
            return self._skip_optional(k, stop)
        if sym in ("[", "("):
            e = self._math_end("\\]" if sym == "[" else "\\)", k, stop)
            return k if e < 0 else self._math(j, e + 2, 0)
        if sym in ACCENTS:
            a = k + 1 if src.startswith("{", k) else k
            if a < stop and src[a].isalpha():
                b = a + 2 if a > k and src.startswith("}", a + 1) else a + 1
                self.shown(unicodedata.normalize("NFC", src[a] + ACCENTS[sym]), j, b, whole=True)
                return b
            return k
        shown = ESCAPED.get(sym, "")
        if shown == " ":
            self.blank(j, k)
        elif shown:
            self.shown(shown, j, k)
        return k

    def _math_end(self, close: str, k: int, stop: int) -> int:
        """Where `close` (`\\)`, `\\]`) next stands in [k, stop), -1: nowhere. The scan only moves forward, so
        a span already searched in vain is not searched again: a source of unclosed `\\(` reads in linear time."""
        searched = self.math_missing.get(close, -1)  # no `close` lies wholly before this (from an earlier k)
        if stop <= searched:
            return -1
        e = self.src.find(close, max(k, searched - len(close) + 1), stop)
        if e < 0:
            self.math_missing[close] = stop
        return e

    def _definition(self, name: str, k: int, stop: int) -> int:
        """`\\def\\name#1{body}` or `\\let\\a\\b`: a definition shows nothing."""
        if name == "let":
            k = self._skip_args(k, 1, stop)
            k = self._skip_blanks(k, stop)
            k = k + 1 if k < stop and self.src[k] == "=" else k
            return self._skip_args(k, 1, stop)
        k = self._skip_args(k, 1, stop)
        b = self.src.find("{", k, min(stop, k + 40))
        return k if b < 0 else self._skip_args(b, 1, stop)

    def _titled(self, name: str, k: int, stop: int) -> int:
        """A heading's title or a note: a run of its own, to its argument's closing brace (a title whose
        brace never closes: to its line's end)."""
        if self.quiet:
            return k  # a note inside a title or a note: its text is the title's or the note's
        a = self._skip_optional(self._skip_blanks(self._skip_star(k, stop), stop), stop)
        if a >= stop or self.src[a] != "{":
            return k
        p = self.pairs[a]
        self.close_run()
        if name in NOTES:
            env = self.context()
            self.pending = ("note", env.group if env is not None and env.kind == "list" else -1, 0)
        else:
            self.pending = ("h", -1, self.levels[name])
        self.quiet += 1
        self.closers.append((p, name, 1) if 0 <= p < stop else (self._line_end(a, stop), name, 0))
        return a + 1

    def _item(self, name: str, k: int, stop: int) -> int:
        env = self.context()
        if self.quiet or name == "bibitem" or env is None or env.kind != "list":
            self.close_run()
            return self._skip_args(k, 1, stop) if name == "bibitem" else k
        self.close_run()
        a = self._skip_blanks(k, stop)
        e = self._bracket_end(a, stop) if a < stop and self.src[a] == "[" else -1
        if env.describes:
            env.role, env.marker = "dd", ""
            if e < 0:
                return k
            self.pending = ("dt", env.group, 0)
            self.closers.append((e, "term", 1))
            return a + 1
        env.count += 1
        env.role, env.marker = "li", f"{env.count}." if env.ordered else "-"
        if e < 0:
            return k
        self.closers.append((e, "label", 1))  # an item's own label: the first words of its text
        return a + 1

    def _verb(self, k: int, stop: int) -> int:
        """`\\verb|text|`: its text as written; its delimiter closes on its line, or it shows nothing."""
        k = self._skip_star(k, stop)
        if k >= stop or self.src[k].isalpha() or self.src[k] in BLANKS:
            return k
        d, le = self.src[k], self._line_end(k, stop)
        if self.verb_missing.get(d, -1) >= le:
            return k + 1
        e = self.src.find(d, k + 1, le)
        if e < 0:
            self.verb_missing[d] = le
            return k + 1
        if e > k + 1:
            self.shown(self.src[k + 1 : e], k + 1, e)
        return e + 1

    # ------------------------------------------------------------------ environments

    def _begin(self, name: str, k: int, stop: int) -> int:
        src, base = self.src, name.rstrip("*")
        if base in DRAWINGS:
            e = src.find("\\end{" + name + "}", k, stop)
            return stop if e < 0 else e + len(name) + 6
        if is_verbatim(name) or base in MATH:
            e = src.find("\\end{" + name + "}", k, stop)
            e, after = (stop, stop) if e < 0 else (e, e + len(name) + 6)
            if base in MATH:
                return self._math(k, e, after - e)
            self._code(self._options(k, e, e - k), e)  # a code block's options may run over lines
            return after
        self.close_run()
        env = Env(name, "other", ctx=self.context())
        if base in LISTS:
            nested = env.ctx is not None and env.ctx.kind == "list"
            self.groups += 1
            group = env.ctx.group if nested and env.ctx is not None else self.groups
            env = Env(name, "list", group, base in ORDERED, base in DESCRIPTIONS, ctx=env.ctx)
        elif base in TABLES:
            self.groups += 1
            env = Env(name, "table", self.groups, role="row", ctx=env.ctx)
        self.envs.append(env)
        self.open_envs[name] = self.open_envs.get(name, 0) + 1
        return self._options(k, self._line_end(k, stop))

    def _options(self, k: int, le: int, most: int = MAX_OPTIONAL) -> int:
        """Past an environment's arguments written right after its `\\begin{…}`, before `le`."""
        while k < le and self.src[k] in "[{":
            e = self._bracket_end(k, le, most) if self.src[k] == "[" else self.pairs[k]
            if not 0 <= e < le:
                return k
            k = e + 1
        return k

    def _code(self, a: int, b: int) -> None:
        """A code block: the source's [a, b) as written (the rest of its opening line, when blank, left out)."""
        nl = self.src.find("\n", a, b)
        if nl >= 0 and not self.src[a:nl].strip():
            a = nl + 1
        self.close_run()
        env = self.context()
        self.pending = ("pre", env.group if env is not None and env.kind == "list" else -1, 0)
        if self.src[a:b].strip():
            self.shown(self.src[a:b].rstrip(), a, a + len(self.src[a:b].rstrip()))
        self.close_run()
        self.pending = None

    def _end(self, name: str, k: int) -> int:
        self.close_run()
        if not self.open_envs.get(name):
            return k  # an end for nothing open: ignored
        while self.envs:
            env = self.envs.pop()
            self.open_envs[env.name] -= 1
            if env.name == name:
                break
        return k
