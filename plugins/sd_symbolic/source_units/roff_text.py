"""The text of a roff man-page source (man(7), mdoc(7)): whether a source is one (`looks_like_roff`, by its
shape alone, never by its name), a request line's name and arguments, and a line's text with its inline
escapes read as a page shows them (`escaped`).

A piece of text is (text, source start, source end): a piece as long as its source span is verbatim (each
character shows its own), any other piece shows its whole span (an escape `\\(em` shows "—"; a font change
`\\fB` shows nothing). roff_page.py turns the pieces into the page text and its map back into the source.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

Text = list[tuple[str, int, int]]

# glyphs by their roff names (\(xx, \[xx]), as a terminal page shows them
GLYPHS = {
    **{"bu": "•", "em": "—", "en": "–", "hy": "-", "mi": "-", "lq": "“", "rq": "”", "oq": "‘", "cq": "’"},
    **{"aq": "'", "dq": '"', "co": "©", "rg": "®", "tm": "™", "de": "°", "mu": "×", "di": "÷", "+-": "±"},
    **{"<=": "≤", ">=": "≥", "!=": "≠", "->": "→", "<-": "←", "ua": "↑", "da": "↓", "sc": "§", "ps": "¶"},
    **{"dg": "†", "ti": "~", "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "bv": "|", "at": "@", "sh": "#"},
    **{"Do": "$", "Eu": "€", "Po": "£", "ct": "¢", "Fo": "«", "Fc": "»", "pl": "+", "eq": "=", "**": "*"},
    **{"~~": "≈", "no": "¬", "ss": "ß", "fm": "′", "sd": "″", "ga": "`", "aa": "´", "ul": "_", "lh": "☜"},
    **{"rh": "☞", "OK": "✓", "if": "∞", "*p": "π", "la": "⟨", "ra": "⟩", "lB": "[", "rB": "]"},
    **{"lC": "{", "rC": "}", "a-": "¯", "bq": "„", "Bq": "„", "dd": "‡", "lA": "⇐", "rA": "⇒", "hA": "⇔"},
}
# predefined strings (\*x, \*(xx, \*[name]): man(7)'s and mdoc(7)'s
STRINGS = {
    **{"R": "®", "Tm": "™", "lq": "“", "rq": "”", "S": "", "HF": "", "Ba": "|", "Ne": "≠", "Ge": "≥"},
    **{"Le": "≤", "Gt": ">", "Lt": "<", "Pm": "±", "If": "∞", "Am": "&", "Na": "NaN", "Pi": "π", "q": '"'},
}
# one-character escapes: what each shows ("" nothing)
_SIMPLE = {
    **{"e": "\\", "E": "\\", "\\": "\\", "-": "-", ".": ".", " ": " ", "~": " ", "0": " ", "&": "", "%": ""},
    **{"|": "", "^": "", ",": "", "/": "", ":": "", "'": "´", "`": "`", "t": " ", "p": "", "r": "", "u": ""},
    **{"d": "", "a": "", "{": "", "}": "", "!": "", "=": "", "_": "_", "+": "+", "z": "", "@": ""},
}
_ESCAPE = lazy_pattern(
    r"\\(?:(?P<font>f(?:\[[^\]\n]{0,20}\]|\([^\n]{2}|[^\n]))"
    r"|(?P<size>s(?:[-+]?\d{1,2}|[-+]?\(\d\d|[-+]?\[[^\]\n]{0,20}\]))"
    r"|\((?P<g2>[^\n]{2})|\[(?P<gn>[^\]\n]{1,40})\]"
    r"|\*(?:\((?P<s2>[^\n]{2})|\[(?P<sn>[^\]\n]{1,40})\]|(?P<s1>[^\n]))"
    r"|(?P<reg>[nkgmMFYV][-+]?(?:\([^\n]{2}|\[[^\]\n]{0,40}\]|[^\n]))"
    r"|N'(?P<num>\d{1,7})'"
    r"|(?P<delim>[hvwlLoXZbDSxRABC]'[^'\n]{0,200}')"
    r"|(?P<comment>[\"#].*)"
    r"|\$[0-9*@]"
    r"|(?P<one>[^\n]))"
)
_GLYPH_NUMBER = lazy_pattern(r"u([0-9A-Fa-f]{4,6})(?:_[0-9A-Fa-f]{4,6})*|char(\d{1,3})")
_BLANKS = " \t"


def glyph(name: str) -> str:
    """What a named glyph (\\(xx, \\[name]) shows: the table's, a Unicode code point's, else nothing."""
    if name in GLYPHS:
        return GLYPHS[name]
    m = _GLYPH_NUMBER.fullmatch(name)
    if m and m.group(1):
        code = int(m.group(1), 16)
        return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else ""
    if m and m.group(2):
        return chr(int(m.group(2)))
    return ""


def escaped(source: str, a: int, b: int, strings: dict[str, str]) -> Text:
    """The text source[a:b] shows: verbatim runs as they are, each escape as what it shows (a comment
    `\\"` hides the rest). Linear: every escape is matched within a bounded window."""
    out: Text = []
    pos = a
    while pos < b:
        k = source.find("\\", pos, b)
        if k < 0:
            out.append((source[pos:b], pos, b))
            break
        if k > pos:
            out.append((source[pos:k], pos, k))
        m = _ESCAPE.match(source, k, b)
        if m is None:  # a backslash that ends the text: nothing
            break
        if m.group("comment") is not None:
            break
        shown = _shown(m, strings)
        if shown:
            out.append((shown, k, m.end()))
        elif shown is None:  # \c: the text goes on without a break
            out.append(("", k, m.end()))
        pos = m.end()
    return out


def _shown(m: re.Match[str], strings: dict[str, str]) -> str | None:
    if m.group("font") is not None or m.group("size") is not None or m.group("reg") is not None:
        return ""
    if m.group("g2") is not None or m.group("gn") is not None:
        return glyph(m.group("g2") or m.group("gn"))
    name = m.group("s2") or m.group("sn") or m.group("s1")
    if name is not None:
        return strings.get(name, STRINGS.get(name, ""))
    if m.group("num") is not None:
        code = int(m.group("num"))
        return chr(code) if 31 < code < 0x110000 and not 0xD800 <= code < 0xE000 else ""
    one = m.group("one")
    if one is None:
        return ""
    if one == "c":
        return None
    return _SIMPLE.get(one, one)


def joins_next(pieces: Text) -> bool:
    """A line whose text ends with \\c: the next line's text goes on without a space."""
    return bool(pieces) and pieces[-1][0] == "" and pieces[-1][2] - pieces[-1][1] == 2


def plain(pieces: Text) -> str:
    return "".join(p[0] for p in pieces)


# ----------------------------------------------------------------------------- requests

_NAME = lazy_pattern(r"[.'][ \t]*([^ \t\n\\]{1,20})")


def request(source: str, a: int, b: int) -> tuple[str, list[tuple[int, int]]] | None:
    """A control line source[a:b] (`.XX args`): its name and its arguments' spans (a quoted argument's
    span inside its quotes; `""` inside one stands for a quote). None: a line of text."""
    if a >= b or source[a] not in ".'":
        return None
    m = _NAME.match(source, a, b)
    if m is None:
        return "", []
    args: list[tuple[int, int]] = []
    i = m.end()
    while i < b:
        while i < b and source[i] in _BLANKS:
            i += 1
        if i >= b or source.startswith('\\"', i):
            break
        if source[i] == '"':
            j = i + 1
            while j < b:
                if source[j] == '"':
                    if j + 1 < b and source[j + 1] == '"':
                        j += 2
                        continue
                    break
                if source[j] == "\\":
                    j += 1
                j += 1
            j = min(j, b)
            args.append((i + 1, j))
            i = j + 1
            continue
        j = i
        while j < b and source[j] not in _BLANKS:
            j += 2 if source[j] == "\\" else 1
        j = min(j, b)
        args.append((i, j))
        i = j
    return m.group(1), args


def argument_text(source: str, a: int, b: int, strings: dict[str, str]) -> Text:
    """A request argument's text: its escapes read, a `""` inside a quoted argument a quote."""
    out: Text = []
    for text, x, y in escaped(source, a, b, strings):
        if '""' in text and y - x == len(text):
            pos = 0
            for piece in text.split('""'):
                if pos:
                    out.append(('"', x + pos - 2, x + pos))
                if piece:
                    out.append((piece, x + pos, x + pos + len(piece)))
                pos += len(piece) + 2
        else:
            out.append((text, x, y))
    return out


# ----------------------------------------------------------------------------- shape

_CONTROL = lazy_pattern(r"^[.'][ \t]*([A-Za-z%][A-Za-z0-9]?)(?=[ \t]|$)", re.M)
_TITLE = lazy_pattern(
    r'^\.[ \t]*(?:TH[ \t]+(?:"[^"\n]{1,80}"|[^ \t\n"]{1,80})[ \t]+(?:"?[0-9nlpoxX][0-9A-Za-z]{0,8}"?|"")(?:[ \t]|$)'
    r"|Dd[ \t]|Dt[ \t]+[^ \t\n]{1,80}[ \t]+[0-9nl])",
    re.M,
)
_SECTION = lazy_pattern(r"^\.[ \t]*(?:SH|Sh)(?:[ \t]|$)", re.M)
# the man(7) and mdoc(7) requests: a document of mostly these lines is a man page source
KNOWN = frozenset(
    {
        *("TH", "SH", "SS", "PP", "LP", "P", "TP", "TQ", "IP", "HP", "RS", "RE", "B", "I", "BR", "BI", "IB"),
        *("IR", "RB", "RI", "SM", "SB", "nf", "fi", "EX", "EE", "br", "sp", "UR", "UE", "MT", "ME", "SY"),
        *("OP", "YS", "PD", "in", "ti", "ad", "na", "ne", "hy", "nh", "ft", "ds", "de", "ig", "if", "ie"),
        *("el", "so", "Dd", "Dt", "Os", "Sh", "Ss", "Pp", "Lp", "Nm", "Nd", "Fl", "Ar", "Op", "Bl", "El"),
        *("It", "Bd", "Ed", "Xr", "Pa", "Ev", "Cm", "Ic", "Li", "Sy", "Em", "Dl", "D1", "Va", "Dv", "Er"),
    }
)
_HEAD = 200_000  # of the source, to tell its shape
_MIN_REQUESTS = 8
_MIN_REQUEST_SHARE = 0.4


def looks_like_roff(text: str) -> bool:
    """A man page's roff source: a text that opens with a request line (or a comment) and holds a title
    request (`.TH name section`, mdoc's `.Dd`/`.Dt`) and a section request (`.SH`, `.Sh`) at the start of
    lines, or whose lines are mostly (≥ 40 %, ≥ 8 of them) man or mdoc requests. A Markdown or plain-text
    page that names `.TH` in its prose, or shows a man source in a fenced example, has neither shape."""
    head = text[:_HEAD]
    if not head.lstrip("\ufeff \t\r\n").startswith((".", "'", '\\"')):
        return False  # a roff source opens with a request or a comment (a tutorial's fenced example does not)
    if _TITLE.search(head) and _SECTION.search(head):
        return True
    lines = [line for line in head.splitlines() if line.strip()]
    known = sum(1 for m in _CONTROL.finditer(head) if m.group(1) in KNOWN)
    return known >= _MIN_REQUESTS and known >= _MIN_REQUEST_SHARE * len(lines)
