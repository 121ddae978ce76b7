"""Candidate answer passages: runs of 1..MAX_WINDOW consecutive sentences of one unit, in reading order, and
a paragraph's last sentence that sd-symbolic moved into the code block it leads into, after the sentences of
its paragraph; the Passage a window is scored into."""

from __future__ import annotations

import msgspec
from mrpvm.protocol.document import KnowledgeUnit

from .evidence import Sentence

MAX_WINDOW = 3
# a passage of several sentences says at most this much (a single sentence may say more): an answer is a
# passage, not a page; the cap of passage retrieval (DPR's 100 words: ~600 characters) at a short answer's scale
MAX_WINDOW_CHARS = 400


def windows(pool: list[Sentence]) -> list[list[Sentence]]:
    """Runs of 1..MAX_WINDOW consecutive sentences of one unit, in reading order."""
    by_unit: dict[str, list[Sentence]] = {}
    for s in pool:
        by_unit.setdefault(s.unit.id, []).append(s)
    out: list[list[Sentence]] = []
    for sents in by_unit.values():
        sents.sort(key=lambda s: s.order)
        for i in range(len(sents)):
            for size in range(1, MAX_WINDOW + 1):
                if i + size <= len(sents) and (size == 1 or _chars(sents[i : i + size]) <= MAX_WINDOW_CHARS):
                    out.append(sents[i : i + size])
    # a paragraph's last sentence that leads into a code block ("A common convention is to put this list in
    # a requirements.txt file:") stands in the block's unit; it still finishes its paragraph (no blank line
    # between the two units: a lead-in that is a paragraph of its own, "On Windows, run:", joins nothing)
    placed = {(u[0].unit.sourceId, u[0].unit.chunkId, u[0].unit.unitIndex): u for u in by_unit.values()}
    for sents in by_unit.values():
        unit = sents[0].unit
        after = placed.get((unit.sourceId, unit.chunkId, (unit.unitIndex or 0) + 1))
        if (
            unit.unitIndex is None
            or unit.chunkType == "code"
            or after is None
            or not _adjoining(unit, after[0].unit)
        ):
            continue
        lead = after[0]
        if after[0].unit.chunkType != "code" or lead.code or not lead.text.rstrip().endswith(":"):
            continue
        out.extend([*sents[-size:], lead] for size in range(1, min(len(sents), MAX_WINDOW - 1) + 1))
    return out


def _chars(window: list[Sentence]) -> int:
    return sum(len(s.text) + 1 for s in window) - 1


def _adjoining(first: KnowledgeUnit, second: KnowledgeUnit) -> bool:
    """The second unit starts on the line after the first ends: one paragraph of the source."""
    if first.charEnd is None or second.charStart is None:
        return False
    return 0 <= second.charStart - first.charEnd <= 1


class Passage(msgspec.Struct):
    """A scored window: what passages.Judge makes of one candidate."""

    sentences: list[Sentence]
    score: float
    coverage: float
    typed: bool
    dated_by: str | None = None  # the heading that holds the answer's version or date
    meaning: float | None = None  # cosine with the question (None without the model)

    @property
    def unit_id(self) -> str:
        return self.sentences[0].unit.id

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)
