"""Plain-text documents (man pages, NEWS files, text exports of manuals) read by their layout.

Plain text says with indentation and line shape what Markdown says with markup:
- a heading: an ALL-CAPS line at the margin ("RETURN VALUE"), a numbered title ("2.1. Removal of …"), a
  short title line over body text, or a label whose indented block holds further labels or items
  ("   Operation mode" over the option list, a changelog entry's header line over its bullets);
- a definition: a term line over a more-indented description ("-f, --file=ARCHIVE" / "Use archive …"),
  or a term and its description on one line, two spaces apart ("2      Fatal error.");
- a list item: a bullet or number, its continuation lines under its text; a bullet with indented
  paragraphs of its own is an entry (a definition led by its first paragraph);
- a table: lines of three or more columns two spaces apart under a header line;
- code: unpunctuated lines after a lead-in ending with ":" ("could look like:"), or lines of synopsis
  shape (brackets, braces, pipes);
- a question (a line ending with "?") over the lines that answer it: a definition with the question as
  its term (a FAQ).
Everything else is a paragraph. The result is the block list the Markdown reader (blocks.py) makes, so
sections, grouping and the KU tree treat both alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .blocks import Block, Segment, parse_blocks, sentences_in, split_long
from .entries import footnotes, questions_with_answers

TAB = 8
_MARKER = re.compile(r"(?:[-*+•·]|\d{1,3}[.)]|\(\d{1,3}\)|[a-z][.)])[ \t]+(?=\S)")
_GAP = re.compile(r"\S(?:[ \t]{2,})(?=\S)")
_INLINE_TERM = re.compile(r"(?P<term>\S(?:[^ \t]| (?! ))*?)[ \t]{2,}(?P<desc>\S.*)$")
_NUMBERED_TITLE = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2})*)\.?\s+(?P<title>\S.*)$")
_TERMINAL = re.compile(r"[.!?:;,]['\"”’)\]]*$")
_PILCROW = "¶"
_UNDERLINE = re.compile(r"^(?:={3,}|-{3,}|~{3,}|\*{3,})\s*$")  # "Title" over "=====": a heading
_SYNOPSIS_CHARS = re.compile(r"[\[\]{}|<>]")
_CODE_CHARS = re.compile(r"[\[\]{}|<>=$/\\]|(?:^|\s)--?\w|\w\(\d\)")
MAX_TITLE_WORDS = 12
MAX_TERM_CHARS = 60
MAX_DEFINITION_CHARS = 1500  # a label over more text than this (or over labels/items) is a heading


@dataclass(slots=True)
class _Line:
    start: int  # first character of the line
    end: int  # end of the line, newline excluded
    indent: int  # columns before the first character (tabs to TAB)
    body: int  # offset of the first non-blank character


@dataclass(slots=True)
class _Node:
    """A run of lines that belong together: a paragraph, an item, an inline definition, a label."""

    lines: list[_Line]
    indent: int
    cont: int  # the indent its continuation lines have
    kind: str = "text"  # text | item | inline | label | heading | code | table
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


def read_blocks(text: str) -> list[Block]:
    """The blocks of any source: by its layout when it is plain text, by its markup otherwise; in both, a
    question paragraph and the paragraphs answering it are one definition (a FAQ entry)."""
    if looks_like_plain_text(text):
        return parse_outline(text)
    return questions_with_answers(text, footnotes(text, parse_blocks(text)))


_MARKDOWN = re.compile(
    r"^ {0,3}#{1,6}[ \t]"  # ATX headings
    r"|(?:\A|\n[ \t]*\n) {0,3}(?:```|~~~)"  # fences opening after a blank line (one under a title underlines it)
    r"|^\s*\|.*\|\s*$"  # pipe tables
    r"|\[[^\]\n]+\]\([^)\n]+\)"  # inline links
    r"|^\[\^?[^\]\n]+\]:\s",  # link or footnote definitions
    re.M,
)


def looks_like_plain_text(text: str) -> bool:
    """No Markdown markup (ATX headings, fences, pipe tables, links): the layout carries the structure."""
    return _MARKDOWN.search(text[:200_000]) is None


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


def _lines(text: str) -> list[_Line | None]:
    """Every line of the text; None for a blank one."""
    out: list[_Line | None] = []
    pos = 0
    for raw in text.split("\n"):
        end = pos + len(raw)
        stripped_end = end - 1 if raw.endswith("\r") else end
        if raw.strip():
            lead = len(raw) - len(raw.lstrip())
            out.append(_Line(pos, stripped_end, _indent(raw), pos + lead))
        else:
            out.append(None)
        pos = end + 1
    return out


def _content(text: str, line: _Line) -> str:
    return text[line.body : line.end].rstrip()


def _is_caps_heading(line: str, indent: int) -> bool:
    body = line.strip()
    letters = [c for c in body if c.isalpha()]
    return (
        indent <= 1
        and len(letters) >= 2
        and all(c.isupper() for c in letters)
        and len(body.split()) <= 8
        and not _TERMINAL.search(body)
    )


def _term_like(term: str) -> bool:
    """A definition term: an option, a short identifier or code, a number, a few comma-separated words."""
    term = term.strip()
    if not term or len(term) > MAX_TERM_CHARS or _TERMINAL.search(term.rstrip(":")):
        return False
    if re.match(r"(?:--?|\+)[A-Za-z0-9]", term):  # an option: "-f", "--fixup=[(amend|reword):]<commit>"
        return True
    words = term.replace(",", " ").split()
    if len(words) <= 3 and all(len(w) <= 30 for w in words):
        return True
    return bool(re.fullmatch(r"[\w.\[\]=:<>/|{}@+-]+", term))


def _title_like(text: str) -> bool:
    body = text.strip().rstrip(_PILCROW).strip()
    if not body or len(body) > 90 or _TERMINAL.search(body):
        return False
    n_words = len(body.split())
    return 1 <= n_words <= MAX_TITLE_WORDS and (body[0].isupper() or body[0].isdigit())


# --------------------------------------------------------------------------- nodes


def _description_columns(lines: list[_Line | None]) -> dict[int, int]:
    """Indent of a term line -> the column its description most often starts at (the next line's indent
    when that is deeper): where a short term's description starts on its own line ("--acls Enable …")."""
    seen: dict[int, dict[int, int]] = {}
    for a, b in zip(lines, lines[1:], strict=False):
        if a is not None and b is not None and b.indent > a.indent:
            counts = seen.setdefault(a.indent, {})
            counts[b.indent] = counts.get(b.indent, 0) + 1
    return {indent: max(counts, key=lambda c: counts[c]) for indent, counts in seen.items()}


