"""Extractive summaries: pick the most central sentences of a span (linear in its size).

A sentence is central when it contains many terms that recur across the span; the score is normalised by
sqrt(length) so long sentences do not win by size alone, the lead sentence gets a small bonus, and a
candidate too similar to one already chosen is skipped.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from math import sqrt

LEAD_BONUS = 1.15
MAX_OVERLAP = 0.6
_SORT_AT_MOST = 256  # candidates ranked by a full sort; a longer span (a one-section source) keeps the heap


def doc_freq(term_sets: Sequence[frozenset[str]]) -> Counter[str]:
    return Counter(chain.from_iterable(term_sets))


def centrality(terms: frozenset[str], df: Counter[str]) -> float:
    if not terms:
        return 0.0
    return (sum(map(df.__getitem__, terms)) - len(terms)) / sqrt(len(terms) + 1)


def central_indices(term_sets: Sequence[frozenset[str]], k: int, df: Counter[str] | None = None) -> list[int]:
    """Indices (in text order) of up to k central, mutually non-redundant sentences."""
    if not term_sets or k <= 0:
        return []
    df = df if df is not None else doc_freq(term_sets)
    scored = [(centrality(ts, df) * (LEAD_BONUS if i == 0 else 1.0), -i) for i, ts in enumerate(term_sets)]
    n = min(len(scored), k * 4)
    # the same ranks either way (nlargest is sorted(reverse=True)[:n]; every (score, -i) is distinct): a
    # section's few sentences are sorted in C, where nlargest walked a generator in Python (~6x slower)
    ranked = sorted(scored, reverse=True)[:n] if len(scored) <= _SORT_AT_MOST else heapq.nlargest(n, scored)
    chosen: list[int] = []
    for _score, neg in ranked:
        i = -neg
        ts = term_sets[i]
        if any(_overlap(ts, term_sets[j]) > MAX_OVERLAP for j in chosen):
            continue
        chosen.append(i)
        if len(chosen) == k:
            break
    return sorted(chosen)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def summary_size(n_sentences: int) -> int:
    """How many sentences summarise a span of n sentences."""
    if n_sentences <= 3:
        return 1
    if n_sentences <= 12:
        return 2
    return 3
