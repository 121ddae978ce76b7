"""The layout of a plain-text document: its lines, and the runs of lines that belong together (nodes).

A node is a paragraph, a list item, a term with its description on one line, a one-line label, a heading
line or an aligned table; outline_labels.py then says what each label is, outline.py makes blocks.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from mrpvm.plugins.sdk.patterns import lazy_pattern

TAB = 8
MARKER = lazy_pattern(r"(?:[-*+•·]|\d{1,3}[.)]|\(\d{1,3}\)|\((?:[a-z]|[ivx]{2,5})\)|[a-z][.)])[ \t]+(?=\S)")
_GAP = lazy_pattern(r"\S(?:[ \t]{2,})(?=\S)")
_INLINE_TERM = lazy_pattern(r"(?P<term>\S(?:[^ \t]| (?! ))*?)[ \t]{2,}(?P<desc>\S.*)$")
NUMBERED_TITLE = lazy_pattern(r"^(?P<num>\d{1,2}(?:\.\d{1,2})*)\.?\s+(?P<title>\S.*)$")
TERMINAL = lazy_pattern(r"[.!?:;,]['\"”’)\]]*$")
PILCROW = "¶"
_UNDERLINE = lazy_pattern(r"^(?:={3,}|-{3,}|~{3,}|\*{3,})\s*$")  # "Title" over "=====": a heading
MAX_TITLE_WORDS = 12
MAX_TERM_CHARS = 60
MAX_DEFINITION_CHARS = 1500  # a label over more text than this (or over labels/items) is a heading


@dataclass(slots=True)
class Line:
    start: int  # first character of the line
    end: int  # end of the line, newline excluded
    indent: int  # columns before the first character (tabs to TAB)
    body: int  # offset of the first non-blank character


@dataclass(slots=True)
class Node:
    """A run of lines that belong together: a paragraph, an item, an inline definition, a label."""

    lines: list[Line]
    indent: int
    cont: int  # the indent its continuation lines have
    kind: str = "text"  # text | item | inline | label | heading | code | table | markup
    marker: str = ""
    body_start: int = -1  # where an item's text (after its marker) or an inline term's description starts
    term_end: int = -1  # where an inline term ends
    level: int = 0
    blank_before: bool = False

    @property
    def start(self) -> int:
        return self.lines[0].body

    @property
    def end(self) -> int:
        return self.lines[-1].end


def _indent(line: str) -> int:
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += TAB - col % TAB
        else:
            break
    return col


def layout_lines(text: str) -> list[Line | None]:
    """Every line of the text; None for a blank one."""
    return list(iter_lines(text))


def iter_lines(text: str) -> Iterator[Line | None]:
    """layout_lines one at a time (a reader that may stop at an early line reads no further)."""
    pos = 0
    for raw in text.split("\n"):
        end = pos + len(raw)
        stripped_end = end - 1 if raw.endswith("\r") else end
        if raw.strip():
            lead = len(raw) - len(raw.lstrip())
            yield Line(pos, stripped_end, _indent(raw), pos + lead)
        else:
            yield None
        pos = end + 1


def content(text: str, line: Line) -> str:
    return text[line.body : line.end].rstrip()


def _all_caps(body: str) -> bool:
    if not body.isupper():  # a lower-case letter, or no cased one: the common case, decided in C
        return False
    letters = [c for c in body if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _is_caps_heading(line: str, indent: int) -> bool:
    body = line.strip()
    return indent <= 1 and _all_caps(body) and len(body.split()) <= 8 and not TERMINAL.search(body)


def caps_prose_lines(text: str, lines: list[Line | None]) -> set[int]:
    """Indexes of ALL-CAPS lines that are running text, not headings (a licence's disclaimer written in
    capitals): a line that opens a bracket it does not close ("DAMAGES (INCLUDING, BUT NOT LIMITED TO,"),
    and the lines of a run of two or more consecutive ALL-CAPS lines at one indent of which one ends a clause
    or a sentence, since a heading ends in no punctuation and wraps onto no line. The run's first line stays
    a heading when it is short beside the run's other lines: a title over a capitalised paragraph
    ("WARRANTY" / "THERE IS NO WARRANTY FOR …"), where wrapped text fills its first line."""
    out: set[int] = set()
    bodies = {n: content(text, ln) for n, ln in enumerate(lines) if ln is not None}
    caps = {n for n, body in bodies.items() if _all_caps(body)}
    for n in caps:
        body = bodies[n]
        if body.count("(") + body.count("[") > body.count(")") + body.count("]"):
            out.add(n)
    for run in runs_at_one_indent(lines, caps):
        if len(run) >= 2 and any(TERMINAL.search(bodies[n]) for n in run):
            widest = max(len(bodies[n]) for n in run[1:])
            out.update(run if 2 * len(bodies[run[0]]) > widest else run[1:])
    return out


def runs_at_one_indent(lines: list[Line | None], chosen: set[int]) -> list[list[int]]:
    """Runs of consecutive chosen lines (by index) that share one indent."""
    runs: list[list[int]] = []
    for n in sorted(chosen):
        line, prev = lines[n], lines[n - 1] if n else None
        if (
            runs
            and runs[-1][-1] == n - 1
            and line is not None
            and prev is not None
            and prev.indent == line.indent
        ):
            runs[-1].append(n)
        else:
            runs.append([n])
    return runs


def term_like(term: str) -> bool:
    """A definition term: an option, a short identifier or code, a number, a few comma-separated words."""
    term = term.strip()
    if not term or len(term) > MAX_TERM_CHARS or TERMINAL.search(term.rstrip(":")):
        return False
    if re.match(r"(?:--?|\+)[A-Za-z0-9]", term):  # an option: "-f", "--fixup=[(amend|reword):]<commit>"
        return True
    words = term.replace(",", " ").split()
    if len(words) <= 3 and all(len(w) <= 30 for w in words):
        return True
    return bool(re.fullmatch(r"[\w.\[\]=:<>/|{}@+-]+", term))


def title_like(text: str) -> bool:
    body = text.strip().rstrip(PILCROW).strip()
    if not body or len(body) > 90 or TERMINAL.search(body):
        return False
    n_words = len(body.split())
    return 1 <= n_words <= MAX_TITLE_WORDS and (body[0].isupper() or body[0].isdigit())


def columns(text: str, line: Line) -> list[tuple[int, int]]:
    """(start, end) of the cells of a line whose cells stand two or more spaces apart."""
    body = text[line.body : line.end]
    cells: list[tuple[int, int]] = []
    pos = 0
    for m in _GAP.finditer(body):
        cells.append((line.body + pos, line.body + m.start() + 1))
        pos = m.end()
    cells.append((line.body + pos, line.body + len(body.rstrip())))
    return cells


ALIGNED_SHARE = 0.75  # a column edge counts when this share of the rows has it


def columns_align(text: str, lines: list[Line]) -> bool:
    """Whether lines whose words stand two spaces apart form columns: at least two gaps of most rows
    start or end at a column that most rows share. Justified prose ("Maximum  time  in  seconds") has
    double spaces too, but where each line's spacing falls, not at shared columns."""
    edges: list[tuple[list[int], list[int]]] = []
    starts: Counter[int] = Counter()
    ends: Counter[int] = Counter()
    for line in lines:
        raw = text[line.start : line.end].expandtabs(TAB)
        gaps = list(_GAP.finditer(raw))
        row = ([m.end() for m in gaps], [m.start() + 1 for m in gaps])
        edges.append(row)
        starts.update(set(row[0]))
        ends.update(set(row[1]))
    need = max(2, math.ceil(ALIGNED_SHARE * len(lines)))
    shared_starts = {col for col, n in starts.items() if n >= need}
    shared_ends = {col for col, n in ends.items() if n >= need}
    aligned_rows = sum(
        sum(s in shared_starts or e in shared_ends for s, e in zip(*row, strict=True)) >= 2 for row in edges
    )
    return aligned_rows >= need


