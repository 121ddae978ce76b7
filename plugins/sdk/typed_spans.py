"""The values of a shaped answer type that a text writes out, compared across passages (a figure's digits, a
version, a date, a duration, a path, an option)."""

from __future__ import annotations

import re

from .answer_shapes import DATE, DURATION, OPTION
from .patterns import lazy_pattern

# a value of each shaped type, written out (a figure's digits, a version, a date, a duration, a path, an option)
_SPANS = {
    "number": lazy_pattern(r"(?<![\w.])\d+(?:[.,]\d+)*"),
    "version": lazy_pattern(
        r"(?<![\w.])v?(?P<value>\d+(?:\.\d+)+)[\w~+-]*|\bv(?P<v>\d+)\b(?!\.\d)|\b(?:version|release)\s+(?P<n>\d+)\b(?!\.\d)",
        re.I,
    ),
    "date": DATE,
    "duration": DURATION,
    "location": lazy_pattern(r"(?<![\w/])(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*/?|\b[a-z][\w+.-]*://\S+"),
    "option": OPTION,
}


def typed_spans(text: str, answer_type: str) -> frozenset[str]:
    """The values of `answer_type` that `text` writes out, lower-cased and without the quotes around them
    (empty for the types no shape tells)."""
    pattern = _SPANS.get(answer_type)
    if pattern is None:
        return frozenset()
    found = (next((v for v in m.groupdict().values() if v), m.group(0)) for m in pattern.finditer(text))
    return frozenset(v.strip(" \t(`'\".,;:").lower() for v in found) - {""}
