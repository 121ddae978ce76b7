"""Merge the KU trees an sd-plugin returned for the chunks of one source into one tree (DS030).

Each chunk's tree has its own source aggregate, its section composites and their atomic leaves, and the
plugin numbers sections and chunks from zero in every call. The merged tree has ONE source aggregate
(`<sourceId>::source-summary`) whose children are every chunk's top-level units (the chunks' section
composites), with sections and chunk ids renumbered across chunks so every id is unique and every
parent/child reference points at the renamed unit. The kernel reads structure only, never claim text:
the merged aggregate's claim is the chunks' summaries joined in order.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.protocol.document import KnowledgeUnit

MAX_SUMMARY_CHARS = 2000
_SECTION_ID = re.compile(r"::section-\d+$")

replace = msgspec.structs.replace


def _dedup(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _unique(candidate: str, seen: set[str], chunk_index: int) -> str:
    if candidate not in seen:
        return candidate
    base = f"{candidate}-c{chunk_index:03d}"
    out, n = base, 1
    while out in seen:
        n += 1
        out = f"{base}-{n}"
    return out


def _join_summaries(aggregates: list[KnowledgeUnit]) -> str:
    """The chunks' summaries, distinct and in order, up to MAX_SUMMARY_CHARS (whole summaries only)."""
    parts: list[str] = []
    size = 0
    bodies = list(dict.fromkeys(a.body.strip() for a in aggregates if a.body.strip()))
    for i, body in enumerate(bodies):
        if parts and size + len(body) + 1 > MAX_SUMMARY_CHARS:
            parts.append(f"(+{len(bodies) - i} more part summaries)")
            break
        parts.append(body)
        size += len(body) + 1
    return " ".join(parts)


def finish_tree(
    source_id: str, units: list[KnowledgeUnit], *, source_name: str = ""
) -> tuple[list[KnowledgeUnit], int]:
    """Stamp the source id (and name if missing) on every unit and drop references to absent ids.

    Returns the units and how many dangling references were dropped.
    """
    ids = {u.id for u in units}
    dropped = 0
    out: list[KnowledgeUnit] = []
    for u in units:
        fixed: dict[str, object] = {}
        for field in ("parentUnitIds", "childUnitIds", "derivedFromUnitIds"):
            refs = getattr(u, field)
            if not refs or (ids.issuperset(refs) and u.id not in refs and len(set(refs)) == len(refs)):
                continue  # every reference kept as it is (the usual case, tested in C)
            kept = _dedup([r for r in refs if r in ids and r != u.id])
            dropped += len(refs) - len(kept)
            if kept != refs:
                fixed[field] = kept
        if u.sourceId != source_id:
            fixed["sourceId"] = source_id
        if source_name and not u.sourceName:
            fixed["sourceName"] = source_name
        out.append(replace(u, **fixed) if fixed else u)
    return out, dropped


def merge_chunk_trees(source_id: str, trees: list[list[KnowledgeUnit]]) -> list[KnowledgeUnit]:
    """One tree from the per-chunk trees (in chunk order). A single tree is returned as it is."""
    trees = [t for t in trees if t]
    if len(trees) <= 1:
        return list(trees[0]) if trees else []
    aggregate_id = f"{source_id}::source-summary"
    seen: set[str] = {aggregate_id}
    merged: list[KnowledgeUnit] = []
    aggregates: list[KnowledgeUnit] = []
    top: list[str] = []
    sections = chunks = 0
    for k, units in enumerate(trees):
        chunk_map: dict[str, str] = {}
        id_map: dict[str, str] = {}
        local_aggregates = [u for u in units if u.kuType == "aggregate"]
        aggregates.extend(local_aggregates)
        for u in local_aggregates:
            id_map[u.id] = aggregate_id
        for u in units:
            if u.kuType == "aggregate":
                continue
            if u.chunkId not in chunk_map:
                chunk_map[u.chunkId] = f"{source_id}::chunk-{chunks:03d}"
                chunks += 1
            if u.kuType == "composite" and _SECTION_ID.search(u.id):
                new = f"{source_id}::section-{sections:03d}"
                sections += 1
            elif u.id.startswith(u.chunkId + "::"):
                new = chunk_map[u.chunkId] + u.id[len(u.chunkId) :]
            else:
                new = u.id
            new = _unique(new, seen, k)
            seen.add(new)
            id_map[u.id] = new
        # The chunk's top level: its aggregates' children, then any unit with no parent at all.
        local_top = [id_map[c] for a in local_aggregates for c in a.childUnitIds if c in id_map]
        for u in units:
            if u.kuType == "aggregate":
                continue
            parents = _dedup([id_map.get(p, p) for p in u.parentUnitIds])
            if not parents or aggregate_id in parents:
                local_top.append(id_map[u.id])
                if aggregate_id not in parents:
                    parents.append(aggregate_id)
            merged.append(
                replace(
                    u,
                    id=id_map[u.id],
                    sourceId=source_id,
                    chunkId=chunk_map[u.chunkId],
                    parentUnitIds=parents,
                    childUnitIds=_dedup([id_map.get(c, c) for c in u.childUnitIds]),
                    derivedFromUnitIds=_dedup([id_map.get(d, d) for d in u.derivedFromUnitIds]),
                )
            )
        top.extend(_dedup(local_top))
    top = _dedup(top)
    top_set = set(top)
    merged = [
        replace(u, parentUnitIds=[*u.parentUnitIds, aggregate_id])
        if u.id in top_set and aggregate_id not in u.parentUnitIds
        else u
        for u in merged
    ]
    if not aggregates:  # the plugin builds no aggregates: neither does the kernel
        return [replace(u, parentUnitIds=[p for p in u.parentUnitIds if p != aggregate_id]) for u in merged]
    first = aggregates[0]
    summary = _join_summaries(aggregates)
    starts = [a.charStart for a in aggregates if a.charStart is not None]
    ends = [a.charEnd for a in aggregates if a.charEnd is not None]
    root = replace(
        first,
        id=aggregate_id,
        sourceId=source_id,
        claim=None if first.claim is None else summary,
        procedure=summary if first.claim is None else None,
        childUnitIds=top,
        parentUnitIds=[],
        derivedFromUnitIds=[],
        textBody=None,
        hash=None,
        chunkIndex=None,
        charStart=min(starts) if starts else None,
        charEnd=max(ends) if ends else None,
        utilityNote=(first.utilityNote + " " if first.utilityNote else "")
        + f"merged from {len(trees)} chunks of the source",
    )
    return [root, *merged]
