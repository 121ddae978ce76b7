"""Drawings in a text: a figure of boxes, arrows and lines made of characters, read as one code block.

A protocol's or a design's text draws what it describes ("put -----> [READY] ---------> [RESERVED]", boxes of
"|" and "`-----'" around labels). Read as Markdown, its lines became sentences, a table (two "|" on a line)
and a definition, and their fragments ("| (time passes) |") were quoted as statements. A run of non-blank
lines is a drawing when at least two, and at least half, of its lines are drawn (drawing characters,
"-|/\\_<>^`'=+*.~", and no letter or digit; or three or more drawing characters and no more letters and
digits than them) and one of them holds a stroke (three or more of "-", "=", "_" or "~" in a row). A
Markdown table (a row over its "|---|" separator) and a grid table ("+----+----+") are no drawings, and a
setext underline or a thematic break ("-----", "* * *") is no drawn line: a paragraph under a rule, or a
title over its underline, is no drawing.
"""

from __future__ import annotations

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import TABLE_SEP

_DRAWING_CHARS = frozenset("-|/\\_<>^`'=+*.~")
_STROKE = lazy_pattern(r"[-=_~]{3,}")
# a setext underline or a thematic break ("-----", "* * *"): a line of its own kind, not a stroke of a drawing
_UNDERLINE = lazy_pattern(r"^ {0,3}(?:=+|-+|([-*_])(?:[ \t]*\1){2,})[ \t]*$")
_GRID = lazy_pattern(r"^\s*\+[-=+:]+\+\s*$")
MIN_DRAWN = 3


def _drawn(line: str) -> bool:
    drawn = sum(c in _DRAWING_CHARS for c in line)
    letters = sum(c.isalnum() for c in line)
    return (drawn > 0 and letters == 0) or (drawn >= MIN_DRAWN and drawn >= letters)


def drawing_end(text: str, lines: list[tuple[int, int]], i: int) -> int | None:
    """The index of the line after a drawing that starts on line i (see the module docstring); None when
    the run of lines from i is none. A run without a stroke (most paragraphs) is rejected by one search
    over its span (a stroke holds no line break), before any line of it is read alone."""
    n = len(lines)
    j = i
    while j < n and text[slice(*lines[j])].strip():
        j += 1
    if j - i < 2 or _STROKE.search(text, lines[i][0], lines[j - 1][1]) is None:
        return None
    run = [text[a:b] for a, b in lines[i:j]]
    if any(TABLE_SEP.match(ln) or _GRID.match(ln) for ln in run):
        return None
    drawn = sum(_drawn(ln) and not _UNDERLINE.match(ln) for ln in run)
    return j if drawn >= 2 and drawn * 2 >= len(run) else None
