"""Source files of the C family (a library's public header, a `.c`/`.java`/`.js` file): the declarations
and the comments documenting them.

A header documents a declaration in the comment right *above* it ("/* Frees memory used by the parser. */"
over "void parser_free(Parser p);"): the comment says what the declaration does and the declaration says
its name, so neither answers a question alone. Read as plain text, a comment's first line became a section
title and the declaration after `*/` a unit of its own under it. Read here:
- a comment block (`/* … */` over whole lines, or consecutive `//` lines) that a code line follows with no
  blank line between is a definition: its term is the name the code declares (a function, a function
  pointer type, a macro, a struct/enum/typedef, a variable), its description the comment's sentences (their
  `/*`, `*`, `*/`, `//` marks left out, parted at an empty comment line) and then the declaration as code;
  consecutive statements under one comment are one definition, titled by all their names;
- a comment that no code follows (the licence header, a note over a group of declarations) is a paragraph;
- code that no comment documents is a code block.
A file is read so by its shape alone: comment blocks, and code lines that end as C statements do (`;`, `{`,
`}`, `,`, `(`, `)`, a line continuation) or are preprocessor lines. No name, keyword or word of any
document is read, only the C family's punctuation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .segments import Block, Segment, line_spans, sentences_in

MIN_CODE_LINES = 8
MIN_DOCUMENTED = 2  # comment blocks right above code
MIN_C_SHARE = 0.8  # of the code lines: C-shaped
MAX_LINES_READ = 40_000
MAX_TITLE_CHARS = 120

_C_END = (";", "{", "}", ",", "(", ")", "\\", "};", "*/")
_DIRECTIVE = lazy_pattern(r"^#[ \t]*[a-z]+\b")
_DEFINE = lazy_pattern(r"^#[ \t]*define[ \t]+(\w+)")
_FN_POINTER = lazy_pattern(r"\(\s*(?:\w+\s+)*\*+\s*(\w+)\s*\)\s*\(")
_CALLED = lazy_pattern(r"([A-Za-z_]\w*)\s*\(")
_IDENT = lazy_pattern(r"[A-Za-z_]\w*")
_ALL_CAPS = lazy_pattern(r"[A-Z0-9_]+")
_OPEN_MARK = lazy_pattern(r"^[ \t]*(?:/\*+!?|//+!?)")
_LINE_MARK = lazy_pattern(r"^[ \t]*(?:\*+(?!/)|//+!?)?")


@dataclass(slots=True)
class _Run:
    kind: str  # comment | code
    first: int  # line index
    last: int
    braces: int = 0  # its `{` less its `}`: above 0, a code run stops inside an enum's, a struct's or a body


def _runs(text: str, lines: list[tuple[int, int]]) -> list[_Run]:
    """Comment blocks and runs of code lines, in order; blank lines part them."""
    runs: list[_Run] = []
    i, n = 0, len(lines)
    while i < n:
        line = text[slice(*lines[i])].strip()
        if not line:
            i += 1
            continue
        if line.startswith("/*"):
            j = i
            close = line.find("*/", 2)
            while close < 0 and j + 1 < n:
                j += 1
                close = text[slice(*lines[j])].find("*/")
            tail = text[slice(*lines[j])]
            after = tail[tail.find("*/") + 2 :].strip() if "*/" in tail else ""
            # `/* … */ int x;`, or a comment between an enum's or a struct's members: code
            _add(runs, "code" if after or _inside(runs, i) else "comment", _balance(text, lines, i, j), i, j)
            i = j + 1
            continue
        if line.startswith("//"):
            _add(runs, "code" if _inside(runs, i) else "comment", _balance(text, lines, i, i), i, i)
            i += 1
            continue
        j = i
        if _opens_comment(line):  # a comment opened at a code line's end
            while j + 1 < n and "*/" not in text[slice(*lines[j + 1])]:
                j += 1
            j = min(j + 1, n - 1)
        _add(runs, "code", _balance(text, lines, i, j), i, j)
        i = j + 1
    return runs


def _opens_comment(line: str) -> bool:
    """A code line ends inside a `/*` comment it opens; a `/*` or `*/` inside a string or character
    literal (`"/*"`, `'*'`) is no comment mark, and a `//` comment ends the line's code."""
    quote = ""
    opened = False
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif opened:
            if line.startswith("*/", i):
                opened = False
                i += 1
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return False
        elif line.startswith("/*", i):
            opened = True
            i += 1
        i += 1
    return opened


