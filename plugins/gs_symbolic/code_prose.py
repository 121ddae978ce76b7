"""An indented block of prose read as prose, when no prose states what is asked (issue 20: false refusals).

Plain-text references (RFC-style protocol notes, man pages) indent whole paragraphs, and sd-symbolic reads
an indented paragraph as a code block: "<bytes> is an integer indicating the size of the job body … This
value must be less than max-job-size (default: 2**16)." The sentence ranking reads code only when code is
asked, so "How big can a job body be by default?" was refused with that paragraph in hand: the best prose
passage named no default (answer_form.unanswered).

A block reads as prose when it is sentences: PROSE_SHARE of its tokens are words, and it holds a sentence
end (". " or a closing "."); such a block is split into its sentences, which join the prose pool. This is
done only where the prose would leave the question refused for a missing default, figure or version, so
no answer the prose gives changes.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import sentence_spans, text_terms

from .evidence import Sentence

PROSE_SHARE = 0.7  # share of a block's tokens that are words (letters only) for it to read as prose
MIN_WORDS = 8  # ... and it has this many words at least
_TOKEN = lazy_pattern(r"\S+")
_WORD = lazy_pattern(r"^[(\"'`]?[A-Za-z][a-z]*(?:[-'][a-z]+)*[)\"'`.,;:!?]*$")
_SENTENCE_END = lazy_pattern(r"[a-z)\"'`]\.(?:\s|$)")


def reads_as_prose(text: str) -> bool:
    """The block is sentences, not code: mostly words, with a sentence end."""
    tokens = _TOKEN.findall(text)
    words = sum(1 for t in tokens if _WORD.match(t))
    return words >= MIN_WORDS and words >= PROSE_SHARE * len(tokens) and bool(_SENTENCE_END.search(text))


def prose_of_code(code: list[Sentence]) -> list[Sentence]:
    """The sentences of the code blocks that read as prose, as prose sentences of their units."""
    out: list[Sentence] = []
    for block in code:
        text = re.sub(r"\s+", " ", block.text).strip()
        if not reads_as_prose(text):
            continue
        for n, (a, b) in enumerate(sentence_spans(text) or [(0, len(text))]):
            piece = text[a:b].strip()
            order = (*block.order[:2], block.order[2] * 100 + n)
            out.append(Sentence(piece, block.unit, list(text_terms(piece)), order, under=block.under))
    return out
