"""sd-symbolic's rankings without the generic helpers (session 31): the same picks as before.

`summarize.central_indices` ranks a span's sentences by a full sort where `heapq.nlargest` walked a generator,
and `roles.group_role` / `tree.majority_role` count roles in a plain dict where they built a `Counter`. The
former forms are kept here as references; every test compares the two on invented inputs, ties included.
"""

from __future__ import annotations

import heapq
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.plugins.sd_symbolic.shared import roles
from mrpvm.plugins.sd_symbolic.source_units import summarize
from mrpvm.plugins.sd_symbolic.source_units.tree import majority_role


def old_central_indices(term_sets: list[frozenset[str]], k: int, df: Counter[str] | None = None) -> list[int]:
    """`central_indices` as it was: nlargest over a generator of (score, -index)."""
    if not term_sets or k <= 0:
        return []
    df = df if df is not None else summarize.doc_freq(term_sets)
    scored = (
        (summarize.centrality(ts, df) * (summarize.LEAD_BONUS if i == 0 else 1.0), -i)
        for i, ts in enumerate(term_sets)
    )
    ranked = heapq.nlargest(min(len(term_sets), k * 4), scored)
    chosen: list[int] = []
    for _score, neg in ranked:
        i = -neg
        if any(summarize._overlap(term_sets[i], term_sets[j]) > summarize.MAX_OVERLAP for j in chosen):
            continue
        chosen.append(i)
        if len(chosen) == k:
            break
    return sorted(chosen)


def old_group_role(texts: list[str], cues: list[str | None], pasts: list[bool]) -> str:
    counted = Counter(c for c in cues if c)
    n = len(texts)
    best: str | None = None
    if counted:
        first: dict[str, int] = {}
        for i, c in enumerate(cues):
            if c:
                first.setdefault(c, i)
        best = max(counted, key=lambda r: (counted[r], -first[r]))
        if counted[best] * 2 >= n:
            return best
    if sum(pasts) * 2 >= n:
        return "Narrative"
    return best or "Description"


def old_majority_role(names: list[str]) -> str:
    counted = Counter(r for r in names if r != "Procedure")
    return counted.most_common(1)[0][0] if counted else "Description"


WORDS = ["pump", "valve", "relay", "fan", "belt", "dial", "fuse", "lamp", "motor", "gear", "seal", "hose"]
term_set = st.frozensets(st.sampled_from(WORDS), max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(term_set, max_size=40), st.integers(min_value=0, max_value=5))
def test_central_indices_pick_what_nlargest_picked(term_sets: list[frozenset[str]], k: int) -> None:
    assert summarize.central_indices(term_sets, k) == old_central_indices(term_sets, k)


@settings(max_examples=100, deadline=None)
@given(st.lists(term_set, min_size=1, max_size=12), st.lists(term_set, max_size=40), st.integers(1, 4))
def test_central_indices_with_a_wider_span_s_frequencies(
    span: list[frozenset[str]], wider: list[frozenset[str]], k: int
) -> None:
    df = summarize.doc_freq(span + wider)  # the source's frequencies, as the aggregate summary passes them
    assert summarize.central_indices(span, k, df) == old_central_indices(span, k, df)


def test_central_indices_on_a_span_longer_than_the_sort_keeps_the_heap() -> None:
    span = [frozenset(WORDS[i % 7 : i % 7 + 1 + i % 4]) for i in range(summarize._SORT_AT_MOST + 40)]
    for k in (1, 3):
        assert summarize.central_indices(span, k) == old_central_indices(span, k)


def test_central_indices_ties_go_to_the_earlier_sentence() -> None:
    same = [frozenset({"pump", "valve"})] * 2 + [frozenset({"pump", "valve", "relay"})] * 3
    assert summarize.central_indices(same, 2) == old_central_indices(same, 2)
    assert summarize.central_indices([frozenset()] * 5, 3) == old_central_indices([frozenset()] * 5, 3)


cue = st.sampled_from([None, None, "Definition", "Warning", "Constraint", "Procedure", "Example"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(cue, st.booleans()), min_size=1, max_size=12))
def test_group_role_as_with_a_counter(rows: list[tuple[str | None, bool]]) -> None:
    texts = [f"sentence {i}" for i in range(len(rows))]
    cues = [c for c, _ in rows]
    pasts = [p for _, p in rows]
    assert roles.group_role(texts, cues, pasts) == old_group_role(texts, cues, pasts)


def test_group_role_ties_go_to_the_first_cue() -> None:
    texts = ["a", "b", "c", "d"]
    assert (
        roles.group_role(texts, ["Warning", "Definition", "Definition", "Warning"], [False] * 4) == "Warning"
    )
    assert roles.group_role(texts, [None] * 4, [True, True, False, False]) == "Narrative"
    assert roles.group_role(texts, [None, "Example", None, None], [False] * 4) == "Example"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["Description", "Procedure", "Warning", "Narrative", "Definition"]), max_size=15)
)
def test_majority_role_as_most_common(names: list[str]) -> None:
    assert majority_role(names) == old_majority_role(names)


def test_majority_role_ties_go_to_the_first_seen() -> None:
    assert majority_role(["Warning", "Description", "Description", "Warning"]) == "Warning"
    assert majority_role(["Procedure", "Procedure"]) == "Description"
    assert majority_role([]) == "Description"
