"""The units sd-symbolic reads of a document written in a test, and the one that holds some words: what the
reader tests (HTML, LaTeX, roff, notebooks, C sources, stanzas) look at."""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.document import KnowledgeUnit


def atomic_units(text: str, name: str) -> list[KnowledgeUnit]:
    """The atomic units of `text` read as a source named `name` (its shape, never its name, picks the reader)."""
    return [u for u in build_tree(text, SourceMeta("s", name, "text")) if u.kuType == "atomic"]


def unit_holding(units: list[KnowledgeUnit], words: str) -> KnowledgeUnit:
    """The first unit whose claim, procedure or body writes `words`."""
    found = [u for u in units if any(words in (t or "") for t in (u.claim, u.procedure, u.textBody))]
    assert found, words
    return found[0]