# --------------------------------------------------------------------------- nodes


def _description_columns(lines: list[Line | None]) -> dict[int, int]:
    """Indent of a term line -> the column its description most often starts at (the next line's indent
    when that is deeper): where a short term's description starts on its own line ("--acls Enable …")."""
    seen: dict[int, dict[int, int]] = {}
    for a, b in zip(lines, lines[1:], strict=False):
        if a is not None and b is not None and b.indent > a.indent:
            counts = seen.setdefault(a.indent, {})
            counts[b.indent] = counts.get(b.indent, 0) + 1
    return {indent: max(counts, key=lambda c: counts[c]) for indent, counts in seen.items()}


MIN_TABLE_ROWS = 3


def _aligned_tables(text: str, lines: list[Line | None]) -> dict[int, int]:
    """Line index -> table number, for runs of at least MIN_TABLE_ROWS consecutive lines at one indent
    whose every line has three or more cells two spaces apart ("Suffix  Units  Byte Equivalent"), in
    columns (columns_align)."""
    out: dict[int, int] = {}
    wide = {n for n, line in enumerate(lines) if line is not None and len(columns(text, line)) >= 3}
    count = 0
    for run in runs_at_one_indent(lines, wide):
        if len(run) >= MIN_TABLE_ROWS and columns_align(
            text, [ln for i in run if (ln := lines[i]) is not None]
        ):
            count += 1
            out.update((i, count) for i in run)
    return out


