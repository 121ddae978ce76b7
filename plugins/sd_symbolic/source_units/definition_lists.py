"""Definition lists of Pandoc and PHP Markdown Extra: a term on its own line, its definition on the next line
after a colon and a blank.

    retry-limit
    : Integer. How many times a failed upload is tried again. Defaults to 3.

      A second paragraph of the definition, indented under its text.

    : A second definition of the same term.

Read as a paragraph, the term ran into its definition's first sentence ("retry-limit : Integer.") and the
definition's later sentences named nothing. Read here, the term is the definition's subject (a term
segment, the block's title) as a man page's option line is, and the definition its text: each ": " line
opens a definition of the term, its lines run on to a blank line (lazy continuation), and after a blank a
line indented under the definition's text (two or more columns) or another ": " line goes on with it.
A blank line may stand between the term and its first definition (Pandoc allows one). A term is one short
line at the margin that does not end like a sentence. Only the colon
marker is read (Pandoc's "~" opens ordinary prose lines too often).
"""

from __future__ import annotations

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import FENCE, TABLE_ROW, trim_span

ATX = lazy_pattern(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_DEFINITION = lazy_pattern(r"^ {0,3}:[ \t]+(?=\S)")
MAX_TERM_CHARS = 80
_SENTENCE_END = lazy_pattern(r"[.!?;,]['\"”’)]*$")  # a line ending like a sentence is prose, not a term


def _text(text: str, line: tuple[int, int]) -> str:
    return text[line[0] : line[1]]


def _is_term(line: str) -> bool:
    body = line.strip()
    return (
        bool(body)
        and len(body) <= MAX_TERM_CHARS
        and not _SENTENCE_END.search(body)
        and not line.startswith((" ", "\t"))
        and not _DEFINITION.match(line)
        and not ATX.match(line)
        and not FENCE.match(line)
        and not TABLE_ROW.match(line)
    )


def _definition_at(text: str, lines: list[tuple[int, int]], j: int) -> bool:
    return j < len(lines) and _DEFINITION.match(_text(text, lines[j])) is not None


def opens_definition_list(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    """Line i is a term: a short line at the margin with a ": " definition on the next line (or after one
    blank line). The definition's mark, one match, is looked for before the term's shape."""
    defined = _definition_at(text, lines, i + 1) or (
        i + 2 < len(lines) and not _text(text, lines[i + 1]).strip() and _definition_at(text, lines, i + 2)
    )
    return defined and _is_term(_text(text, lines[i]))


class Definition(msgspec.Struct, frozen=True):
    """A term and the spans of its definitions' paragraphs; `after` is the index of the line after them."""

    term: tuple[int, int]
    paragraphs: list[tuple[int, int]]
    after: int


def definition_at(text: str, lines: list[tuple[int, int]], i: int) -> Definition:
    """The definition whose term is line i (opens_definition_list)."""
    n = len(lines)
    term = trim_span(text, *lines[i])
    spans: list[tuple[int, int]] = [term]
    j = i + 1
    while j < n:
        line = _text(text, lines[j])
        if not line.strip():
            k = j + 1
            while k < n and not _text(text, lines[k]).strip():
                k += 1
            if k < n and k - j == 1 and not spans[1:] and _definition_at(text, lines, k):
                j = k  # the blank Pandoc allows between the term and its first definition
                continue
            nxt = _text(text, lines[k]) if k < n else ""
            if k < n and (_DEFINITION.match(nxt) or (nxt.startswith(("  ", "\t")) and spans[1:])):
                j = k
                continue
            break
        mark = _DEFINITION.match(line)
        start = lines[j][0] + (mark.end() if mark else 0)
        k = j + 1
        while k < n:  # the paragraph's lines: up to a blank, a new term, or another block's start
            nxt = _text(text, lines[k])
            if not nxt.strip() or _DEFINITION.match(nxt) or ATX.match(nxt) or FENCE.match(nxt):
                break
            if _definition_at(text, lines, k + 1) and _is_term(nxt):
                break
            k += 1
        spans.append(trim_span(text, start, lines[k - 1][1]))
        j = k
        if j < n and _is_term(_text(text, lines[j])) and _definition_at(text, lines, j + 1):
            break  # a compact list: the next term follows its neighbour's definition directly
    return Definition(term, spans[1:], j)