MIN_TABLE_ROWS = 3


def _aligned_tables(text: str, lines: list[_Line | None]) -> dict[int, int]:
    """Line index -> table number, for runs of at least MIN_TABLE_ROWS consecutive lines at one indent
    whose every line has three or more cells two spaces apart ("Suffix  Units  Byte Equivalent")."""
    out: dict[int, int] = {}
    run: list[int] = []
    count = 0

    def close() -> None:
        nonlocal count
        if len(run) >= MIN_TABLE_ROWS:
            count += 1
            out.update((i, count) for i in run)
        run.clear()

    indent = -1
    for n, line in enumerate(lines):
        wide = line is not None and len(_columns(text, line)) >= 3
        if wide and line is not None and (not run or line.indent == indent):
            run.append(n)
            indent = line.indent
            continue
        close()
        if wide and line is not None:
            run.append(n)
            indent = line.indent
    close()
    return out


def _nodes(text: str, lines: list[_Line | None]) -> list[_Node]:
    """Runs of non-blank lines cut where the layout changes: a new bullet, an indent that is not the
    current node's continuation indent, an ALL-CAPS heading line, a term with its description."""
    columns = _description_columns(lines)
    tables = _aligned_tables(text, lines)
    nodes: list[_Node] = []
    current: _Node | None = None
    blank = True
    ended = True  # the previous line ended a sentence (a number opening the next line may be an item)
    for n, line in enumerate(lines):
        if line is None:
            current = None
            blank = ended = True
            continue
        if n in tables:  # a row of an aligned table: the table's node holds it
            if current is None or current.kind != "table":
                current = _Node([line], line.indent, line.indent, kind="table", blank_before=blank)
                nodes.append(current)
            else:
                current.lines.append(line)
            blank = False
            if n + 1 not in tables or tables[n + 1] != tables[n]:
                current = None
            continue
        body = _content(text, line)
        if _UNDERLINE.match(body):
            titled = current is not None and all(_title_like(_content(text, ln)) for ln in current.lines)
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
        marker = _MARKER.match(body)
        numbered = marker is not None and marker.group(0)[0] not in "-*+•·"
        if numbered and not ended and current is not None and line.indent == current.cont:
            marker = None  # "… multiple of\n512. It can …": a wrapped number, not an item
        ended = bool(_TERMINAL.search(body)) or marker is not None
        caps = _is_caps_heading(body, line.indent)
        previous = nodes[-1] if nodes else None
        short = _short_term(body, line, columns.get(line.indent), previous)
        asked = current is not None and _asks_line(_content(text, current.lines[-1])) and body[:1].isupper()
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
        current = _start_node(text, line, body, marker, caps, short)
        current.blank_before = blank
        nodes.append(current)
        blank = False
    return nodes


