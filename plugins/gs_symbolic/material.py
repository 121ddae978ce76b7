"""What gs-symbolic answers from and what it answers with: the evidence as sentences (and code, and proof
chains from kb-thinkingdb's notes), and one question's outcome."""

from __future__ import annotations

import msgspec
from mrpvm.protocol.document import KnowledgeUnit

from .evidence import Sentence, split_units
from .proofs import Chain, parse_notes


class Outcome(msgspec.Struct):
    markdown: str
    sources: list[str]
    confidence: str
    evidence: str = ""
    kind: str = "sentences"
    supported: bool = True  # False: the best candidate, reported as weak (`insufficient`), not `success`


class Material(msgspec.Struct):
    """Everything the solver may use for one intent."""

    units: list[KnowledgeUnit]
    pool: list[Sentence]  # prose: sentences, list items, table rows
    chains: list[Chain] = msgspec.field(default_factory=list)
    code: list[Sentence] = msgspec.field(default_factory=list)  # code blocks and data lines

    @property
    def by_id(self) -> dict[str, KnowledgeUnit]:
        return {u.id: u for u in self.units}


def prepare(units: list[KnowledgeUnit], notes: str) -> Material:
    pieces = split_units(units)
    prose = [s for s in pieces if not s.code]
    code = [s for s in pieces if s.code]
    return Material(units, prose, parse_notes(notes) if notes else [], code)
