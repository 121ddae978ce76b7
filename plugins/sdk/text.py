"""Shared text utilities for plugins: tokens, stopwords, stems, sentences (generic glue, no retrieval logic)."""

from __future__ import annotations

import re
from functools import lru_cache

from mrpvm.protocol.analysis import (  # noqa: F401 - the shared analyser, re-exported for plugins
    CONVERSION,
    EXTREMES,
    STOPWORDS,
    TERM_TOKEN,
    WORD_PATTERN,
    collapse,
    content_words,
    hyphen_parts,
    iter_words,
    notation_terms,
    plain_text,
    stem,
    stems,
    terms,
    text_terms,
    words,
)

from .patterns import lazy_pattern

# A Markdown list marker ("- ", "* ", "+ ", "• ", "1. ", "2) ") opening a line: every item is a sentence.
_LIST_MARKER = r"(?:[-*+•]|\d{1,3}[.)])[ \t]+"
# CommonMark's hard line break written as a backslash at the end of a line ("**OAuth:** User token\\"): the
# line ends its statement, and the backslash is markup, left out. A backslash after a blank (" \\", a shell
# command continued) is not one.
_HARD_BREAK = r"(?<=\S)\\(?=\r?\n)"
_SENTENCE_END = lazy_pattern(
    r"(?P<hard>\n\s*\n|\n[ \t]*" + _LIST_MARKER + "|" + _HARD_BREAK + r")"
    r"|(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])"
)
_LEADING_MARKER = lazy_pattern(_LIST_MARKER)
_LIST_NUMBER = lazy_pattern(r"^[ \t]*\d{1,3}[.)][ \t]+", re.M)  # a numbered item's marker opening a line
_ABBREVIATIONS = frozenset(
    ["mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "fig", "no", "vol", "approx", "inc", "ltd", "co", "corp", "dept", "est", "cmdr", "gen", "lt", "col", "capt", "sgt"]
)  # fmt: skip


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) character offsets of the sentences of text[start:end], whitespace trimmed.

    Splits after . ! ? followed by space and a capital/digit, at blank lines and before each Markdown
    list item (whose marker is left out); does not split after common abbreviations ("Dr.", "e.g.") or
    single initials.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE_END.finditer(text, start, end):
        piece_end = match.start()
        before = text[cursor:piece_end].rstrip()  # empty, or ends with a non-blank
        last = before.rsplit(None, 1)[-1] if before else ""
        last_word = last.rstrip(".").lstrip("([\"'“‘").lower()
        soft_break = match.group("hard") is None
        hard = match.group("hard") or ""
        number = hard.strip()[:-1]
        if len(number) >= 3 and number.isdigit() and before and before[-1] not in ".:!?;":
            continue  # "… a multiple of\n512. It can …": a wrapped number, not a numbered item
        numero = last_word == "no" and not text[match.end() : match.end() + 1].isdigit()
        if soft_break and (
            (last_word in _ABBREVIATIONS and not numero)  # "No. 5" abbreviates; "No. The …" answers
            or (len(last_word) == 1 and last_word.isalpha())
            # "1. Install": a list number (a marker is one word of at most 4 characters: no copy of a sentence)
            or (len(last) <= 4 and _LEADING_MARKER.fullmatch(before.strip() + " ") is not None)
        ):
            continue
        _append_trimmed(text, cursor, piece_end, spans)
        cursor = match.end()
    _append_trimmed(text, cursor, end, spans)
    return spans


def trim_span(text: str, a: int, b: int) -> tuple[int, int]:
    """(a, b) narrowed so that text[a:b] has no leading or trailing whitespace (a == b if all blank)."""
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def _append_trimmed(text: str, a: int, b: int, spans: list[tuple[int, int]]) -> None:
    a, b = trim_span(text, a, b)
    marker = _LEADING_MARKER.match(text, a, b)  # the first item of a list
    if marker is not None:
        a = marker.end()
    if b > a:
        spans.append((a, b))