def _short_term(body: str, line: _Line, column: int | None, previous: _Node | None) -> int | None:
    """Where the description starts when a short term and its description share a line one space apart,
    the description at the document's description column ("--acls Enable …", "oldgnu GNU format …");
    only for an option, or for a term after another such term."""
    if column is None or column <= line.indent:
        return None
    at = column - line.indent
    if len(body) <= at or body[at - 1] != " " or body[at] == " ":
        return None
    term = body[: at - 1].rstrip()
    if not term or " " in term or not _term_like(term):
        return None
    sibling = previous is not None and previous.kind == "inline" and previous.indent == line.indent
    return at if term[0] in "-+" or sibling else None


def _asks_line(line: str) -> bool:
    """A line that ends a question ("1.2. Where does the name come from?"): what follows answers it."""
    return line.rstrip().endswith("?") and len(line) <= 200


def _start_node(
    text: str, line: _Line, body: str, marker: re.Match[str] | None, caps: bool, short: int | None = None
) -> _Node:
    if caps:
        return _Node([line], line.indent, -1, kind="heading")
    if marker is not None:
        width = marker.end()
        return _Node(
            [line],
            line.indent,
            line.indent + width,
            kind="item",
            marker=marker.group(0).strip(),
            body_start=line.body + width,
        )
    if short is not None:
        return _Node(
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
        and _term_like(inline["term"])
        and not _TERMINAL.search(inline["term"])
        and not (line.indent == 0 and _GAP.search(inline["desc"]))  # a page header or footer line
    ):
        desc_col = line.indent + inline.start("desc")
        return _Node(
            [line],
            line.indent,
            desc_col,
            kind="inline",
            body_start=line.body + inline.start("desc"),
            term_end=line.body + inline.end("term"),
        )
    return _Node([line], line.indent, line.indent, kind="label")


# --------------------------------------------------------------------------- classification


_ELLIPSIS = re.compile(r"\.\.\.[\])}]*$")  # "[FILE...]": an argument list, not a sentence's end


def _unpunctuated(text: str, node: _Node) -> bool:
    def open_line(line: str) -> bool:
        return not _TERMINAL.search(line) or line.endswith(":") or _ELLIPSIS.search(line) is not None

    return all(open_line(_content(text, ln)) for ln in node.lines)


