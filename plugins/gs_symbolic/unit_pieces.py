"""The statements of a unit's text as gs-symbolic reads them: sentences, list items, table rows (read with
their column names), code blocks and data lines; a statement over MAX_PIECE characters (lists run together, a
header block, a long table row, a bullet of several sentences) split into shorter ones."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import CONVERSION, line_statements, markdown_pieces, sentence_spans, table_cells

MAX_PIECE = 300  # a longer "sentence" (lists run together) is split into clauses
_COLUMNS = "Columns: "  # sd-symbolic's title for table rows cut off from their header (source_units/tree.py)


def unit_pieces(claim: str, title: str) -> list[tuple[str, bool, str]]:
    """(text, is code, the record it belongs to) for the statements of a unit: its sentences, list items
    and table rows (read with their column names), and its code blocks and data lines (quoted only when
    code is asked for). The record is a header block's first field ("PEP: 518"), which every other field of
    the block is about; "" elsewhere."""
    header = table_cells(title[len(_COLUMNS) :]) if title.startswith(_COLUMNS) else None
    out: list[tuple[str, bool, str]] = []
    for piece, kind in _statement_pieces(claim, header):
        if kind == "sentence" and len(entries := labelled_entries(piece)) > 1:
            out.extend((e, False, "") for e in entries)
            continue
        if kind == "code" or len(piece) <= MAX_PIECE:
            out.append((piece, kind == "code", ""))
            continue
        fields = _header_fields(piece)
        if fields:
            out.extend((f, False, fields[0] if n else "") for n, f in enumerate(fields))
        else:
            out.extend((p, False, "") for p in _long_piece(piece, kind))
    return out


def _statement_pieces(claim: str, header: list[str] | None) -> list[tuple[str, str]]:
    """markdown_pieces, a sentence whose lines each say one thing (a config file's comment lines, which
    sd-symbolic keeps on lines of their own) read line by line."""
    return [
        (line, kind)
        for piece, kind in markdown_pieces(claim, header)
        for line in (line_statements(piece) if kind == "sentence" and "\n" in piece else [piece])
    ]


_ROW_KEY = " — "  # sdk.text.table_row_text: "key — Column: cell; Column: cell"
# "PEP: 518 Title: … Author: …": a field's name, capitalised (hyphenated words allowed), then ": "
_FIELD_NAME = lazy_pattern(r"(?:^|(?<=\s))[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*:\s")
MIN_FIELDS = 4  # a text opening with a field and holding this many reads as a header block


def _header_fields(piece: str) -> list[str]:
    """The fields of a header block ("Key: value Key: value …", as RFCs, PEPs and package metadata open);
    [] when the text is not one."""
    starts = [m.start() for m in _FIELD_NAME.finditer(piece)]
    if len(starts) < MIN_FIELDS or starts[0] != 0:
        return []
    return [piece[a:b].strip() for a, b in zip(starts, [*starts[1:], len(piece)], strict=True)]


# a labelled entry's term: "`%e`:: Elapsed time …", "CMake:: A widely used …" (AsciiDoc's labelled lists, a
# glossary's "term:: definition"), one token before "::" and a blank; "Text::Wrap", "std::vector" hold none
_LABEL = lazy_pattern(r"(?:^|(?<=\s))(?:`[^`\n]{1,60}`|[^\s`:]{1,80}):{2,3}[ \t]")


MIN_CONVERSIONS = 3  # a paragraph opening with a conversion and holding this many reads as a verb table


def labelled_entries(piece: str) -> list[str]:
    """The entries of a run of labelled entries sd-symbolic joined into one paragraph ("`%s`:: The number of
    started edges. `%t`:: The total …"), each from its term to the next one's (a lead-in before the first
    term is a statement of its own); [] when the text writes no term. A table of conversions flattened the
    same way ("%b base 2 %c the character … %d base 10") is read entry by entry too."""
    starts = [m.start() for m in _LABEL.finditer(piece)]
    if not starts and CONVERSION.match(piece):
        starts = [
            m.start() for m in CONVERSION.finditer(piece) if m.start() == 0 or piece[m.start() - 1] == " "
        ]
        if len(starts) < MIN_CONVERSIONS:
            return []
    if not starts:
        return []
    bounds = ([0] if starts[0] > 0 else []) + starts
    return [s for a, b in zip(bounds, [*bounds[1:], len(piece)], strict=True) if (s := piece[a:b].strip())]


def _long_piece(piece: str, kind: str) -> list[str]:
    """A statement over MAX_PIECE as shorter ones: a table row field by field under its key ("key — Default:
    `x`"); anything else by its lines and clauses."""
    if kind == "row" and _ROW_KEY in piece:
        key, fields = piece.split(_ROW_KEY, 1)
        parts = [f.strip() for f in re.split(r";\s+", fields) if f.strip()]
        if key.strip() and len(parts) > 1:
            return [f"{key.strip()}{_ROW_KEY}{f}" for f in parts]
    return [s for p in re.split(r"\n+|;\s+", piece) if p.strip() for s in sentences_of(p.strip())]


def sentences_of(text: str) -> list[str]:
    """A statement over MAX_PIECE that holds several sentences (a changelog entry, a FAQ's bullet, a step
    that explains itself) as its sentences; a shorter one, or code, whole."""
    if len(text) <= MAX_PIECE or "```" in text:
        return [text]
    return [text[a:b] for a, b in sentence_spans(text)] or [text]
