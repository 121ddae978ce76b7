"""A documented key marked as a name in a sentence (gs_symbolic/documented.py's `marks_documented`): one
pattern per key set, built once and kept, finds what a search per key finds."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.plugins.gs_symbolic.documented import _marked_pattern, marks_documented

# keys that share a prefix, hold regex metacharacters, or are one another's part
_KEYS = ["a", "ab", "a.b", "a+b", "ab_c", "x-y", "c(d)", "b"]
_PIECES = st.sampled_from([*_KEYS, "`", "'", '"', "(", ")", "<", ">", "[", "]", " ", "O(", "``", "ba", "."])


def _per_key(text: str, keys: frozenset[str]) -> bool:
    """The search per key (the definition the single pattern must keep)."""
    return any(re.search(rf"(?<=[`'\"(<\[]){re.escape(k)}(?=[`'\")>\]])", text) for k in keys)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=8).map("".join), st.frozensets(st.sampled_from(_KEYS), max_size=4))
def test_one_pattern_finds_what_a_search_per_key_finds(text, keys):
    assert marks_documented(text, keys) == _per_key(text, keys)


def test_the_pattern_of_a_key_set_is_built_once():
    keys = frozenset({"bucket", "region"})
    assert _marked_pattern(keys) is _marked_pattern(frozenset({"region", "bucket"}))
    assert _marked_pattern(frozenset()) is None
    assert not marks_documented("O(region)", frozenset())


def test_a_marked_key_is_found_and_a_bare_word_or_a_longer_name_is_not():
    keys = frozenset({"lane", "lane_width"})
    assert marks_documented("Set `lane_width` first.", keys)
    assert marks_documented("Ignored when O(lane) is unset.", keys)
    assert not marks_documented("Each lane is painted.", keys)
    assert not marks_documented("See `lanes` and <lane_count>.", keys)