def _mark_code(text: str, nodes: list[_Node]) -> None:
    """Code: unpunctuated code-shaped lines after a lead-in ending with ':' (with every deeper or equal
    unpunctuated node after them: a config stanza keeps its own indentation), or synopsis-shaped lines."""
    i = 0
    while i < len(nodes):
        node = nodes[i]
        prev = nodes[i - 1] if i else None
        lead_in = (
            prev is not None
            and prev.kind in ("text", "label", "item", "inline")
            and text[prev.start : prev.end].rstrip().endswith(":")
        )
        lines = [_content(text, ln) for ln in node.lines]
        if lines[0].startswith("-- "):
            i += 1  # a signature ("-- Name <mail>  date") closes an entry: prose, not code
            continue
        # after a lead-in, unpunctuated lines indented deeper than it, or shaped like code, are an example
        deeper = lead_in and prev is not None and node.indent > prev.indent
        shaped = deeper or sum(1 for ln in lines if _CODE_CHARS.search(ln)) * 2 >= len(lines)
        synopsis = sum(1 for ln in lines if _SYNOPSIS_CHARS.search(ln)) * 2 >= len(lines)
        over_nested = i + 1 < len(nodes) and nodes[i + 1].indent > node.indent  # a term, unless a stanza
        over_prose = over_nested and not _unpunctuated(text, nodes[i + 1])  # a term over its description
        if (
            node.kind in ("text", "label", "inline")
            and _unpunctuated(text, node)
            and not lines[-1].endswith(":")
            and (
                (lead_in and shaped and not over_prose)
                or (synopsis and node.kind != "inline" and not over_nested)
            )
        ):
            node.kind = "code"
            j = i + 1
            while (
                j < len(nodes)
                and nodes[j].indent >= node.indent
                and nodes[j].kind in ("text", "label", "inline")
                and _unpunctuated(text, nodes[j])
                and (not nodes[j].blank_before or nodes[j].indent > node.indent)
            ):
                nodes[j].kind = "code"
                j += 1
            i = j
            continue
        i += 1


def _columns(text: str, line: _Line) -> list[tuple[int, int]]:
    """(start, end) of the cells of a line whose cells stand two or more spaces apart."""
    body = text[line.body : line.end]
    cells: list[tuple[int, int]] = []
    pos = 0
    for m in _GAP.finditer(body):
        cells.append((line.body + pos, line.body + m.start() + 1))
        pos = m.end()
    cells.append((line.body + pos, line.body + len(body.rstrip())))
    return cells


def _is_table(text: str, node: _Node) -> bool:
    if len(node.lines) < 3 or node.kind not in ("text", "inline", "label"):
        return False
    counts = [len(_columns(text, ln)) for ln in node.lines]
    header = _content(text, node.lines[0])
    return min(counts) >= 3 and not any(c.isdigit() for c in header) and not _TERMINAL.search(header)


def _subtree_end(nodes: list[_Node], i: int) -> int:
    """Index after the last node nested under node i (deeper indent)."""
    j = i + 1
    while j < len(nodes) and nodes[j].indent > nodes[i].indent:
        j += 1
    return j


def _classify_labels(text: str, nodes: list[_Node]) -> None:
    """A one-line node over deeper nodes is a heading (over labels or items, or much text, or ALL-CAPS /
    numbered / title-shaped at the margin) or a definition term; a lone title line over same-indent body
    text is a heading; any other one-liner is a paragraph."""
    has_nested = [_subtree_end(nodes, i) > i + 1 for i in range(len(nodes))]
    for i, node in enumerate(nodes):
        if node.kind != "label":
            continue
        body = _content(text, node.lines[0])
        end = _subtree_end(nodes, i)
        nested = nodes[i + 1 : end]
        if nested:
            size = sum(n.end - n.start for n in nested)
            structured = any(
                n.kind in ("item", "heading", "inline", "table")
                or (n.kind == "label" and has_nested[i + 1 + k])
                for k, n in enumerate(nested)
            )
            entry = _term_like(body) and _among_terms(text, nodes, i) and not _holds_sections(nested)
            if not entry and (not _term_like(body) or structured or size > MAX_DEFINITION_CHARS):
                node.kind = "heading" if not _TERMINAL.search(body) else "text"
            else:
                node.kind = "term"
            continue
        numbered = _NUMBERED_TITLE.match(body)
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if (
            _title_like(body)
            and following is not None
            and following.kind not in ("heading",)
            and (numbered or body.endswith(_PILCROW) or following.blank_before or node.indent == 0)
            and (
                numbered
                or body.endswith(_PILCROW)
                or not (following.kind == "label" and _title_like(_content(text, following.lines[0])))
            )
        ):
            node.kind = "heading"
        else:
            node.kind = "text"


