"""Footnotes named by what cites them: the Topic of a Markdown footnote's unit ([^7]) is what its citing
units are about (tree.py calls it on a source's atomic units)."""

from __future__ import annotations

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.protocol.document import KnowledgeUnit

from .pieces import INLINE_MARKUP

_FOOTNOTE_LABEL = lazy_pattern(r"^\[\^[^\]\s]{1,20}\]$")
_MAX_CITERS = 4


def name_footnotes(atomics: list[KnowledgeUnit]) -> list[KnowledgeUnit]:
    """A footnote is about what cites it ("Binaries produced on these systems …" under [^7], cited by the
    table row of linux-armv7l): its Topic and Subject become the citing rows' first cells, or the citing
    units' topics, so a question naming the row finds the footnote and reads "these systems" as them."""
    notes = {u.title: u for u in atomics if u.title and _FOOTNOTE_LABEL.match(u.title)}
    if not notes:
        return []
    citers: dict[str, list[str]] = {label: [] for label in notes}
    for unit in atomics:
        body = unit.claim or unit.procedure or ""
        if "[^" not in body or unit.title in notes:
            continue
        for line in body.split("\n"):
            for label in notes:
                if label in line:
                    cells = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else []
                    name = INLINE_MARKUP.sub("", cells[0]).strip() if cells and cells[0] else unit.topic
                    if name and name not in citers[label]:
                        citers[label].append(name)
    renamed: list[KnowledgeUnit] = []
    for label, names in citers.items():
        if names:
            note = notes[label]
            note.topic = ", ".join(names[:_MAX_CITERS])
            note.subject = None
            renamed.append(note)
    return renamed