def layout_nodes(text: str, lines: list[Line | None]) -> list[Node]:
    """Runs of non-blank lines cut where the layout changes: a new bullet, an indent that is not the
    current node's continuation indent, an ALL-CAPS heading line, a term with its description."""
    columns = _description_columns(lines)
    tables = _aligned_tables(text, lines)
    caps_prose = caps_prose_lines(text, lines)
    nodes: list[Node] = []
    current: Node | None = None
    blank = True
    ended = True  # the previous line ended a sentence (a number opening the next line may be an item)
    for n, line in enumerate(lines):
        if line is None:
            current = None
            blank = ended = True
            continue
        if n in tables:  # a row of an aligned table: the table's node holds it
            if current is None or current.kind != "table":
                current = Node([line], line.indent, line.indent, kind="table", blank_before=blank)
                nodes.append(current)
            else:
                current.lines.append(line)
            blank = False
            if n + 1 not in tables or tables[n + 1] != tables[n]:
                current = None
            continue
        body = content(text, line)
        if _UNDERLINE.match(body):
            titled = current is not None and all(title_like(content(text, ln)) for ln in current.lines)
            if (
                titled
                and current is not None
                and len(current.lines) <= 2
                and current.kind != "item"
                and not blank
            ):
                current.kind, current.level = "heading", 1 if body.lstrip()[0] in "=~" else 2
                current.cont = -1  # the underline closes the title
            current = None  # a rule between entries separates them
            blank = ended = True
            continue
        marker = MARKER.match(body)
        numbered = marker is not None and marker.group(0)[0] not in "-*+•·"
        if numbered and not ended and current is not None and line.indent == current.cont:
            marker = None  # "… multiple of\n512. It can …": a wrapped number, not an item
        ended = bool(TERMINAL.search(body)) or marker is not None
        caps = _is_caps_heading(body, line.indent) and n not in caps_prose
        previous = nodes[-1] if nodes else None
        short = _short_term(body, line, columns.get(line.indent), previous)
        asked = current is not None and _asks_line(content(text, current.lines[-1])) and body[:1].isupper()
        if (
            current is not None
            and not marker
            and not caps
            and short is None
            and not asked
            and line.indent == current.cont
        ):
            current.lines.append(line)
            if current.kind == "label":
                current.kind = "text"  # a second line at the same indent: a paragraph after all
            continue
        following = lines[n + 1] if n + 1 < len(lines) else None
        current = _start_node(text, line, body, marker, caps, short, following)
        current.blank_before = blank
        nodes.append(current)
        blank = False
    return nodes


def _short_term(body: str, line: Line, column: int | None, previous: Node | None) -> int | None:
    """Where the description starts when a short term and its description share a line one space apart,
    the description at the document's description column ("--acls Enable …", "oldgnu GNU format …");
    only for an option, or for a term after another such term."""
    if column is None or column <= line.indent:
        return None
    at = column - line.indent
    if len(body) <= at or body[at - 1] != " " or body[at] == " ":
        return None
    term = body[: at - 1].rstrip()
    if not term or " " in term or not term_like(term):
        return None
    sibling = previous is not None and previous.kind == "inline" and previous.indent == line.indent
    return at if term[0] in "-+" or sibling else None


def _justified_line(text: str, body: str, desc_at: int, line: Line, following: Line | None) -> bool:
    """A line of a justified paragraph, not a term and its description: the paragraph goes on at the
    line's own indent without a description at the same column (as a list of terms has), and either its
    sentence wraps onto the next line ("Longest  time  in  seconds that frob waits for each spool to" /
    "drain.") or the would-be description is spaced out too."""
    if following is None or following.indent != line.indent:
        return False
    next_raw = text[following.start : following.end].expandtabs(TAB)
    column = len(text[line.start : line.body + desc_at].expandtabs(TAB))
    if column in {m.end() for m in _GAP.finditer(next_raw)}:
        return False  # the next line's description starts at the same column: a list of terms
    wraps = not TERMINAL.search(body) and content(text, following)[:1].islower()
    return wraps or _GAP.search(body[desc_at:]) is not None


def _asks_line(line: str) -> bool:
    """A line that ends a question ("1.2. Where does the name come from?"): what follows answers it."""
    return line.rstrip().endswith("?") and len(line) <= 200


def _start_node(
    text: str,
    line: Line,
    body: str,
    marker: re.Match[str] | None,
    caps: bool,
    short: int | None = None,
    following: Line | None = None,
) -> Node:
    if caps:
        return Node([line], line.indent, -1, kind="heading")
    if marker is not None:
        width = marker.end()
        return Node(
            [line],
            line.indent,
            line.indent + width,
            kind="item",
            marker=marker.group(0).strip(),
            body_start=line.body + width,
        )
    if short is not None:
        return Node(
            [line],
            line.indent,
            line.indent + short,
            kind="inline",
            body_start=line.body + short,
            term_end=line.body + len(body[:short].rstrip()),
        )
    inline = _INLINE_TERM.match(body)
    if (
        inline
        and term_like(inline["term"])
        and not _justified_line(text, body, inline.start("desc"), line, following)
        and not TERMINAL.search(inline["term"])
        and not (line.indent == 0 and _GAP.search(inline["desc"]))  # a page header or footer line
    ):
        desc_col = line.indent + inline.start("desc")
        return Node(
            [line],
            line.indent,
            desc_col,
            kind="inline",
            body_start=line.body + inline.start("desc"),
            term_end=line.body + inline.end("term"),
        )
    return Node([line], line.indent, line.indent, kind="label")