def _among_terms(text: str, nodes: list[_Node], i: int) -> bool:
    """Node i is one entry of a list of terms: the node before it or after its subtree at its indent is a
    term with its description ("RemoteForward" between "PubkeyAuthentication" and "RequestTTY"). Such a
    label is a term however long or structured its description: as a heading it would become the section
    of every later entry of the list."""
    node = nodes[i]
    end = _subtree_end(nodes, i)
    after = nodes[end] if end < len(nodes) else None
    before = next((n for n in reversed(nodes[:i]) if n.indent <= node.indent), None)
    for other in (before, after):
        if other is None or other.indent != node.indent:
            continue
        if other.kind in ("term", "inline"):
            return True
        if other.kind == "label" and _term_like(_content(text, other.lines[0])):
            return other is after and _subtree_end(nodes, end) > end + 1  # the next label has a description
    return False


def _holds_sections(nested: list[_Node]) -> bool:
    """Nested headings, or labels over text of their own: sub-sections, not one entry's description."""
    return any(n.kind == "heading" for n in nested)


def _numbered_titles(text: str, nodes: list[_Node]) -> None:
    """ "2. Completing the move to Python 3¶" alone on its line, at the margin, over body text that is not
    another item: a numbered heading, not a list of one."""
    for i, node in enumerate(nodes):
        if node.kind != "item" or len(node.lines) != 1 or node.indent > 1 or not node.marker[:1].isdigit():
            continue
        body = _content(text, node.lines[0])
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if not _NUMBERED_TITLE.match(body) or not _title_like(body) or following is None:
            continue
        if following.kind != "item" and (following.blank_before or body.endswith(_PILCROW)):
            node.kind = "heading"


def _assign_levels(text: str, nodes: list[_Node]) -> None:
    stack: list[tuple[int, int]] = []  # (indent, level) of the open headings
    for node in nodes:
        if node.kind != "heading":
            continue
        if node.level:  # an underlined title: "=" level 1, "-" level 2
            stack = [(node.indent, node.level)]
            continue
        numbered = _NUMBERED_TITLE.match(_content(text, node.lines[0]))
        if numbered and node.indent <= 1:
            node.level = min(6, numbered["num"].count(".") + 1)
            stack = [(node.indent, node.level)]
            continue
        while stack and stack[-1][0] >= node.indent:
            stack.pop()
        node.level = min(6, stack[-1][1] + 1 if stack else 1)
        stack.append((node.indent, node.level))


# --------------------------------------------------------------------------- blocks


@dataclass(slots=True)
class _Builder:
    text: str
    blocks: list[Block] = field(default_factory=list)

    def sentences(self, a: int, b: int) -> list[Segment]:
        return sentences_in(self.text, a, b, len(self.blocks))

    def add(self, block: Block) -> None:
        for seg in block.segments:
            seg.block = len(self.blocks)
        self.blocks.append(block)


def parse_outline(text: str) -> list[Block]:
    """The blocks of a plain-text document (see the module docstring)."""
    raw = _lines(text)
    nodes = _nodes(text, raw)
    _mark_code(text, nodes)
    for node in nodes:
        if _is_table(text, node):
            node.kind = "table"
    _numbered_titles(text, nodes)
    _classify_labels(text, nodes)
    _assign_levels(text, nodes)
    out = _Builder(text)
    i = 0
    while i < len(nodes):
        i = _emit(out, nodes, i)
    return questions_with_answers(text, out.blocks)


