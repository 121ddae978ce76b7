"""Candidates and the per-call view over the two memory views (inline units, persistent KB)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from mrpvm.plugins.sdk.text import file_title
from mrpvm.protocol.document import KnowledgeUnit

from .fields import analyse, body_text, level_of
from .memindex import MemoryIndex

if TYPE_CHECKING:
    from .store import KBStore


class Entry(NamedTuple):
    """A unit with its content terms and where it lives ("inline" or "kb"; `key`: its store key)."""

    unit: KnowledgeUnit
    terms: frozenset[str]
    origin: str
    key: int | None = None


class Candidate:
    """A unit being judged for one intent. `score` is the utility every stage reads and updates."""

    __slots__ = (
        "unit",
        "terms",
        "origin",
        "key",
        "lexical",
        "assoc",
        "score",
        "match",
        "matched",
        "related",
        "why",
    )

    def __init__(self, entry: Entry, lexical: float = 0.0):
        self.unit = entry.unit
        self.terms = entry.terms
        self.origin = entry.origin
        self.key = entry.key  # the store key of a KB unit (None inline)
        self.lexical = lexical  # weighted BM25 (text fields)
        self.assoc = 0.0  # associative / symbolic evidence a plugin adds (HDC similarity, proof membership)
        self.score = lexical
        self.match = 0.0  # idf-weighted query terms this unit contains
        self.matched: frozenset[str] = frozenset()  # the intent's content terms this unit contains
        self.related: frozenset[str] = (
            frozenset()
        )  # the intent's subject terms (content + context) it contains
        self.why: list[str] = []

    @property
    def id(self) -> str:
        return self.unit.id

    @property
    def level(self) -> int:
        return level_of(self.unit)

    @property
    def size(self) -> int:
        return len(body_text(self.unit))

    def __repr__(self) -> str:
        return f"Candidate({self.id!r}, score={self.score:.3f}, lexical={self.lexical:.3f}, assoc={self.assoc:.3f})"


class Views:
    """The memory views of one call: inline units (current turn + session) and the mounted KB."""

    def __init__(self, inline: MemoryIndex | None, store: KBStore | None):
        self.inline = inline
        self.store = store
        self._cache: dict[str, Entry | None] = {}
        self._idf: dict[str, float] = {}
        self._titles: dict[str, frozenset[str]] | None = None

    @property
    def size(self) -> int:
        return (self.inline.size if self.inline else 0) + (self.store.size if self.store else 0)

    def inline_entry(self, position: int) -> Entry:
        assert self.inline is not None
        entry = Entry(self.inline.units[position], self.inline.terms[position], "inline")
        self._cache[entry.unit.id] = entry
        return entry

    def search(self, weights: dict[str, float], limit: int, floor: float = 0.0) -> list[tuple[Entry, float]]:
        """Lexical top `limit` of each view, merged (a unit present in both keeps its best score).

        `floor`: hits scoring below this fraction of their view's best are not fetched (they cannot pass a
        later relative cut), which saves record reads on a large KB.
        """
        found: dict[str, tuple[Entry, float]] = {}
        if self.inline is not None:
            store = self.store if self.store is not None and self.store.size else None
            background = store.doc_freq if store is not None else None
            size = store.size if store is not None else 0
            for pos, score in self.inline.search(weights, limit, background, size):
                entry = self.inline_entry(pos)
                found[entry.unit.id] = (entry, score)
        if self.store is not None:
            hits = self.store.search(weights, limit)
            if hits and floor > 0:
                hits = [(k, sc) for k, sc in hits if sc >= floor * hits[0][1]]
            rows = self.store.fetch(k for k, _ in hits)
            for key, score in hits:
                row = rows.get(key)
                if row is None:
                    continue
                entry = Entry(row.unit, row.terms, "kb", row.key)
                self._cache.setdefault(row.unit.id, entry)
                prev = found.get(row.unit.id)
                if prev is None or prev[1] < score:
                    found[row.unit.id] = (entry, score)
        return sorted(found.values(), key=lambda pair: -pair[1])

    def aggregates(self, limit: int) -> list[Entry]:
        """Source summaries from both views (inline first)."""
        out: list[Entry] = []
        if self.inline is not None:
            out += [self.inline_entry(i) for i, u in enumerate(self.inline.units) if u.kuType == "aggregate"]
        if self.store is not None and len(out) < limit:
            out += [Entry(r.unit, r.terms, "kb", r.key) for r in self.store.aggregates(limit - len(out))]
        return out[:limit]

    def lookup(self, ids: Iterable[str]) -> dict[str, Entry]:
        """Units by id from either view (parents, children); unknown ids are absent."""
        out: dict[str, Entry] = {}
        missing: list[str] = []
        for ident in ids:
            if ident in self._cache:
                entry = self._cache[ident]
                if entry is not None:
                    out[ident] = entry
                continue
            pos = self.inline.by_id.get(ident) if self.inline is not None else None
            if pos is not None:
                out[ident] = self.inline_entry(pos)
            else:
                missing.append(ident)
        if missing and self.store is not None:
            rows = self.store.fetch_ids(missing)
            for ident in missing:
                row = rows.get(ident)
                entry = Entry(row.unit, row.terms, "kb", row.key) if row is not None else None
                self._cache[ident] = entry
                if entry is not None:
                    out[ident] = entry
        return out

    def source_titles(self) -> dict[str, frozenset[str]]:
        """Source id -> the terms of its file title ("tar.txt" -> tar): the title of a document that has no
        other, which every unit of it stands under (read once per call)."""
        if self._titles is None:
            names: dict[str, str] = {}
            if self.inline is not None:
                names.update((u.sourceId, u.sourceName) for u in self.inline.units if u.sourceName)
            if self.store is not None and self.store.size:
                names.update((ident, name) for ident, name, _ in self.store.sources() if name)
            self._titles = {ident: frozenset(analyse(file_title(name))) for ident, name in names.items()}
        return self._titles

    def idf(self, term: str) -> float:
        """A term's importance: its largest idf over the views (rare anywhere means distinctive)."""
        value = self._idf.get(term)
        if value is None:
            values = []
            if self.inline is not None and self.inline.size:
                values.append(self.inline.idf(term))
            if self.store is not None and self.store.size:
                values.append(self.store.idf(term))
            value = max(values) if values else 1.0
            self._idf[term] = value
        return value

    def df(self, term: str) -> int:
        """How many units of the views hold the term (in a text field; the store's most frequent field)."""
        count = self.inline.df(term) if self.inline is not None and self.inline.size else 0
        if self.store is not None and self.store.size:
            count += self.store.text_df(term)
        return count

    def known(self, term: str) -> bool:
        """Whether any view holds a unit with this term (in its topic, heading or body)."""
        if self.inline is not None and self.inline.size and self.inline.df(term) > 0:
            return True
        if self.store is not None and self.store.size:
            return self.store.holds(term)
        return False

    def tag_idf(self, origin: str, field: str, term: str) -> float:
        if origin == "kb" and self.store is not None:
            return self.store.tag_idf(field, term)
        if self.inline is not None:
            return self.inline.tag_idf(field, term)
        return 1.0
