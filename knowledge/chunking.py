"""Split a source into contiguous chunks whose JSON-encoded size fits a byte ceiling.

The chunks tile the text exactly: `"".join(text[a:b] for a, b in spans) == text`, so nothing is dropped
and every chunk's offset refers to the whole source. Cuts prefer, in order, a paragraph break, a line
break, a sentence end (each only in the second half of the window, so chunks stay large), then any
whitespace, and only as a last resort the middle of a word.
"""

from __future__ import annotations

import re

import msgspec

_encode = msgspec.json.encode

# Each pattern matches the separator; the cut goes after it (trailing whitespace stays with the chunk before).
_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_LINE = re.compile(r"\n\s*")
_SENTENCE = re.compile(r"[.!?;:][\"'”’)\]]*\s+")
_SPACE = re.compile(r"\s+")
# The largest JSON encoding of one code point: `\u001f` (6 bytes); an astral character is 4 bytes.
MAX_CHAR_BYTES = 6


def json_size(text: str) -> int:
    """Bytes `text` takes inside a JSON string (without the quotes), as msgspec encodes it."""
    return len(_encode(text)) - 2


def _fit(text: str, pos: int, max_bytes: int) -> int:
    """The largest end > pos with json_size(text[pos:end]) <= max_bytes (a code point is >= 1 byte)."""
    hi = min(len(text), pos + max_bytes)
    if json_size(text[pos:hi]) <= max_bytes:
        return hi
    lo = pos + 1  # fits: max_bytes >= MAX_CHAR_BYTES
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if json_size(text[pos:mid]) <= max_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _last_cut(pattern: re.Pattern[str], text: str, pos: int, limit: int, floor: int) -> int | None:
    cut = None
    for match in pattern.finditer(text, pos, limit):
        if match.end() >= floor and match.end() > pos:
            cut = match.end()
    return cut


def _best_cut(text: str, pos: int, limit: int) -> int:
    half = pos + (limit - pos) // 2
    for pattern, floor in ((_PARAGRAPH, half), (_LINE, half), (_SENTENCE, half), (_SPACE, pos + 1)):
        cut = _last_cut(pattern, text, pos, limit, floor)
        if cut is not None:
            return cut
    return limit


def chunk_spans(text: str, max_bytes: int) -> list[tuple[int, int]]:
    """(start, end) offsets of chunks that tile `text`, each at most `max_bytes` once JSON-encoded."""
    if max_bytes < MAX_CHAR_BYTES:
        raise ValueError(f"a chunk ceiling of {max_bytes} bytes cannot hold one character")
    spans: list[tuple[int, int]] = []
    pos, n = 0, len(text)
    while pos < n:
        limit = _fit(text, pos, max_bytes)
        cut = n if limit == n else _best_cut(text, pos, limit)
        spans.append((pos, cut))
        pos = cut
    return spans
