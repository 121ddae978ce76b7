"""The shape of a LaTeX source: whether a source is one (`looks_like_latex`, by its content alone, never by
its name), where its body lies (the preamble dropped), its braces' pairs, and what each command and
environment is to a reader of the typeset page (latex_page.py reads with these tables).

The tables name LaTeX's own and its common packages' markup (the LaTeX kernel, amsmath, graphicx, hyperref,
listings, minted, fancyvrb, paralist/enumitem), never the words of a document."""

from __future__ import annotations

import re
from array import array

from mrpvm.plugins.sdk.patterns import lazy_pattern

MAX_READ = 200_000  # of the source, to tell its shape
MIN_STRUCTURES = 3  # a fragment without \documentclass: this many structures at a line's start, a heading one

# Markdown's or reStructuredText's own marks at a line's start: a fence, an ATX heading, a `===`/`----` underline
_OTHER_MARKUP = lazy_pattern(r"^(?:[ \t]{0,3}(?:```|~~~)|#{1,6}[ \t]+\S|(?:={3,}|-{4,})[ \t]*$)", re.M)
_DOCUMENT = lazy_pattern(r"^[ \t]*\\(?:documentclass\b|begin\{document\})", re.M)
_STRUCTURE = lazy_pattern(
    r"^[ \t]*\\(?:(part|chapter|(?:sub){0,2}section|(?:sub)?paragraph)\*?[ \t]*[\[{]|begin\{[A-Za-z]+\*?\})",
    re.M,
)
# \begin{document} on a line whose text before it is no comment
_BEGIN_DOC = lazy_pattern(r"^(?:\\.|[^%\\\n])*?\\begin\{document\}", re.M)
_END_DOC = "\\end{document}"
_BRACES = lazy_pattern(r"\\.|%[^\n]*|[{}]", re.S)
_BRACKET = lazy_pattern(r"[\]{\\]|\n[ \t\r\f]*\n")
BLANK_LINE = lazy_pattern(r"\n[ \t\r\f]*\n")
CONTROL = lazy_pattern(r"\\(?:([A-Za-z]+)(\*?)|(.))", re.S)  # a command: its name and star, or a symbol
_MACRO_DEF = lazy_pattern(
    r"\\(?:(?:re)?newcommand|providecommand)\*?[ \t]*(?:\{[ \t]*\\([A-Za-z]+)[ \t]*\}|\\([A-Za-z]+))[ \t]*\{"
    r"|\\def[ \t]*\\([A-Za-z]+)[ \t]*\{"
)
_MACRO_MARKUP = lazy_pattern(r"\\[A-Za-z]+\*?|[{}]|\\(?=[ ])")
MAX_MACRO = 120
_SHORT_VERB = lazy_pattern(
    r"\\(?:MakeShortVerb|DefineShortVerb)\*?[ \t]*(?:\[[^\]\n]{0,200}\][ \t]*)?\{?\\(\S)"
    r"|\\lstMakeShortInline(?:\[[^\]\n]{0,200}\])?(\S)"
)
MAX_OPTIONAL = 300  # an optional argument `[…]` (an item's term) closes within this many characters

# sectioning commands, outermost first: a document's levels are the ranks of those it uses
SECTIONING = ("part", "chapter", "section", "subsection", "subsubsection", "paragraph", "subparagraph")
_SECTIONING_USED = lazy_pattern(r"\\(" + "|".join(SECTIONING) + r")\*?[ \t]*[\[{]")

LISTS = frozenset(
    {
        *("itemize", "enumerate", "description", "compactitem", "compactenum", "compactdesc"),
        *("asparaitem", "asparaenum", "asparadesc", "inparaitem", "inparaenum", "inparadesc"),
    }
)
DESCRIPTIONS = frozenset({"description", "compactdesc", "asparadesc", "inparadesc"})
ORDERED = frozenset({"enumerate", "compactenum", "asparaenum", "inparaenum"})
# verbatim environments by name (listings, minted, fancyvrb); a name holding "verbatim", "listing" or "code"
# is taken as one too: the convention packages and classes follow for their code environments
VERBATIM = frozenset({"verbatim", "lstlisting", "minted"})
_VERBATIM_NAME = lazy_pattern(r"verbatim|listing|code", re.I)
# environments whose body a reader does not see as text: drawings, comments, a file written out
DRAWINGS = frozenset({"tikzpicture", "pgfpicture", "picture", "pspicture", "comment", "filecontents"})
MATH = frozenset(
    {
        *("equation", "align", "gather", "multline", "eqnarray", "displaymath", "math", "flalign"),
        *("alignat", "split", "aligned", "gathered", "cases", "array", "matrix", "pmatrix", "bmatrix"),
    }
)
TABLES = frozenset({"tabular", "tabularx", "tabulary", "longtable", "tabu", "supertabular", "xtabular"})

