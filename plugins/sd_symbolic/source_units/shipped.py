"""The analysis sd-symbolic ships with a compact reply (protocol/SPEC.md, Compact reply): every unit of
the tree analysed as the kernel would analyse it for the kb-plugins (protocol/handoff.py `analyse_unit`),
the second half in a forked child for a large source (halves.py), so the kernel hands it on instead of
analysing the units on its own critical path after the sd stage."""

from __future__ import annotations

import msgspec
from mrpvm.protocol.cnl_compact import CompactReply
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit
from mrpvm.protocol.handoff import UnitAnalysis, analyse_unit, ship_analysis

from .halves import MIN_CHARS, cores, split_map

_ENCODE = msgspec.msgpack.Encoder().encode
_DECODE = msgspec.msgpack.Decoder(list[UnitAnalysis]).decode


def _size(unit: KnowledgeUnit) -> int:
    return len(unit.claim or unit.procedure or "") + len(unit.textBody or "")


def with_analysis(doc: CnlDocument, text_chars: int) -> CompactReply:
    """`doc` as a compact reply carrying its units' analysis (`analysis[i]` of `units[i]`)."""
    units = doc.units
    halves = text_chars >= MIN_CHARS and cores() > 1
    analysis = split_map(units, [_size(u) for u in units], analyse_unit, _ENCODE, _DECODE, halves=halves)
    shipped = ship_analysis(analysis)
    return CompactReply(result=doc.result, units=units, analyser=shipped.analyser, analysis=shipped.analysis)
