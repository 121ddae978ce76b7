"""Word lists written as plain text: `word_set("a b c")` is the frozenset of its whitespace-separated words."""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())