def _emit(out: _Builder, nodes: list[_Node], i: int) -> int:
    text = out.text
    node = nodes[i]
    if node.kind == "heading":
        title = _content(text, node.lines[0]).strip().rstrip(_PILCROW).strip()
        out.add(Block("heading", node.start, node.end, level=node.level, title=" ".join(title.split())))
        return i + 1
    if node.kind == "code":
        j = i + 1
        while j < len(nodes) and nodes[j].kind == "code" and not _new_code_run(nodes, j):
            j += 1
        start, end = node.start, nodes[j - 1].end
        out.add(Block("code", start, end, segments=[Segment(start, end, "code", 0)]))
        return j
    if node.kind == "table":
        blk = Block("table", node.start, node.end)
        for ln in node.lines:
            cells = [text[a:b].strip() for a, b in _columns(text, ln)]
            blk.segments.append(Segment(ln.body, ln.end, "row", 0, cells=cells))
        out.add(blk)
        return i + 1
    if node.kind == "term":
        end = _subtree_end(nodes, i)
        title = " ".join(_content(text, node.lines[0]).split())
        segs = [Segment(node.start, node.end, "term", 0)]
        segs += _body_segments(out, nodes[i + 1 : end])
        out.add(Block("definition", node.start, nodes[end - 1].end, title=title, segments=segs))
        return end
    if node.kind == "inline":
        end = _subtree_end(nodes, i)
        title = " ".join(text[node.start : node.term_end].split())
        segs = [Segment(node.start, node.term_end, "term", 0)]
        segs += out.sentences(node.body_start, node.end)
        segs += _body_segments(out, nodes[i + 1 : end])
        out.add(Block("definition", node.start, nodes[end - 1].end, title=title, segments=segs))
        return end
    if node.kind == "item":
        end = _subtree_end(nodes, i)
        if end > i + 1 and not any(n.kind in ("item", "heading") for n in nodes[i + 1 : end]):
            # a bullet with paragraphs of its own: an entry, led by its first paragraph
            segs = out.sentences(node.body_start, node.end)
            if segs:
                segs[0].marker = node.marker
            segs += _body_segments(out, nodes[i + 1 : end])
            out.add(Block("definition", node.start, nodes[end - 1].end, segments=segs))
            return end
        j = i
        blk = Block("list", node.start, node.end)
        while j < len(nodes) and nodes[j].kind == "item" and nodes[j].indent == node.indent:
            item = nodes[j]
            if _subtree_end(nodes, j) > j + 1:
                break
            ordered = item.marker[:1].isdigit() or item.marker.startswith("(")
            for x, y in split_long(text, item.body_start, item.end):
                first = x == item.body_start
                blk.segments.append(
                    Segment(
                        item.start if first else x,
                        y,
                        "item",
                        0,
                        marker=item.marker if first else "",
                        ordered=ordered,
                        body_start=x,
                    )
                )
            blk.end = item.end
            j += 1
        if j == i:  # an item over nested items: its own line is a list of one
            blk.segments.append(
                Segment(node.start, node.end, "item", 0, marker=node.marker, body_start=node.body_start)
            )
            j = i + 1
        out.add(blk)
        return j
    out.add(Block("paragraph", node.start, node.end, segments=out.sentences(node.start, node.end)))
    return i + 1


def _new_code_run(nodes: list[_Node], j: int) -> bool:
    """Two code runs separated by a blank line at the same indent stay one block only when nested."""
    return nodes[j].blank_before and nodes[j].indent <= nodes[j - 1].indent and nodes[j - 1].kind != "code"


def _body_segments(out: _Builder, nested: list[_Node]) -> list[Segment]:
    """The segments of a definition's description: sentences, with code blocks whole."""
    text = out.text
    segs: list[Segment] = []
    k = 0
    while k < len(nested):
        node = nested[k]
        if node.kind == "code":
            j = k + 1
            while j < len(nested) and nested[j].kind == "code":
                j += 1
            segs.append(Segment(node.start, nested[j - 1].end, "code", 0))
            k = j
            continue
        start = node.body_start if node.kind == "item" and node.body_start >= 0 else node.start
        found = sentences_in(text, start, node.end, 0)
        if node.kind == "item" and found:
            found[0].marker = node.marker
        segs += found
        k += 1
    return segs