def _inside(runs: list[_Run], i: int) -> bool:
    """Line `i` follows a code run that leaves a brace open (it stops inside an enum's, a struct's or a
    function's body)."""
    return bool(runs) and runs[-1].kind == "code" and runs[-1].last == i - 1 and runs[-1].braces > 0


def _balance(text: str, lines: list[tuple[int, int]], first: int, last: int) -> int:
    """The `{` less the `}` of lines `first` to `last`."""
    code = text[lines[first][0] : lines[last][1]]
    return code.count("{") - code.count("}")


def _add(runs: list[_Run], kind: str, braces: int, first: int, last: int) -> None:
    """Lines `first` to `last` as a run of `kind`, joined to the run right before them when of that kind (a
    run's brace balance is kept as it grows: counting it again for each line made a long body quadratic)."""
    if runs and runs[-1].kind == kind and runs[-1].last == first - 1:
        runs[-1].last = last
        runs[-1].braces += braces
    else:
        runs.append(_Run(kind, first, last, braces))


def looks_like_c_source(text: str) -> bool:
    """Comment blocks documenting code, and code lines shaped as C statements: one pass over the lines,
    which stops as soon as too many code lines end as prose does (a prose or Markdown source's first
    paragraphs)."""
    code = other = documented = 0
    in_comment = False
    previous_comment_end = False
    for raw in _first_lines(text, MAX_LINES_READ):
        line = raw.strip()
        if in_comment:
            if "*/" in line:
                in_comment = False
                previous_comment_end = not line[line.find("*/") + 2 :].strip()
            continue
        if not line:
            previous_comment_end = False
            continue
        if line.startswith("/*"):
            in_comment = "*/" not in line[2:]
            previous_comment_end = not in_comment and not line[line.find("*/", 2) + 2 :].strip()
            continue
        if line.startswith("//"):
            previous_comment_end = True
            continue
        code += 1
        documented += previous_comment_end
        previous_comment_end = False
        if _DIRECTIVE.match(line) or line.endswith(_C_END):
            in_comment = _opens_comment(line)
        else:
            other += 1
            if other > 20 and other > code / 2:  # prose: most lines end as sentences do
                return False
    return code >= MIN_CODE_LINES and documented >= MIN_DOCUMENTED and other <= (1 - MIN_C_SHARE) * code


def _first_lines(text: str, limit: int) -> Iterator[str]:
    """The text's first `limit` lines, one at a time (a prose source is left after its first lines)."""
    a = 0
    for _ in range(limit):
        b = text.find("\n", a)
        if b < 0:
            yield text[a:]
            return
        yield text[a:b]
        a = b + 1


def c_source_blocks(text: str) -> list[Block]:
    """The blocks of a C-family source file (see the module docstring)."""
    lines = line_spans(text, 0, len(text))
    runs = _runs(text, lines)
    blocks: list[Block] = []
    k = 0
    while k < len(runs):
        run = runs[k]
        start, end = lines[run.first][0], lines[run.last][1]
        if run.kind == "code":
            blocks.append(Block("code", start, end, segments=[Segment(start, end, "code", len(blocks))]))
            k += 1
            continue
        segs = _comment_sentences(text, lines, run, len(blocks))
        nxt = runs[k + 1] if k + 1 < len(runs) else None
        if nxt is not None and nxt.kind == "code" and nxt.first == run.last + 1:
            a, b = lines[nxt.first][0], lines[nxt.last][1]
            segs.append(Segment(a, b, "code", len(blocks)))
            title = ", ".join(_names(text[a:b]))[:MAX_TITLE_CHARS]
            blocks.append(Block("definition", start, b, title=title, segments=segs))
            k += 2
            continue
        if segs:
            blocks.append(Block("paragraph", segs[0].start, segs[-1].end, segments=segs))
        k += 1
    return blocks


