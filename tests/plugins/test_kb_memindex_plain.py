"""The inline BM25 index (kb_common/memindex.py) of a small unit set is plain Python, and ranks exactly as
its numpy form does: the same scores (the same float operations in the same order) and the same order,
ties kept in the units' order (the numpy form's partial sort used to leave tied units in any order)."""

from __future__ import annotations

import random

import pytest
from kb_corpus import BAKING, NETWORK, intent, tree, unit
from mrpvm.plugins.kb_common import MemoryIndex, build_profile
from mrpvm.plugins.kb_common.memindex import PLAIN_MAX

UNITS = tree("network", NETWORK, "Home network guide.") + tree("baking", BAKING, "Sourdough baking guide.")
WORDS = ["lamp", "wick", "oil", "chimney", "glass", "flame", "soot", "trim", "shade", "brass", "wax", "cord"]


def synthetic(count: int, seed: int) -> list:
    """Units of a few repeated words: many equal scores (ties at a cut, the order among equals)."""
    rnd = random.Random(seed)
    return [
        unit(
            f"lamps::chunk-000::unit-{k:03d}",
            "Procedure",
            rnd.choice(WORDS),
            " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 9))) + ".",
        )
        for k in range(count)
    ]


QUESTIONS = [
    ("implement", "How do I reset the router?"),
    ("define", "What is a sourdough starter?"),
    ("implement", "How do I trim the wick of the lamp?"),
    ("explain", "Why does the chimney glass get soot?"),
]


@pytest.mark.parametrize(
    "units", [UNITS, synthetic(80, 1), UNITS + synthetic(40, 2)], ids=["guide", "ties", "mixed"]
)
@pytest.mark.parametrize("limit", [1, 3, 20, 500])
@pytest.mark.parametrize("background", [False, True])
def test_plain_and_numpy_indexes_return_the_same_hits(units, limit, background):
    plain, arrays = MemoryIndex(units, plain=True), MemoryIndex(units, plain=False)
    assert plain.plain and not arrays.plain
    extra = (lambda field, term: 2, 30) if background else (None, 0)
    for act, question in QUESTIONS:
        weights = build_profile(intent(1, act, question)).weights
        assert plain.search(weights, limit, *extra) == arrays.search(weights, limit, *extra)


def test_equal_scores_rank_in_the_units_order():
    same = [unit(f"lamps::chunk-000::unit-{k:03d}", "Procedure", "wick", "Trim the wick.") for k in range(6)]
    weights = build_profile(intent(1, "implement", "How do I trim the wick?")).weights
    for plain in (True, False):
        hits = MemoryIndex(same, plain=plain).search(weights, 4)
        assert [i for i, _ in hits] == [0, 1, 2, 3]
        assert len({s for _, s in hits}) == 1


def test_the_size_picks_the_form():
    assert MemoryIndex(synthetic(PLAIN_MAX, 3)).plain
    assert not MemoryIndex(synthetic(PLAIN_MAX + 1, 3)).plain
