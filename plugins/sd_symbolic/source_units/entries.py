"""Entries of a FAQ or a numbered list of questions, Markdown footnotes and indented term lines, as
definition blocks.

A paragraph that only asks a question ("Why does X happen?", "Q: …?", "1.2. Where does …?") over the
paragraphs that answer it, or one paragraph that holds both ("Q: …?" / "A: …"), is one definition: the
question is its term, the answer its text (the "A:" marker dropped). A Markdown footnote definition
("[^7]: …") is a definition named by its label. A paragraph whose first line is a bare term and whose
other lines are indented under it (reStructuredText's definition list: "pysettings.toml" over
"  Most reasonable alternative.") is a definition of that term.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .segments import Block, Segment, sentences_in

_QUESTION = lazy_pattern(r"^(?:(?:q|question)\s*\d*\s*[:.)]\s*|\d{1,3}[.)]\s+)?(?P<q>.*\?)['\"”’)]*$", re.I)
_ENTRY_NUMBER = lazy_pattern(r"^\d{1,3}\.\d{1,3}(?:\.\d{1,3})*\.?\s+\S")
# "Q: …?" then, on a later line of the same paragraph, "A: …"
_ANSWER_MARK = lazy_pattern(r"\n[ \t]*(?:a|answer)\s*\d*\s*[:.)][ \t]*(?=\S)", re.I)
MAX_QUESTION_CHARS = 300


def questions_with_answers(text: str, blocks: list[Block]) -> list[Block]:
    """A paragraph that only asks a question ("Why does X happen?", "Q: …?") followed by paragraphs that
    do not, up to the next question or heading, is one definition: the question and its answer."""
    blocks = [_inline_entry(text, b) or b for b in blocks]
    out: list[Block] = []
    k = 0
    while k < len(blocks):
        blk = blocks[k]
        question = _asks(text, blk)
        if question is None or k + 1 >= len(blocks) or blocks[k + 1].kind == "heading":
            out.append(blk)
            k += 1
            continue
        j = k + 1
        while j < len(blocks) and blocks[j].kind not in ("heading",) and _asks(text, blocks[j]) is None:
            j += 1
        answer = blocks[k + 1 : j]
        if not answer:  # a question right after a question ("Q1: …? Q2: …?"): asked, not answered
            out.append(blk)
            k += 1
            continue
        segs = [Segment(blk.start, blk.end, "term", 0)]
        for b in answer:
            segs += b.segments
        _drop_answer_mark(text, segs[1])
        out.append(Block("definition", blk.start, answer[-1].end, title=question, segments=segs))
        k = j
    for n, blk in enumerate(out):
        for seg in blk.segments:
            seg.block = n
    return out


_FOOTNOTE = lazy_pattern(r"\[\^[^\]\s]{1,20}\]:[ \t]*")


def footnotes(text: str, blocks: list[Block]) -> list[Block]:
    """A Markdown footnote definition ("[^7]: Binaries produced on these systems …") is a definition whose
    term is its label; the KU tree names it after what cites it."""
    for blk in blocks:
        if blk.kind != "paragraph" or not blk.segments:
            continue
        m = _FOOTNOTE.match(text, blk.start)
        if m is None:
            continue
        label = text[m.start() : m.end()].strip().rstrip(":")
        first = blk.segments[0]
        if first.end <= m.end():
            continue
        rest = sentences_in(text, m.end(), first.end, first.block)
        blk.segments = [Segment(m.start(), m.end(), "term", first.block), *rest, *blk.segments[1:]]
        blk.kind, blk.title = "definition", label
    return blocks


MAX_TERM_CHARS = 80
_TERM_END = lazy_pattern(r"[.!?,;]['\"”’)]*$")  # a line ending like a sentence is prose, not a term


def term_lines(text: str, blocks: list[Block]) -> list[Block]:
    """A paragraph whose first line is a short term (no sentence punctuation at its end) and whose every
    other line is indented deeper is a definition: the term, then its indented text."""
    for blk in blocks:
        if blk.kind != "paragraph" or not blk.segments:
            continue
        lines = text[blk.start : blk.end].split("\n")
        head = lines[0]
        if len(lines) < 2 or len(head.strip()) > MAX_TERM_CHARS or _TERM_END.search(head.strip()):
            continue
        line_start = text.rfind("\n", 0, blk.start) + 1
        if text[line_start : blk.start].strip():
            continue  # the paragraph starts mid-line: its first line's indent is unknown
        indent = blk.start - line_start  # the block starts at the term's first character
        rest = [ln for ln in lines[1:] if ln.strip()]
        if not all(len(ln) - len(ln.lstrip()) > indent for ln in rest):
            continue
        term_end = blk.start + len(head)
        body_start = term_end + 1 + (len(lines[1]) - len(lines[1].lstrip()))
        body = sentences_in(text, body_start, blk.end, blk.segments[0].block)
        if not body:
            continue
        blk.segments = [Segment(blk.start, term_end, "term", blk.segments[0].block), *body]
        blk.kind, blk.title = "definition", head.strip()
    return blocks


def _asks(text: str, blk: Block) -> str | None:
    """What an entry's header paragraph states when that is all it does: a question ("1.2. Where does the
    name come from?"), or a numbered entry's lead ("2.1. When building Valgrind, 'make' dies …")."""
    if blk.kind != "paragraph" or not blk.segments:
        return None
    body = " ".join(text[blk.start : blk.end].split())
    if len(body) > 300:
        return None
    if _ENTRY_NUMBER.match(body):
        return body
    m = _QUESTION.match(body)
    return m["q"] if m and len(blk.segments) <= 2 else None


def _inline_entry(text: str, blk: Block) -> Block | None:
    """ "Q: How …?" and "A: Open …" in one paragraph: a definition of the question and its answer."""
    if blk.kind != "paragraph" or not blk.segments:
        return None
    mark = _ANSWER_MARK.search(text, blk.start, blk.end)
    if mark is None:
        return None
    asked = " ".join(text[blk.start : mark.start()].split())
    question = _QUESTION.match(asked)
    if question is None or len(asked) > MAX_QUESTION_CHARS:
        return None
    answer = sentences_in(text, mark.end(), blk.end, 0)
    if not answer:
        return None
    term = Segment(blk.start, mark.start(), "term", 0)
    return Block("definition", blk.start, blk.end, title=question["q"], segments=[term, *answer])


def _drop_answer_mark(text: str, seg: Segment) -> None:
    """An answer paragraph opened by "A:" starts after the marker."""
    mark = _ANSWER_MARK.match("\n" + text[seg.start : seg.end])
    if mark is not None and seg.kind == "sentence":
        seg.start += mark.end() - 1