# commands whose arguments a reader does not see (the number of mandatory ones), and those whose last
# argument is seen after some unseen ones (\textcolor{red}{text}, \href{url}{text})
UNSEEN_ARGS = {
    **dict.fromkeys(("label", "ref", "pageref", "eqref", "autoref", "cref", "Cref", "nameref", "vref"), 1),
    **dict.fromkeys(
        ("cite", "citep", "citet", "citealp", "citeauthor", "citeyear", "nocite", "parencite"), 1
    ),
    **dict.fromkeys(("textcite", "autocite", "footcite", "index", "glossary", "hspace", "vspace"), 1),
    **dict.fromkeys(("input", "include", "includeonly", "bibliography", "bibliographystyle"), 1),
    **dict.fromkeys(("usepackage", "documentclass", "includegraphics", "color", "hypersetup"), 1),
    **dict.fromkeys(("pagestyle", "thispagestyle", "pagenumbering", "graphicspath", "cline"), 1),
    **dict.fromkeys(("title", "author", "date", "thanks", "addbibresource", "phantom", "hphantom"), 1),
    **dict.fromkeys(("setlength", "addtolength", "setcounter", "addtocounter", "newtheorem"), 2),
    **dict.fromkeys(("newcommand", "renewcommand", "providecommand", "DeclareMathOperator"), 2),
    **dict.fromkeys(("newenvironment", "renewenvironment", "addcontentsline"), 3),
}
SEEN_AFTER = {
    "textcolor": 1,
    "colorbox": 1,
    "href": 1,
    "fcolorbox": 2,
    "foreignlanguage": 1,
    "multicolumn": 2,
}
NOTES = frozenset({"footnote", "footnotetext", "marginpar", "caption"})
URLS = frozenset({"url", "nolinkurl", "path"})
# commands that end a paragraph (vertical mode) and show nothing
BREAKS = frozenset(
    {
        *("par", "bigskip", "medskip", "smallskip", "newpage", "clearpage", "cleardoublepage", "maketitle"),
        *("tableofcontents", "listoffigures", "listoftables", "appendix", "vskip", "vfill", "pagebreak"),
    }
)
SYMBOLS = {
    **{
        "LaTeX": "LaTeX",
        "TeX": "TeX",
        "LaTeXe": "LaTeX2e",
        "ldots": "...",
        "dots": "...",
        "textellipsis": "...",
    },
    **{"textbackslash": "\\", "textasciitilde": "~", "textbar": "|", "textless": "<", "textgreater": ">"},
    **{"S": "§", "P": "¶", "copyright": "©", "textregistered": "®", "texttrademark": "™", "ss": "ß"},
    **{"textendash": "–", "textemdash": "—", "newline": "\n", "linebreak": "\n", "textbullet": "•"},
    **{"degree": "°", "textdegree": "°", "euro": "€", "pounds": "£", "i": "ı", "o": "ø", "ae": "æ"},
}
# control symbols shown as a character (`\%` is a percent sign), and the accents that combine with a letter
ESCAPED = {"%": "%", "$": "$", "&": "&", "#": "#", "_": "_", "{": "{", "}": "}", " ": " ", ",": " ", ";": " "}
ESCAPED.update({":": " ", ">": " ", "\n": " ", "\t": " ", "-": "", "/": "", "@": "", "!": ""})
ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
}


def looks_like_latex(text: str) -> bool:
    """A LaTeX source: `\\documentclass` or `\\begin{document}` at a line's start, or MIN_STRUCTURES
    sectioning commands and environments at lines' starts, one a sectioning command; never a text that also
    has Markdown's or reStructuredText's own marks (a fence, an ATX heading, a `===` underline) — a Markdown
    page with a LaTeX snippet or a math block is Markdown."""
    head = text[:MAX_READ]
    if "\\" not in head or _OTHER_MARKUP.search(head):
        return False
    if _DOCUMENT.search(head):
        return True
    headings = 0
    for count, m in enumerate(_STRUCTURE.finditer(head), 1):
        headings += m.group(1) is not None
        if count >= MIN_STRUCTURES and headings:
            return True
    return False


def body_span(text: str) -> tuple[int, int]:
    """Where the document's body lies: after `\\begin{document}` up to `\\end{document}` (the preamble and
    what follows the end dropped); the whole text when it has no `\\begin{document}` (a chapter's file)."""
    m = _BEGIN_DOC.search(text)
    if m is None:
        return 0, len(text)
    end = text.find(_END_DOC, m.end())
    return m.end(), len(text) if end < 0 else end


