"""Pieces: a segment of the source with what the tree builder reads from it (keys, role cue, triple, mood)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.patterns import PRO_VERB, lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, collapse

from ..shared.roles import is_imperative, is_past, sentence_role
from ..shared.triples import Triple, extract_triple
from .hyphenation import joined
from .segments import Block, Segment
from .shortcodes import render_shortcodes

_ANAPHORA = word_set(
    """he she it they this that these those his her its their such there then also however moreover
    furthermore additionally but and so thus therefore meanwhile later afterwards here both each instead
    otherwise similarly likewise still yet"""
)
_FIRST_WORD = lazy_pattern(r"[A-Za-z']+")
INLINE_MARKUP = lazy_pattern(r"`|\*\*|__")  # code spans and strong emphasis ("`kb-fast`" names kb-fast)


@dataclass(slots=True)
class Piece:
    """A segment with what the tree builder needs to know about it."""

    seg: Segment
    clean: str
    terms: frozenset[str]
    cue: str | None = None
    triple: Triple | None = None
    imperative: bool = False
    past: bool = False
    # `anaphoric(piece)` once known (grouping, the section's and the source's summaries all ask it)
    refers_back: bool | None = field(default=None, compare=False, repr=False)


def clean(text: str) -> str:
    """Whitespace collapsed to single spaces (a path wrapped after a slash joined back)."""
    return collapse(text)


# Sphinx's version directives (".. versionadded:: 3.4"), read as the sentence Sphinx renders for them
_VERSION_DIRECTIVE = lazy_pattern(
    r"\.\.\s+(versionadded|versionchanged|deprecated)::\s*([^\s,]+)[ \t]*", re.I
)
_VERSION_SAYS = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
}


def _version_directive(m: re.Match[str]) -> str:
    return f"{_VERSION_SAYS[m.group(1).lower()]} {m.group(2).rstrip('.')}. "


def rendered(text: str) -> str:
    """Prose as its markup renders it: a Sphinx version directive as its sentence ("Added in version 3.4."),
    a Hugo shortcode as what it shows (shortcodes.py: "{{<required>}}" as "(required)")."""
    if "{{" in text:
        text = render_shortcodes(text)
    return _VERSION_DIRECTIVE.sub(_version_directive, text).rstrip() if ".." in text else text


_COMMENT_MARKS = lazy_pattern(r"(?m)^[ \t]*#+")
_TOKEN = lazy_pattern(r"[^\W_]+(?:[-'][^\W_]+)*")


def _keys(wordset: set[str]) -> frozenset[str]:
    """Cheap matching keys: content words with a plural 's' dropped (grouping and summaries, not retrieval).
    Short model codes ("r5", "x9") are kept: they are what tells two otherwise parallel sentences apart."""
    return frozenset(
        {w[:-1] if w[-1] == "s" and len(w) > 3 else w for w in wordset - STOPWORDS if len(w) > 2 or _code(w)}
    )


def _code(word: str) -> bool:
    return len(word) == 2 and word.isalnum() and not word.isdigit() and not word.isalpha()


def make_piece(text: str, seg: Segment) -> Piece:
    start = seg.body_start if seg.body_start >= 0 else seg.start
    raw = joined(text, start, seg.end, seg.joins) if seg.joins else text[start : seg.end]
    if seg.comment:  # a configuration file's comment, its lines' `#` marks left out
        raw = _COMMENT_MARKS.sub(" ", raw)
    if seg.kind == "code":
        return Piece(seg, raw, frozenset())
    body = rendered(clean(raw)) if seg.cells is None else "| " + " | ".join(seg.cells) + " |"
    if seg.kind == "term":
        wordset = set(_TOKEN.findall(body.lower().replace("’", "'")))
        return Piece(seg, body, _keys(wordset))
    wordset = set(_TOKEN.findall(body.lower().replace("’", "'")))
    piece = Piece(seg, body, _keys(wordset))
    piece.cue = sentence_role(body, wordset)
    piece.past = is_past(body, wordset)
    if seg.kind in ("sentence", "item"):
        piece.imperative = is_imperative(body)
        if not piece.imperative or seg.kind == "sentence":
            piece.triple = extract_triple(body)
    return piece


def piece_fields(p: Piece) -> tuple:
    """A piece without its segment (halves.py sends a block's pieces so; the parent has the segments)."""
    return (p.clean, p.terms, p.cue, p.triple, p.imperative, p.past)


def pieces_from_fields(blocks: list[Block], sent: list[list[tuple]]) -> list[list[Piece]]:
    """The pieces of the last len(sent) blocks from their `piece_fields`, on the blocks' own segments."""
    first = len(blocks) - len(sent)
    return [
        [Piece(seg, *fields) for seg, fields in zip(blocks[first + i].segments, block, strict=True)]
        for i, block in enumerate(sent)
    ]


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


# A definite description with no complement to say of what ("The default is 256.", "By default, …",
# "Defaults to 8."): a bridging reference to what the text just described, like a pronoun.
_BRIDGING = lazy_pattern(
    r"^(?:(?:the|its|their)\s+(?:default|maximum|minimum|limit|range|value|unit)s?(?:\s+value)?"
    r"(?!\s+(?:of|for)\b)\s+(?:is|are|was|were)\b|by\s+default\b|defaults?\s+(?:to|is)\b)",
    re.I,
)


def anaphoric(piece: Piece) -> bool:
    """The piece opens with a word or phrase that refers back to what precedes it."""
    known = piece.refers_back
    if known is None:
        m = _FIRST_WORD.match(piece.clean)
        known = piece.refers_back = (
            (bool(m) and m.group(0).lower() in _ANAPHORA)
            or _BRIDGING.match(piece.clean) is not None
            or PRO_VERB.match(piece.clean) is not None
        )
    return known


def strip_step_marker(text: str) -> str:
    """A step's text without its "Step 3:" marker."""
    return re.sub(r"^(?:step\s+\d{1,3}[:.)]?\s*)", "", text, flags=re.I)
