"""Grouping: the pieces of a section become atomic-unit specs.

Related consecutive sentences form groups of 2-4 (they share a key word or open with an anaphor, and stay
within MAX_GROUP_CHARS); a sentence that carries a symbolic fact stands alone; imperative runs and step
lists become one procedure with the sentence that introduces it; list items, table rows and code blocks
keep their own units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .pieces import Piece, anaphoric, overlap
from .sections import Section
from .segments import Block

MAX_GROUP_SENTENCES = 4
MAX_GROUP_CHARS = 600
MAX_LIST_GROUP = 4
LONG_ITEM_CHARS = 200  # an item this long (a changelog entry, a rule with its reasons) is a unit of its own
MAX_TABLE_ROWS = 4
MAX_STEPS = 20
MAX_DEFINITION_UNIT_CHARS = 900  # a longer definition is cut at sentences; every part keeps the term

_STEP_HINT = lazy_pattern(
    r"\b(?:steps?|how to|follow(?:ing)?|procedure|instructions|as follows)\b|^to\s", re.I
)
_INTRO_HINT = lazy_pattern(r":$|^to\s+\w+|\bfollow(?:ing)? (?:these|the) steps\b|\bas follows\b", re.I)


@dataclass(slots=True)
class Spec:
    """An atomic unit before it is rendered: its pieces and how they are read."""

    kind: str  # prose | fact | procedure | list | table | code
    pieces: list[Piece]
    intro: Piece | None = None
    header: str | None = None
    lead: Piece | None = None  # the sentence that introduces the whole list (also for its later parts)


_LABEL = lazy_pattern(r"^(?:\*\*|__|`)?(?P<label>[^:*_`.!?]{1,40}?)(?:\*\*|__|`)?\s*:\s+\S")
MIN_DEFINED_ITEM = 40  # a labelled item this long defines its label ("Memory: at least 8GB of RAM is …")


def item_label(text: str) -> str | None:
    """The label of a list item that defines it ("Python support: the project supports …" → "Python
    support"): a short phrase of at most five words before a colon or a dash."""
    m = _LABEL.match(text)
    if m is None or len(text) < MIN_DEFINED_ITEM:
        return None
    label = m["label"].strip()
    return label if label and len(label.split()) <= 5 else None


def _is_procedure_list(items: list[Piece], intro: Piece | None) -> bool:
    """Steps, not facts: most items open with an imperative, or they are numbered/marked as steps under a
    lead-in that says so. An item is judged by its first sentence ("Support for X is disabled. Use Y
    instead." is a fact with advice, not a step)."""
    leads = [p for p in items if p.seg.kind == "item"] or items
    items = leads
    n = len(items)
    imperative = sum(1 for p in items if p.imperative)
    ordered = sum(1 for p in items if p.seg.ordered) * 2 >= n
    stepped = any(p.seg.marker.lower().startswith("step") for p in items)
    hinted = intro is not None and bool(_STEP_HINT.search(intro.clean))
    if n < 2:
        return imperative == 1 and (hinted or stepped)
    return stepped or imperative * 2 >= n or (ordered and hinted) or (hinted and imperative > 0)


def _take_intro(group: list[Piece], specs: list[Spec], block: int) -> Piece | None:
    """The sentence that introduces a procedure or list: the one just before it that ends with ':' etc."""
    if group and _INTRO_HINT.search(group[-1].clean) and group[-1].triple is None:
        return group.pop()
    if specs and specs[-1].kind == "prose" and specs[-1].pieces[-1].seg.block == block - 1:
        last = specs[-1].pieces[-1]
        if last.clean.endswith(":"):
            specs[-1].pieces.pop()
            if not specs[-1].pieces:
                specs.pop()
            return last
    return None


def _sole_lead(specs: list[Spec], sec: Section, block: int) -> Piece | None:
    """The one sentence a section opens with, right before its code block ("### Setting the namespace" /
    "You can save the namespace for later commands." / the command): with nothing else before the code, the
    sentence is what the code does, as a lead-in ending with ':' would say."""
    if len(specs) != 1 or sec.blocks[:2] != [block - 1, block]:
        return None
    only = specs[0]
    if only.kind != "prose" or len(only.pieces) != 1 or only.pieces[0].seg.kind != "sentence":
        return None
    specs.pop()
    return only.pieces[0]


def _breaks(group: list[Piece], piece: Piece) -> bool:
    if not group:
        return False
    if len(group) >= MAX_GROUP_SENTENCES:
        return True
    if sum(len(p.clean) for p in group) + len(piece.clean) > MAX_GROUP_CHARS:
        return True
    if len(group) >= 2 and not anaphoric(piece):
        seen: set[str] = set()
        for p in group:
            seen |= p.terms
        return not (seen & piece.terms)
    return False


def _table_chunks(rows: list[Piece], headed: bool) -> list[list[Piece]]:
    """A table's rows in units of up to MAX_TABLE_ROWS; a long row (an option's row with its description) is
    a unit of its own, as a long list item is (the header row stays with the first rows)."""
    chunks: list[list[Piece]] = []
    for n, row in enumerate(rows):
        header_only = headed and n == 1
        if (
            chunks
            and not header_only
            and (
                len(chunks[-1]) >= MAX_TABLE_ROWS
                or len(row.clean) > LONG_ITEM_CHARS
                or len(chunks[-1][-1].clean) > LONG_ITEM_CHARS
            )
        ):
            chunks.append([])
        if not chunks:
            chunks.append([])
        chunks[-1].append(row)
    return chunks


def make_specs(sec: Section, blocks: list[Block], pieces: dict[int, list[Piece]]) -> list[Spec]:
    specs: list[Spec] = []
    for k in sec.blocks:
        blk = blocks[k]
        items = pieces.get(k, [])
        if not items:
            continue
        if blk.kind == "definition":
            _definition_specs(items, blk.title or None, specs)
        elif blk.kind == "code":
            intro = _take_intro([], specs, k) or _sole_lead(specs, sec, k)
            specs.append(Spec("code", items, intro=intro))
        elif blk.kind == "table":
            intro = _take_intro([], specs, k)
            header = items[0].clean if len(items) > 1 else None
            for i, chunk in enumerate(_table_chunks(items, header is not None)):
                specs.append(Spec("table", chunk, intro=None if i else intro, header=header if i else None))
        elif blk.kind == "list":
            intro = _take_intro([], specs, k)
            labels = [item_label(p.clean) for p in items]
            if len(items) >= 2 and sum(1 for lb in labels if lb) * 3 >= len(items) * 2:
                # "- **Python support**: …", "- Memory: …": a definition list, one unit per labelled item
                if intro is not None:
                    specs.append(Spec("prose", [intro]))
                for p, label in zip(items, labels, strict=True):
                    specs.append(Spec("definition", [p], header=label) if label else Spec("list", [p]))
            elif _is_procedure_list(items, intro):
                for i in range(0, len(items), MAX_STEPS):
                    specs.append(Spec("procedure", items[i : i + MAX_STEPS], intro=intro if i == 0 else None))
            else:
                _list_specs(items, intro, specs)
        else:
            _paragraph_specs(items, k, specs)
    return _merge_singletons(specs)


def _definition_specs(items: list[Piece], term: str | None, specs: list[Spec]) -> None:
    """A term (or an entry's lead) and its description: one unit, or parts of at most
    MAX_DEFINITION_UNIT_CHARS cut at sentences, each led by the term (an entry's later parts by its lead)."""
    part: list[Piece] = []
    lead = items[0] if items else None
    size = 0
    for p in items:
        if part and size + len(p.clean) > MAX_DEFINITION_UNIT_CHARS:
            specs.append(Spec("definition", part, header=term, lead=lead if part[0] is not lead else None))
            part, size = [], 0
        part.append(p)
        size += len(p.clean) + 1
    if part:
        specs.append(Spec("definition", part, header=term, lead=lead if part[0] is not lead else None))


def _even_parts(items: list[Piece], size: int) -> list[list[Piece]]:
    """Cut a run into the fewest parts of at most `size`, of even length (5 items: 3 + 2, not 4 + 1: a
    lone leftover item reads as a unit of its own)."""
    if not items:
        return []
    count = -(-len(items) // size)
    step = -(-len(items) // count)
    return [items[i : i + step] for i in range(0, len(items), step)]


def _list_specs(items: list[Piece], intro: Piece | None, specs: list[Spec]) -> None:
    """Runs of plain items become list units (even parts of at most MAX_LIST_GROUP, every part keeping the
    list's lead sentence as its `lead`); an item that states a symbolic fact stands alone."""
    lead = intro
    run: list[Piece] = []

    def flush() -> None:
        nonlocal intro
        for part in _even_parts(run, MAX_LIST_GROUP):
            specs.append(Spec("list", part, intro=intro, lead=lead))
            intro = None
        run.clear()

    for p in items:
        if p.triple is None and len(p.clean) < LONG_ITEM_CHARS:
            run.append(p)
            continue
        if p.triple is None:  # a long item: its own list unit, led by the list's lead-in
            if run:
                flush()
            specs.append(Spec("list", [p], intro=intro, lead=lead))
            intro = None
            continue
        if run:
            flush()
        elif intro is not None:
            specs.append(Spec("prose", [intro]))
        intro = None
        specs.append(Spec("fact", [p]))
    if run:
        flush()
    elif intro is not None:
        specs.append(Spec("prose", [intro]))


def _paragraph_specs(items: list[Piece], block: int, specs: list[Spec]) -> None:
    group: list[Piece] = []
    i, n = 0, len(items)
    while i < n:
        p = items[i]
        if p.imperative:
            j = i
            while j < n and items[j].imperative:
                j += 1
            if j - i >= 2:
                intro = _take_intro(group, specs, block)
                if group:
                    specs.append(Spec("prose", group))
                    group = []
                specs.append(Spec("procedure", items[i:j], intro=intro))
                i = j
                continue
        if p.triple is not None:
            if group:
                specs.append(Spec("prose", group))
                group = []
            specs.append(Spec("fact", [p]))
            i += 1
            continue
        if _breaks(group, p):
            specs.append(Spec("prose", group))
            group = []
        group.append(p)
        i += 1
    if group:
        specs.append(Spec("prose", group))


def _merge_singletons(specs: list[Spec]) -> list[Spec]:
    """A lone sentence joins the neighbouring paragraph's group when they share terms (not one KU per sentence)."""
    out: list[Spec] = []
    for spec in specs:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.kind == spec.kind == "prose"
            and (len(prev.pieces) == 1 or len(spec.pieces) == 1)
            and len(prev.pieces) + len(spec.pieces) <= MAX_GROUP_SENTENCES
            and spec.pieces[0].seg.block == prev.pieces[-1].seg.block + 1
            and sum(len(p.clean) for p in prev.pieces + spec.pieces) <= MAX_GROUP_CHARS
            and (overlap(prev.pieces[-1].terms, spec.pieces[0].terms) > 0 or anaphoric(spec.pieces[0]))
        ):
            prev.pieces.extend(spec.pieces)
            continue
        out.append(spec)
    return out
