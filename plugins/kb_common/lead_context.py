"""The sentence a list's lead-in continues, selected with the lead-in and an entry of its list (issue 20).

sd-symbolic keeps a list's lead-in sentence ("The pattern can contain these placeholders:") as a unit of its
own, before the list's entries; when the lead-in ends a paragraph, the paragraph's earlier sentences are
another unit ("… the `name_format` setting can hold a pattern that is used to build the name."). Those
sentences name what the lead-in's "the pattern" is, so they are the context of every entry of the list, as
a heading is. When the selection holds an entry and the lead-in of its list, the unit the lead-in continues
in the same paragraph (both prose, adjacent in the source: no blank line, no markup between) is selected with them, one
unit beyond the budget: the entry is then read under the name its lead-in's paragraph writes
(gs_symbolic.named)."""

from __future__ import annotations

from .candidates import Candidate, Views
from .fields import is_evidence

PROSE = "paragraph"  # both are sentences of a paragraph: not a list item, a table, code or a data line
ADJACENT = 1  # characters between the two units in the source: one space or line break, no blank line


def with_lead_context(selected: list[Candidate], views: Views) -> list[Candidate]:
    """`selected`, and after each lead-in with a selected entry of its list the unit the lead-in continues."""
    chosen = {c.id for c in selected}
    out: list[Candidate] = []
    for c in selected:
        out.append(c)
        context = _continued(c, selected, views)
        if context is not None and context.id not in chosen:
            chosen.add(context.id)
            out.append(context)
    return out


def _continued(lead: Candidate, selected: list[Candidate], views: Views) -> Candidate | None:
    unit = lead.unit
    if unit.kuType != "atomic" or unit.chunkType != PROSE or not unit.body.rstrip().endswith(":"):
        return None
    if len(unit.parentUnitIds) != 1 or unit.charStart is None:
        return None
    parent = views.lookup(unit.parentUnitIds).get(unit.parentUnitIds[0])
    if parent is None:
        return None
    siblings = parent.unit.childUnitIds
    if unit.id not in siblings:
        return None
    at = siblings.index(unit.id)
    after = views.lookup(siblings[at + 1 :])
    entries: set[str] = set()
    for ident in siblings[at + 1 :]:  # the list's entries: the definitions one level under the lead-in
        entry = after.get(ident)
        title = entry.unit.sectionTitle or "" if entry is not None else ""
        if (
            entry is None
            or entry.unit.chunkType != "definition"
            or not title.startswith(f"{unit.sectionTitle} > ")
        ):
            break
        entries.add(ident)
    if at == 0 or not entries & {c.id for c in selected}:
        return None
    before = views.lookup([siblings[at - 1]]).get(siblings[at - 1])
    if before is None or not is_evidence(before.unit) or before.unit.chunkType != PROSE:
        return None
    prev = before.unit
    if (
        prev.sectionTitle != unit.sectionTitle
        or prev.charEnd is None
        or unit.charStart - prev.charEnd > ADJACENT
    ):
        return None
    context = Candidate(before, lead.lexical)
    context.score = lead.score
    return context
