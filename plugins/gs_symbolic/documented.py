"""The keys a document documents as entries (a module's options, a schema's properties, a glossary's terms
written as one name): what a question that names one asks about, and, written marked as a name in a
sentence ("O(path) and O(port) are mutually exclusive parameters."), an option that sentence states though
no option syntax (`--path`) spells it."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms

from .evidence import Sentence

WORD = lazy_pattern(r"[\w.-]+")
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
    return any(re.search(rf"(?<=[`'\"(<\[]){re.escape(k)}(?=[`'\")>\]])", text) for k in keys)


def entry_terms_written(question: str, pool: list[Sentence]) -> set[str]:
    """The terms of the definition entries of the evidence whose key the question writes as a word ("What
    does the backoff option do?" names the entry `backoff`): names the question asks about, as a capitalised
    name or an identifier is, though written in lower case."""
    words = _words(question)
    return {t for k in _entry_keys(pool) if k in words for t in terms(k)}