def without_list_numbers(text: str) -> str:
    """The text without the numbers of its numbered list items ("1. Install …"): an item's rank is no figure
    the text states."""
    return _LIST_NUMBER.sub("", text)


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


# --------------------------------------------------------------------------- Markdown pieces

# Markdown line shapes, shared with sd-symbolic's block parser (plugins/sd_symbolic/source_units/blocks.py).
FENCE = lazy_pattern(r"^ {0,3}(```+|~~~+)")
TABLE_ROW = lazy_pattern(r"^\s*\|.*\|\s*$")  # a row with its outer pipes
TABLE_SEP = lazy_pattern(r"^\s*\|?[\s:|-]*-[\s:|-]*\|?\s*$")  # |---|:--:|
_JSON_KEY = lazy_pattern(r'^"[^"\n]{1,80}"\s*:')
_MD_LINK = lazy_pattern(r"^!?\[[^\]\n]+\]\([^)\n]*\)")
# "[Design note 7] proposes …", "[1] Smith describes …": a reference-style link (or a citation's label) followed by
# words of a sentence; a line of code or data that opens with "[" is followed by punctuation or nothing
# ("[section]", "[1, 2]", "[[product]]", "[ -f x ] && …")
_REFERENCE_LEAD = lazy_pattern(r"^\[[^\[\]\n]{1,80}\]\s+[A-Za-z][a-z]+\s+[A-Za-z]")
_BOX_DRAWING = lazy_pattern(r"[\u2500-\u257f]{2}|[├└┌┐┘│]")  # a tree or box diagram ("├── src/")


