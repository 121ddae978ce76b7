"""The keys a document documents as entries (a module's options, a schema's properties, a glossary's terms
written as one name): what a question that names one asks about, and, written marked as a name in a
sentence ("O(path) and O(port) are mutually exclusive parameters."), an option that sentence states though
no option syntax (`--path`) spells it."""

from __future__ import annotations

import re
from functools import lru_cache

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms
from msgspec.structs import replace

from .evidence import Sentence

WORD = lazy_pattern(r"[\w.-]+")
# the nouns that classify a named entry ("the bucket option", "the timeout parameter"): its kind, not a word of
# what is asked about it
KIND_NOUNS = (
    "option",
    "options",
    "parameter",
    "parameters",
    "setting",
    "settings",
    "key",
    "keys",
    "field",
    "fields",
    "property",
    "properties",
)
_KIND_NOUNS = "|".join(KIND_NOUNS)
_KEY = lazy_pattern(r"[A-Za-z_][\w.-]*")


def _words(question: str) -> set[str]:
    """The question's words as written: a key is matched in its own case ("-F" is not "-f")."""
    return set(WORD.findall(question))


def _entry_keys(pool: list[Sentence]) -> set[str]:
    return {s.unit.title for s in pool if s.unit.chunkType == "definition" and s.unit.title}


def documented_keys(question: str, pool: list[Sentence]) -> frozenset[str]:
    """The keys the evidence documents as entries (a definition's term that is one name: `path`, `port`),
    but those the question writes itself: the options, parameters or settings of the documents."""
    words = _words(question)
    return frozenset(k for k in _entry_keys(pool) if _KEY.fullmatch(k) and k not in words)


def marks_documented(text: str, keys: frozenset[str]) -> bool:
    """The text writes a documented key marked as a name (in code quotes, or in a markup's parentheses or
    brackets: `path`, ``path``, O(path), <path>), as documentation writes an option it refers to; the bare
    word ("Path to a file …") is English."""
    pattern = _marked_pattern(keys)
    return pattern is not None and pattern.search(text) is not None


@lru_cache(maxsize=64)
def _marked_pattern(keys: frozenset[str]) -> re.Pattern[str] | None:
    """One pattern for a key set (the evidence's documented keys, asked of every sentence of every window):
    any of the keys between a name's marks; None for no keys."""
    if not keys:
        return None
    either = "|".join(map(re.escape, sorted(keys)))
    return re.compile(rf"(?<=[`'\"(<\[])(?:{either})(?=[`'\")>\]])")


def entry_terms_written(question: str, pool: list[Sentence]) -> set[str]:
    """The terms of the definition entries of the evidence whose key the question writes as a word ("What
    does the backoff option do?" names the entry `backoff`): names the question asks about, as a capitalised
    name or an identifier is, though written in lower case."""
    words = _words(question)
    return {t for k in _entry_keys(pool) if k in words for t in terms(k)}


def classified_entries(question: str, pool: list[Sentence]) -> list[Sentence]:
    """The evidence with the kind the question gives a documented entry ("What does the bucket option do?")
    credited to that entry's sentences, as what they stand under: the question names the entry by its key
    and classifies it; the document lists it among its options by its layout (a YAML `options:` mapping, an
    options table), not by the word. Other sentences are unchanged."""
    kinds: dict[str, frozenset[str]] = {}
    for key in _entry_keys(pool):
        m = re.search(rf"(?<![\w.-]){re.escape(key)}\s+({_KIND_NOUNS})\b", question)
        if m:
            kinds[key] = frozenset(terms(m.group(1)))
    if not kinds:
        return pool
    return [
        replace(s, under=s.under | kinds[s.unit.title])
        if s.unit.chunkType == "definition" and s.unit.title in kinds
        else s
        for s in pool
    ]
