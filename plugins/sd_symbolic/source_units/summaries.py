"""The summaries of a section and of a whole source, as Markdown a composite or aggregate unit carries:
its central sentences (summarize.py scores them), a short list by itself, or a lone table or code block."""

from __future__ import annotations

from collections import Counter

from .pieces import Piece, anaphoric, strip_step_marker
from .sections import Section
from .segments import Block
from .summarize import central_indices, centrality, doc_freq, summary_size

MAX_SUMMARY_CHARS = 700

# Code and table rows read wrongly run together in a summary sentence: their own units carry them.
_UNSUMMED = frozenset({"code", "row"})


def summarize_span(pieces: list[Piece], df: Counter[str] | None = None, k: int | None = None) -> list[Piece]:
    """The central sentences of a span. A sentence that leans on the one before it ("Its firmware …",
    "They …", "But …") reads wrongly out of context, so it is chosen only when no other sentence is left."""
    usable = [
        p for p in pieces if p.seg.kind not in _UNSUMMED and p.terms and not p.clean.endswith(("?", ":"))
    ]
    if not usable:
        usable = [p for p in pieces if p.seg.kind not in _UNSUMMED and p.terms]
    if not usable:
        return []
    short_list = all(p.seg.kind == "item" for p in usable) and (
        sum(len(p.clean) + 3 for p in usable) <= MAX_SUMMARY_CHARS
    )
    if k is None and short_list:
        return usable  # a short list is summarized by itself: every item, in order
    if usable[0].seg.kind == "sentence" and usable[0] is pieces[0]:
        # a section that opens with prose is summarized by its prose: list items ("able to perform
        # sufficiency checks") are fragments that read wrongly without the sentence leading into them
        usable = [p for p in usable if p.seg.kind == "sentence"]
    size = k or summary_size(len(usable))
    if df is None:
        df = doc_freq([p.terms for p in usable])
    standalone = [p for p in usable if not anaphoric(p)] or usable
    picks = central_indices([p.terms for p in standalone], size, df)
    return [standalone[i] for i in picks]


def join_summary(pieces: list[Piece]) -> str:
    """Sentences run on as prose; list items stay a Markdown list ("0 — success 1 — processing error"
    would read as one sentence)."""
    out: list[str] = []
    total = 0
    after_item = False
    for p in pieces:
        text = strip_step_marker(p.clean)
        if out and total + len(text) > MAX_SUMMARY_CHARS:
            break
        item = p.seg.kind == "item"
        if out:
            out.append("\n" if item or after_item else " ")
        out.append(f"- {text}" if item else text)
        after_item = item
        total += len(text) + 3
    return "".join(out)


def verbatim_summary(text: str, sec: Section, blocks: list[Block]) -> str:
    """A section that holds only a table or code (nothing to summarize in sentences) is summarized by its
    first table or code block itself, as Markdown, cut at a line boundary: its heading alone ("Workers")
    would say nothing, and readers of the summary still see rows with their column names."""
    for k in sec.blocks:
        blk = blocks[k]
        if blk.kind not in ("table", "code"):
            continue
        body = text[blk.start : blk.end]
        if len(body) <= MAX_SUMMARY_CHARS:
            return body
        if blk.kind == "code":
            return ""  # a cut code block is not code any more
        cut = body.rfind("\n", 0, MAX_SUMMARY_CHARS)
        return body[:cut] if body.count("\n", 0, cut) >= 2 else ""  # the header, its separator, a row
    return ""


def aggregate_summary(section_pieces: list[list[Piece]]) -> list[Piece]:
    """The most central sentence of each of the most central sections (or the top sentences of a lone one)."""
    every = [
        p
        for ps in section_pieces
        for p in ps
        if p.seg.kind not in _UNSUMMED and p.terms and not p.clean.endswith("?")
    ]
    if not every:
        return []
    df = doc_freq([p.terms for p in every])
    if len(section_pieces) == 1:
        return summarize_span(every, df, k=min(3, summary_size(len(every)) + 1))
    best: list[tuple[float, int, Piece]] = []
    for i, ps in enumerate(section_pieces):
        top = summarize_span(ps, df, k=1)
        if top:
            best.append((centrality(top[0].terms, df), -i, top[0]))
    best.sort(key=lambda t: (t[0], t[1]), reverse=True)
    chosen = sorted(best[:5], key=lambda t: -t[1])
    return [p for _, _, p in chosen]