_CELL_BORDER = lazy_pattern(r"(?<!\\)\|")  # a pipe that is not escaped (`\|` writes a pipe inside a cell)


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row; an escaped pipe (GitHub's `\\|`) is a pipe inside its cell."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip().replace("\\|", "|") for c in _CELL_BORDER.split(body)]


def table_row_text(cells: list[str], header: list[str] | None) -> str:
    """A table row read as a statement: "sd-symbolic — Description: Rule-based …; Uses LLM: No"."""
    if not any(cells):
        return ""
    if not header or len(header) != len(cells):
        return " — ".join(c for c in cells if c)
    cells = [c.rstrip(".") for c in cells]  # "…input.; Uses LLM: No" reads as "…input; Uses LLM: No"
    first, rest = cells[0], [f"{h}: {c}" if h else c for h, c in zip(header[1:], cells[1:], strict=True) if c]
    return f"{first} — {'; '.join(rest)}" if first and rest else (first or "; ".join(rest))


def looks_like_code(text: str) -> bool:
    """A line of code or data (a JSON key, an object literal, a block opener, a tree or box diagram)
    rather than prose."""
    stripped = text.strip().rstrip(".")
    if not stripped:
        return False
    if _MD_LINK.match(stripped):
        return False  # "[The guide](guide.md) explains it": prose that opens with a link
    if _REFERENCE_LEAD.match(stripped):
        return False  # "[Design note 7] proposes …": prose that opens with a reference-style link
    return (
        stripped[0] in "{[}]<"
        or stripped.endswith(("{", "[", "(", "=>", "};", "},", "],"))
        or (stripped.endswith(";") and any(ch in stripped for ch in "=(){}"))  # a statement, not prose
        or _JSON_KEY.match(stripped) is not None
        or _BOX_DRAWING.search(stripped) is not None
    )


def markdown_pieces(text: str, header: list[str] | None = None) -> list[tuple[str, str]]:
    """(text, kind) pieces of a Markdown text in reading order, kind one of sentence | row | code.

    A fenced code block is one `code` piece (its fences left out) and a line that reads as code or data
    is a `code` piece; each table row is a `row` read as a statement with its column names (the first
    row of a table is its header, separator rows are dropped; `header` names the columns of rows that
    come without one); the rest is split into sentences (`sentence_spans`).
    """
    out: list[tuple[str, str]] = []
    lines = text.split("\n")
    prose: list[str] = []

    def flush() -> None:
        if prose:
            body = "\n".join(prose)
            for a, b in sentence_spans(body):
                piece = body[a:b]
                out.append((piece, "code" if looks_like_code(piece) else "sentence"))
            prose.clear()

    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            flush()
            j = i + 1
            while j < n and not lines[j].lstrip().startswith(fence.group(1)[:3]):
                j += 1
            code = "\n".join(lines[i + 1 : j]).strip()
            if code:
                out.append((code, "code"))
            i = j + 1
            continue
        if TABLE_ROW.match(line) or (line.count("|") >= 2 and i + 1 < n and TABLE_SEP.match(lines[i + 1])):
            flush()
            j = i
            rows: list[list[str]] = []
            separated = False
            # rows may leave out the outer pipes (claims carry no separator row to tell)
            while j < n and lines[j].strip() and (lines[j].count("|") >= 2 or TABLE_SEP.match(lines[j])):
                if TABLE_SEP.match(lines[j]):
                    separated = True
                else:
                    rows.append(table_cells(lines[j]))
                j += 1
            columns = header
            if rows and (rows[0] == header or (header is None and (len(rows) > 1 or separated))):
                columns, rows = rows[0], rows[1:]
            for cells in rows:
                row = table_row_text(cells, columns)
                if row:
                    out.append((row, "row"))
            i = j
            continue
        if looks_like_code(line):
            flush()
            out.append((line.strip(), "code"))
        else:
            prose.append(line)
        i += 1
    flush()
    return out


PROSE_WORDS = 4  # a `key: value` whose value is this many words or more, opening with a letter, is a text


def prose_value(value: str) -> bool:
    """A mapping's value that is a text, not a short field ("default: 300", "type: list", "sample: [ a, b ]"):
    it opens with a letter and runs to PROSE_WORDS words or more ("Memory: at least 8GB of RAM is …")."""
    return bool(value) and value[0].isalpha() and len(value.split()) >= PROSE_WORDS


@lru_cache(maxsize=4096)  # gs-symbolic asks it for every sentence of the evidence
def file_title(name: str) -> str:
    """A document's title when it has no other: its file name without the folder and extension
    ("docs/tar.txt" -> "tar"). The kb family scopes a question that names it; gs-symbolic reads it as context.
    What `PurePosixPath(name).stem` gives, without importing pathlib (with urllib.parse and ipaddress: ~3 ms
    of every worker's start that reads no file by it)."""
    base = next((part for part in reversed(name.split("/")) if part and part != "."), "")
    dot = base.rfind(".")
    return base[:dot] if 0 < dot < len(base) - 1 else base


# a line that says one thing without a full stop: it opens with a capitalised word ("If", "NOTE", "MD5") after
# a line that ends in a word or ')' (not ',', ':', nor a function word: "… relative to the")
_OPENS_STATEMENT = lazy_pattern(r"[A-Z]\w*\b")
_ENDS_STATEMENT = lazy_pattern(r"[\w)]$")


def starts_statement(previous: str, line: str) -> bool:
    """`line` starts a statement of its own after `previous` (a config file's comment lines, a note's lines
    kept apart: "If set to MD5, MD5 is used" over "If set to DES, DES is used"); a wrapped sentence ("…
    relative to the" / "home directory.", "… in the" / "Debian archive") does not."""
    before = previous.split()
    if len(before) < 2 or len(line.split()) < 2:
        return False  # a line of one word is a name in a list ("MOTD_FILE" over "LASTLOG_ENAB"), no statement
    last = before[-1]
    return (
        bool(_OPENS_STATEMENT.match(line.lstrip()))
        and bool(_ENDS_STATEMENT.search(last))
        and last.lower() not in STOPWORDS
    )


def line_statements(text: str) -> list[str]:
    """The statements of a text whose lines may each say one thing without a full stop (starts_statement)."""
    out: list[str] = []
    for line in text.split("\n"):
        if out and not starts_statement(out[-1], line):
            out[-1] = f"{out[-1]} {line.strip()}"
        elif line.strip():
            out.append(line.strip())
    return out
