"""Words a plain-text renderer broke at a line's end ("con-" / "figuration"), joined again.

A manual page rendered to text (man, groff, nroff) is justified, and its renderer breaks long words at the
margin with a hyphen: "inter‐" / "face". It also breaks a compound at its own hyphen: "read-" / "only".
Read as prose, both became two words ("inter‐ face", "read- only"), so neither the word nor the compound
matched a question that names it. A hyphen ending a line after a lowercase letter, the next line (the same
paragraph's) opening with a lowercase letter, is such a break; which of the two it is, the document says:

1. a soft hyphen (U+00AD) is the renderer's by definition: the word is joined without it;
2. otherwise the forms the document writes elsewhere, within a line, decide: the compound with its hyphen
   ("read-only") against the word without it ("readonly"), the more frequent form wins;
3. with no such evidence (both forms unwritten, or as often), a typographic hyphen (U+2010, what groff
   writes for every hyphen, its own breaks' included) is decided by its parts: when both stand elsewhere
   in the document as words of their own ("read", "only") it is a compound's and is kept; a hyphenation
   point cuts a word into pieces that are not words ("con", "figuration"), so otherwise it is dropped. An
   ASCII hyphen without evidence is kept: a text wrapped by its author (a NEWS file, a README) breaks
   lines at its compounds' hyphens ("easily-" / "misunderstood"), not inside words.
A hyphen after a digit or a capital ("IPv6-", "UTF-"), or before a capital or a digit on the next line, is
left alone; so is a suspended hyphen before a coordinator ("pre-" / "and post-processing").

The text keeps its offsets: a segment carries its joins (segments.Segment.joins), and its piece reads the
joined words (pieces.make_piece).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .segments import Block

_BREAK = lazy_pattern(
    r"(?P<left>[^\W\d_]+)(?P<hyphen>[-\u2010\u00ad])[ \t]*\r?\n[ \t]*(?P<right>[^\W\d_][^\W_]*)"
)
_WORD = lazy_pattern(r"[^\W_]+(?:[-\u2010][^\W_]+)*")
_HYPHENS = lazy_pattern(r"[-\u2010]")
_COORDINATORS = frozenset({"and", "or", "nor", "to"})
SOFT_HYPHEN = "\u00ad"
TYPOGRAPHIC_HYPHEN = "\u2010"  # what groff writes for a hyphen, its own breaks' included

Join = tuple[int, int, bool]  # (the hyphen's offset, where the word goes on, the hyphen kept)


def line_end_joins(text: str) -> list[Join]:
    """Every line-end break of a word in the text, in order, with whether its hyphen is kept."""
    found = [
        m
        for m in _BREAK.finditer(text)
        if m["left"][-1].islower() and m["right"][0].islower() and m["right"].lower() not in _COORDINATORS
    ]
    if not found:
        return []
    words: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for w in _WORD.findall(text.lower()):
        words[w] += 1
        if "-" in w or "\u2010" in w:
            parts = _HYPHENS.split(w)
            pairs.update(f"{a}-{b}" for a, b in zip(parts, parts[1:], strict=False))
    for m in found:  # a break's own fragments are no evidence that they stand alone
        words[m["left"].lower()] -= 1
        words[m["right"].lower()] -= 1
    out: list[Join] = []
    for m in found:
        left, right = m["left"].lower(), m["right"].lower()
        if m["hyphen"] == SOFT_HYPHEN:
            keep = False
        else:
            kept, dropped = pairs[f"{left}-{right}"], words[left + right]
            if kept != dropped:
                keep = kept > dropped
            elif m["hyphen"] == TYPOGRAPHIC_HYPHEN:
                keep = len(left) > 1 and len(right) > 1 and words[left] > 0 and words[right] > 0
            else:
                keep = True
        out.append((m.start("hyphen"), m.start("right"), keep))
    return out


def attach_joins(text: str, blocks: list[Block]) -> None:
    """Give each segment the joins that fall inside it (both the hyphen and the word it continues)."""
    joins = line_end_joins(text)
    if not joins:
        return
    starts = [j[0] for j in joins]
    for blk in blocks:
        for seg in blk.segments:
            if seg.kind == "code":
                continue
            k = bisect_left(starts, seg.start)
            inside = []
            while k < len(joins) and joins[k][0] < seg.end:
                if joins[k][1] < seg.end:
                    inside.append(joins[k])
                k += 1
            if inside:
                seg.joins = tuple(inside)


def joined(text: str, a: int, b: int, joins: tuple[Join, ...]) -> str:
    """text[a:b] with its broken words joined (a kept hyphen written as "-")."""
    out: list[str] = []
    pos = a
    for hyphen, resume, keep in joins:
        if hyphen < a or resume > b:
            continue
        out.append(text[pos:hyphen])
        if keep:
            out.append("-")
        pos = resume
    out.append(text[pos:b])
    return "".join(out)
