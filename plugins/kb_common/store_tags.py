"""The tag document frequencies a store keeps (its `tagdf` table): each (field, term) of the role and acts
tags (scoring.tag_terms_for), counted over a write's removed and added units."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from mrpvm.protocol.document import KnowledgeUnit

from .scoring import tag_terms_for, tag_terms_of

CountedTags = tuple[dict[str, frozenset[str]], int]


def counted_tags(units: Iterable[KnowledgeUnit]) -> list[CountedTags]:
    """The distinct (role, acts) of `units` as tag sets with how many units carry each, in first-seen order:
    role and acts come from closed vocabularies, so a source of thousands of units has a few dozen."""
    counts = Counter((u.role, tuple(u.acts)) for u in units)
    return [(tag_terms_for(role, acts), n) for (role, acts), n in counts.items()]


def counted_stored_tags(rows: Iterable[tuple[str, str]]) -> list[CountedTags]:
    """`counted_tags` of stored rows' (role, acts as written: comma-joined)."""
    return [(tag_terms_of(role, acts), count) for (role, acts), count in Counter(rows).items()]


def tag_delta(removed: list[CountedTags], added: list[CountedTags]) -> dict[tuple[str, str], int]:
    """Each (field, term)'s document frequency moved by the units removed and added, in first-seen order
    (so the rows go in the order one pass per unit gives); terms whose count did not move are left out."""
    delta: dict[tuple[str, str], int] = {}
    for sign, group in ((-1, removed), (1, added)):
        for tags, count in group:
            for field, found in tags.items():
                for term in found:
                    delta[(field, term)] = delta.get((field, term), 0) + sign * count
    return {key: moved for key, moved in delta.items() if moved}