def brace_pairs(text: str) -> array:
    """`pairs[i]`: where the `}` closing the `{` at i is (-1: none, or not a `{`). One pass: escaped braces
    and comments are skipped; a `}` with nothing open is ignored, a `{` never closed has no pair."""
    pairs = array("q", [-1]) * len(text)
    stack: list[int] = []
    for m in _BRACES.finditer(text):
        c = m.group()
        if c == "{":
            stack.append(m.start())
        elif c == "}" and stack:
            pairs[stack.pop()] = m.start()
    return pairs


def section_levels(text: str) -> dict[str, int]:
    """The heading level of each sectioning command the document uses: its rank among them, from 1."""
    used = {m.group(1) for m in _SECTIONING_USED.finditer(text)}
    ranked = [name for name in SECTIONING if name in used]
    return {name: min(k + 1, 6) for k, name in enumerate(ranked)}


def defined_macros(text: str, pairs: array) -> dict[str, str]:
    """The text of each macro the document defines without arguments (`\\newcommand{\\tool}{Quill}`,
    `\\def\\tool{Quill}`): a short body (MAX_MACRO characters) with no parameter, its commands and braces
    dropped. A paper names its method or system so; the typeset page shows the name."""
    macros: dict[str, str] = {}
    for m in _MACRO_DEF.finditer(text):
        close = pairs[m.end() - 1]
        body = text[m.end() : close] if 0 <= close - m.end() <= MAX_MACRO else "#"
        shown = " ".join(_MACRO_MARKUP.sub("", body).split())
        if "#" not in body and shown:
            macros.setdefault(m.group(1) or m.group(2) or m.group(3), shown)
    return macros


def short_verb(text: str) -> str:
    """The character a document declares its short verbatim delimiter (`\\MakeShortVerb{\\|}`,
    `\\DefineShortVerb{\\|}`, `\\lstMakeShortInline|`): `|text|` is then `\\verb|text|`. "" when none is."""
    m = _SHORT_VERB.search(text)
    found = (m.group(1) or m.group(2)) if m else ""
    return "" if not found or found.isalnum() or found in "\\{}%" else found


def is_verbatim(name: str) -> bool:
    base = name.rstrip("*")
    return base in VERBATIM or bool(_VERBATIM_NAME.search(base))


class Arguments:
    """Where a command's arguments end in a source: every search bounded (by `stop`, the enclosing
    construct's end, or MAX_OPTIONAL), a line's end searched once per line."""

    def __init__(self, src: str):
        self.src = src
        self.pairs = brace_pairs(src)
        self.line = (0, -1)  # a line's [start, end): the last line end searched

    def _line_end(self, k: int, stop: int) -> int:
        a, b = self.line
        if not a <= k < b:
            b = self.src.find("\n", k, stop)
            b = stop if b < 0 else b
            self.line = (k, b)
        return min(b, stop)

    def _skip_blanks(self, k: int, stop: int) -> int:
        while k < stop and self.src[k] in " \t":
            k += 1
        if k < stop and self.src[k] == "\n" and not BLANK_LINE.match(self.src, k, stop):
            k += 1
            while k < stop and self.src[k] in " \t":
                k += 1
        return k

    def _bracket_end(self, k: int, stop: int, most: int = MAX_OPTIONAL) -> int:
        """Where the optional argument opened at k (`[`) closes (-1: not within `most` characters)."""
        limit = min(stop, k + most)
        p = k + 1
        while p < limit:
            m = _BRACKET.search(self.src, p, limit)
            if m is None or m.group()[0] == "\n":
                return -1
            c = m.group()
            if c == "]":
                return m.start()
            if c == "{":
                q = self.pairs[m.start()]
                p = q + 1 if 0 <= q < limit else m.start() + 1
            else:
                p = m.start() + 2
        return -1

    def _skip_optional(self, k: int, stop: int) -> int:
        while k < stop and self.src[k] == "[":
            e = self._bracket_end(k, stop)
            if e < 0:
                return k
            k = e + 1
        return k

    def _skip_args(self, k: int, n: int, stop: int) -> int:
        """Past n mandatory arguments (a braced group, a command or a character) and the optional ones."""
        src = self.src
        for _ in range(n):
            k = self._skip_optional(self._skip_blanks(self._skip_star(k, stop), stop), stop)
            k = self._skip_blanks(k, stop)
            if k >= stop:
                return stop
            if src[k] == "{":
                p = self.pairs[k]
                k = p + 1 if 0 <= p < stop else k + 1
            elif src[k] == "\\":
                m = CONTROL.match(src, k, stop)
                k = m.end() if m else k + 1
            else:
                k += 1
        return self._skip_optional(k, stop)

    def _skip_star(self, k: int, stop: int) -> int:
        return k + 1 if k < stop and self.src[k] == "*" else k
