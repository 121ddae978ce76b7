"""In-request lexical index over inline units (current-turn and session KUs carried in the payload).

Built per call with numpy (BM25 per field, DS009 weights) and cached by a content hash in `Call.state`,
so the repeated calls of one session reuse it. numpy is imported when an index is first built: a worker
that only indexes sources (an ingest's kb workers, `onSourceText`) never loads it (~0.1 s of CPU at start).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
from mrpvm.protocol.digests import blake2b
from mrpvm.protocol.document import KnowledgeUnit

from .fields import FIELD_WEIGHTS, TAG_FIELDS, TEXT_FIELDS, content_terms, unit_fields
from .scoring import K1, B, idf, tag_terms

if TYPE_CHECKING:
    import numpy as np

_CACHE_KEY = "kb_common.memindex"
CACHE_SIZE = 8


class MemoryIndex:
    """BM25 over the text fields of a list of units; `search` returns (position, score) pairs."""

    def __init__(self, units: list[KnowledgeUnit]):
        import numpy as np

        self.units = units
        self.by_id: dict[str, int] = {u.id: i for i, u in enumerate(units)}
        fields = [unit_fields(u) for u in units]
        self.fields: list[dict[str, list[str]]] = fields  # analysed terms per field (reused by plugins)
        self.terms: list[frozenset[str]] = [content_terms(f) for f in fields]
        n = len(units)
        self.size = n
        self._postings: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        self._norm: dict[str, np.ndarray] = {}
        self._idf: dict[str, dict[str, float]] = {}
        for name in TEXT_FIELDS:
            lengths = np.fromiter((len(f[name]) for f in fields), dtype=np.float64, count=n)
            avg = float(lengths.mean()) if n and lengths.sum() else 1.0
            self._norm[name] = K1 * (1.0 - B + B * lengths / avg)
            raw: dict[str, dict[int, int]] = {}
            for i, f in enumerate(fields):
                for term in f[name]:
                    slot = raw.setdefault(term, {})
                    slot[i] = slot.get(i, 0) + 1
            self._postings[name] = {
                term: (np.fromiter(d.keys(), np.int64, len(d)), np.fromiter(d.values(), np.float64, len(d)))
                for term, d in raw.items()
            }
            self._idf[name] = {term: idf(n, len(d)) for term, d in raw.items()}
        df_any: dict[str, int] = {}
        for found in self.terms:
            for term in found:
                df_any[term] = df_any.get(term, 0) + 1
        self._df_any = df_any
        tag_df: dict[str, dict[str, int]] = {name: {} for name in TAG_FIELDS}
        for u in units:
            for name, found in tag_terms(u).items():
                for term in found:
                    tag_df[name][term] = tag_df[name].get(term, 0) + 1
        self._tag_idf = {name: {t: idf(n, d) for t, d in dfs.items()} for name, dfs in tag_df.items()}

    def search(
        self,
        weights: dict[str, float],
        limit: int,
        background: Callable[[str, str], int] | None = None,
        background_size: int = 0,
    ) -> list[tuple[int, float]]:
        """Top `limit` units by weighted BM25 over the text fields; only units matching a term.

        `background(field, term) -> df` and `background_size` add another corpus's statistics (the mounted
        KB) to the idf, so inline scores are on the same scale as the KB's when both are searched.
        """
        if not self.size or not weights:
            return []
        import numpy as np

        scores = np.zeros(self.size)
        for name in TEXT_FIELDS:
            postings, norm, idfs = self._postings[name], self._norm[name], self._idf[name]
            fw = FIELD_WEIGHTS[name]
            for term, w in weights.items():
                hit = postings.get(term)
                if hit is None:
                    continue
                docs, tf = hit
                if background is not None and background_size:
                    term_idf = idf(self.size + background_size, len(docs) + background(name, term))
                else:
                    term_idf = idfs[term]
                scores[docs] += (fw * w * term_idf) * tf * (K1 + 1.0) / (tf + norm[docs])
        found = np.flatnonzero(scores > 0)
        if found.size > limit:
            found = found[np.argpartition(-scores[found], limit - 1)[:limit]]
        order = found[np.argsort(-scores[found], kind="stable")]
        return [(int(i), float(scores[i])) for i in order]

    def df(self, term: str) -> int:
        """How many units hold the term in a text field."""
        return self._df_any.get(term, 0)

    def idf(self, term: str) -> float:
        """Inverse document frequency over the units' content terms (for coverage weighting)."""
        return idf(self.size, self._df_any.get(term, 0))

    def tag_idf(self, field: str, term: str) -> float:
        return self._tag_idf.get(field, {}).get(term, idf(self.size, 0))


def units_digest(units: list[KnowledgeUnit]) -> str:
    return blake2b(msgspec.msgpack.encode(units), digest_size=16).hexdigest()


def memory_index(state: dict[str, Any], units: list[KnowledgeUnit]) -> MemoryIndex:
    """The index of these units, reused from `state` (Call.state) when the same units come again."""
    cache: OrderedDict[str, MemoryIndex] = state.setdefault(_CACHE_KEY, OrderedDict())
    key = units_digest(units)
    index = cache.get(key)
    if index is None:
        index = MemoryIndex(units)
        cache[key] = index
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return index
