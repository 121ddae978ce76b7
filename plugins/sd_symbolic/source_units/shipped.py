"""The analysis sd-symbolic ships with a compact reply (protocol/SPEC.md, Compact reply): every unit of
the tree analysed as the kernel would analyse it for the kb-plugins (protocol/handoff.py `analyse_unit`),
in the jobs that build the tree (assemble.py `build_analysed_tree`: on both cores for a large source), so
the kernel hands it on instead of analysing the units on its own critical path after the sd stage."""

from __future__ import annotations

from mrpvm.protocol.cnl_compact import CompactReply
from mrpvm.protocol.document import CnlDocument
from mrpvm.protocol.handoff import UnitAnalysis, ship_analysis


def with_analysis(doc: CnlDocument, analysis: list[UnitAnalysis]) -> CompactReply:
    """`doc` as a compact reply carrying its units' analysis (`analysis[i]` of `doc.units[i]`)."""
    shipped = ship_analysis(analysis)
    return CompactReply(
        result=doc.result, units=doc.units, analyser=shipped.analyser, analysis=shipped.analysis
    )
