"""Pieces: a segment of the source with what the tree builder reads from it (keys, role cue, triple, mood)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

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


# a comment's marks: a configuration file's `#`, a C-family source's `//`, `/*`, a leading `*` and `*/`
_COMMENT_MARKS = lazy_pattern(r"(?m)^[ \t]*(?:#+|//+!?|/\*+!?|\*+(?=[ \t]|$))|\*+/[ \t]*$")
_TOKEN = lazy_pattern(r"[^\W_]+(?:[-'][^\W_]+)*")


def _keys(wordset: set[str]) -> frozenset[str]:
    """Cheap matching keys: content words with a plural 's' dropped (grouping and summaries, not retrieval).
    Short model codes ("r5", "x9") are kept: they are what tells two otherwise parallel sentences apart."""
    return frozenset(
        {w[:-1] if w[-1] == "s" and len(w) > 3 else w for w in wordset - STOPWORDS if len(w) > 2 or _code(w)}
    )


def _code(word: str) -> bool:
    return len(word) == 2 and word.isalnum() and not word.isdigit() and not word.isalpha()


# What a piece reads from its text, by (segment kind, text): its keys, role cue, past tense, mood and triple.
Reading = tuple[frozenset[str], str | None, bool, bool, "Triple | None"]


def make_piece(text: str, seg: Segment, seen: dict[tuple[str, str], Reading] | None = None) -> Piece:
    """The piece of `seg`. `seen`: what earlier pieces of the same kind and text read (a reference manual
    repeats a quarter of its sentences: "Returns: {boolean}", "Added in: v10.0.0"), filled as it goes; a
    piece's reading depends on its kind and text alone, and every part of it is immutable, so it is shared."""
    start = seg.body_start if seg.body_start >= 0 else seg.start
    raw = joined(text, start, seg.end, seg.joins) if seg.joins else text[start : seg.end]
    if seg.comment:  # a comment's sentence (a configuration file's, a C source's): its marks left out
        raw = _COMMENT_MARKS.sub(" ", raw)
    if seg.kind == "code":
        return Piece(seg, raw, frozenset())
    body = rendered(clean(raw)) if seg.cells is None else "| " + " | ".join(seg.cells) + " |"
    key = (seg.kind, body)
    reading = seen.get(key) if seen is not None else None
    if reading is None:
        reading = read_piece(seg.kind, body)
        if seen is not None:
            seen[key] = reading
    keys, cue, past, imperative, triple = reading
    return Piece(seg, body, keys, cue, triple, imperative, past)


def read_piece(kind: str, body: str) -> Reading:
    """What the tree builder reads from a piece's text (`make_piece`): keys; for all but a term, the role
    cue and past tense; for a sentence or list item, the imperative mood and, unless it is an item in the
    imperative, the triple."""
    wordset = set(_TOKEN.findall(body.lower().replace("’", "'")))
    if kind == "term":
        return _keys(wordset), None, False, False, None
    imperative, triple = False, None
    if kind in ("sentence", "item"):
        imperative = is_imperative(body)
        if not imperative or kind == "sentence":
            triple = extract_triple(body)
    return _keys(wordset), sentence_role(body, wordset), is_past(body, wordset), imperative, triple


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
    return _anaphoric(piece.clean)


@lru_cache(maxsize=8192)  # grouping, the section's and the source's summaries and the group's topic ask it
def _anaphoric(clean: str) -> bool:
    m = _FIRST_WORD.match(clean)
    return (
        (m is not None and m.group(0).lower() in _ANAPHORA)
        or _BRIDGING.match(clean) is not None
        or PRO_VERB.match(clean) is not None
    )


_STEP_MARKER = lazy_pattern(r"^(?:step\s+\d{1,3}[:.)]?\s*)", re.I)


def strip_step_marker(text: str) -> str:
    """A step's text without its "Step 3:" marker."""
    return _STEP_MARKER.sub("", text)