def _comment_sentences(text: str, lines: list[tuple[int, int]], run: _Run, block: int) -> list[Segment]:
    """A comment's sentences, paragraph by paragraph (a line empty of all but its marks parts them); the
    opening and closing marks lie outside every sentence, the marks of the lines between are read as
    comment marks (Segment.comment)."""
    segs: list[Segment] = []
    para: list[tuple[int, int]] = []
    spans = []
    for i in range(run.first, run.last + 1):
        a, b = lines[i]
        line = text[a:b]
        if i == run.first:
            m = _OPEN_MARK.match(line)
            a += m.end() if m else 0
        close = text.find("*/", a, b)
        if close >= 0:
            b = close
        m = _LINE_MARK.match(text[a:b])
        body_start = a + (m.end() if m else 0)
        spans.append((a, b, bool(text[body_start:b].strip())))
    for a, b, full in [*spans, (0, 0, False)]:
        if full:
            para.append((a, b))
            continue
        if para:
            for seg in sentences_in(text, para[0][0], para[-1][1], block):
                seg.comment = True
                segs.append(seg)
            para = []
    return segs


def _names(code: str) -> list[str]:
    """The names the statements of `code` declare, in order, each once."""
    names: list[str] = []
    for stmt in _statements(code):
        name = _declared(stmt)
        if name and name not in names:
            names.append(name)
    return names


def _statements(code: str) -> list[str]:
    """`code` cut at its top-level statement ends: a `;` or a closing `}` at depth 0, a preprocessor line."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for line in code.split("\n"):
        stripped = line.strip()
        if not cur and stripped.startswith("#"):
            out.append(stripped)
            continue
        cur.append(line)
        for ch in stripped:
            if ch in "({[":
                depth += 1
            elif ch in ")}]":
                depth = max(0, depth - 1)
        if depth == 0 and stripped.endswith((";", "}")):
            out.append("\n".join(cur))
            cur = []
    if cur:
        out.append("\n".join(cur))
    return out


def _top_level(stmt: str) -> str:
    """The statement with what braces enclose left out (a struct's members, a function's body)."""
    out: list[str] = []
    depth = 0
    for ch in stmt:
        if ch == "{":
            depth += 1
            out.append(" { ")
        elif ch == "}":
            depth = max(0, depth - 1)
            out.append(" } ")
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _declared(stmt: str) -> str:
    """The name a statement declares: a macro's, a function pointer type's, a function's (the last name
    called at the top level that is not an ALL-CAPS or `_`-led wrapper such as an export or attribute
    macro), else the last name before its `{`/`;` (a typedef's, a variable's, a struct's tag)."""
    m = _DEFINE.match(stmt)
    if m:
        return m.group(1)
    if stmt.startswith("#"):
        return ""
    top = _top_level(stmt.split("//", 1)[0])
    m = _FN_POINTER.search(top)
    if m:
        return m.group(1)
    called = _CALLED.findall(top.split("=", 1)[0])
    plain = [c for c in called if not c.startswith("_") and not _ALL_CAPS.fullmatch(c)]
    if plain or called:
        return (plain or called)[-1]
    head, _, tail = top.partition("{")
    after = _IDENT.findall(tail.split("}")[-1]) if tail else []
    if after:
        return after[-1]
    names = _IDENT.findall(head.split("=", 1)[0].split("[", 1)[0])
    return names[-1] if names else ""
