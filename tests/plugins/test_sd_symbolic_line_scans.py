"""sd-symbolic's line scans restructured for speed (session 25) decide as their line-by-line readings did.

Each reference below is the former reading (a loop over lines, every check on every line); the new one
reads a span once (a split, one search over a paragraph, a pass that stops at the first line that rules
the source out). Both are run on the development stories and on shapes built to hit each branch.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mrpvm.plugins.sd_symbolic.shared import roles
from mrpvm.plugins.sd_symbolic.source_units import config_file, definition_lists, drawings
from mrpvm.plugins.sd_symbolic.source_units.segments import line_spans
from mrpvm.plugins.sdk.text import TABLE_SEP

DEV = sorted(Path(__file__).resolve().parents[2].joinpath("eval", "dev").glob("*/story.nl"))

SHAPES = [
    "",
    "\n",
    "one line",
    "a\n\nb\n",
    "a\r\nb\r\n\r\nc",
    "\r",
    "x\n\r",
    "Term\n: its definition\n\nOther\n\n: after a blank\nplain line\nNot a term.\n: x",
    "put -----> [READY] ---------> [RESERVED]\n           |                  |\n    `-----'  ====\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "Title\n-----\nbody text here\n\n* * *\n",
    "+----+----+\n| a  | b  |\n+----+----+\n",
    "# comment\n# another\nKEY value\nOTHER 2\nTHIRD x\n",
    "# comment\nKEY value\nThis is a sentence.\n",
    "Support for the v1 protocol is disabled. Open the file. Test results show it. Run it. Then Copy all.",
]


def _documents() -> list[str]:
    return [p.read_text() for p in DEV] + SHAPES


def reference_line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    a = start
    while a < end:
        nl = text.find("\n", a, end)
        b = end if nl < 0 else nl
        out.append((a, b - 1) if b > a and text[b - 1] == "\r" else (a, b))
        a = end if nl < 0 else nl + 1
    return out


def reference_drawing_end(text: str, lines: list[tuple[int, int]], i: int) -> int | None:
    run: list[str] = []
    j = i
    while j < len(lines) and (line := text[slice(*lines[j])]).strip():
        run.append(line)
        j += 1
    if len(run) < 2 or any(TABLE_SEP.match(ln) or drawings._GRID.match(ln) for ln in run):
        return None
    if not any(drawings._STROKE.search(ln) for ln in run):
        return None
    drawn = sum(drawings._drawn(ln) and not drawings._UNDERLINE.match(ln) for ln in run)
    return j if drawn >= 2 and drawn * 2 >= len(run) else None


def reference_opens(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    line = definition_lists._text
    if not definition_lists._is_term(line(text, lines[i])):
        return False
    if definition_lists._definition_at(text, lines, i + 1):
        return True
    return (
        i + 2 < len(lines)
        and not line(text, lines[i + 1]).strip()
        and definition_lists._definition_at(text, lines, i + 2)
    )


def reference_looks_like_config(text: str) -> bool:
    cf = config_file
    lines = [ln for ln in text.split("\n", cf.MAX_LINES_READ)[: cf.MAX_LINES_READ] if ln.strip()]
    comments = sum(1 for ln in lines if cf._COMMENT.match(ln))
    others = [ln for ln in lines if not cf._COMMENT.match(ln)]
    return (
        len(others) >= cf.MIN_SETTINGS
        and comments >= cf.MIN_COMMENT_SHARE * len(lines)
        and all(cf._setting(ln) for ln in others)
    )


def reference_verb_first(body: str) -> bool:
    ws = roles._WORD_RE.findall(body[:80])
    if not ws:
        return False
    first = ws[0].lower()
    lows = [w.lower() for w in ws[1:12]]
    if lows[:1] and lows[0] in ("for", "of") and roles._FINITE & set(lows[1:]):
        return False
    if first in roles.IMPERATIVE_VERBS:
        return not (lows[:1] and lows[0] in roles._FINITE)
    if (
        first in roles.STOPWORDS
        or first.endswith(("ed", "ing"))
        or (first.endswith("s") and not first.endswith("ss"))
    ):
        return False
    return len(ws) > 1 and ws[1].lower() in roles._OBJECT_STARTERS and ws[0][0].isupper()


def test_the_development_stories_are_there():
    assert len(DEV) >= 5


@pytest.mark.parametrize("text", _documents())
def test_line_spans_are_the_line_by_line_reading(text):
    assert line_spans(text, 0, len(text)) == reference_line_spans(text, 0, len(text))
    mid = len(text) // 3
    assert line_spans(text, mid, len(text) - 1) == reference_line_spans(text, mid, len(text) - 1)


@pytest.mark.parametrize("text", _documents())
def test_drawings_and_definition_terms_are_found_on_the_same_lines(text):
    lines = line_spans(text, 0, len(text))
    for i in range(len(lines)):
        assert drawings.drawing_end(text, lines, i) == reference_drawing_end(text, lines, i)
        assert definition_lists.opens_definition_list(text, lines, i) == reference_opens(text, lines, i)


@pytest.mark.parametrize("text", _documents())
def test_a_config_file_is_told_as_before(text):
    assert config_file.looks_like_config(text) == reference_looks_like_config(text)


def test_a_config_file_is_still_recognised_and_prose_stops_the_scan_early():
    config = "# the port\n# and more\nPORT 8080\nHOST local\nMODE fast\nLEVEL 3\n"
    assert config_file.looks_like_config(config) == reference_looks_like_config(config)
    assert not config_file.looks_like_config("An opening sentence of prose.\n" + config)


@pytest.mark.parametrize("text", _documents())
def test_a_sentence_opens_with_a_verb_as_before(text):
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
        assert roles._verb_first(sentence) == reference_verb_first(sentence)
        assert roles._verb_first(sentence.lstrip("*_`> ")) == reference_verb_first(sentence.lstrip("*_`> "))
