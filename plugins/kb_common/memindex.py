"""In-request lexical index over inline units (current-turn and session KUs carried in the payload).

BM25 per field (DS009 weights), built per call and cached by a content hash in `Call.state`, so the repeated
calls of one session reuse it. A small index (at most `PLAIN_MAX` units: a `--source` file, a session's
units) is plain Python: importing numpy costs ~0.13 s of CPU in every worker that builds one, which in a
one-turn `mrpvm ask` was most of kb-fast's and kb-thinkingdb's start. A larger one uses numpy, imported
when it is first built (a worker that only indexes sources, `onSourceText`, never loads it). Both compute
every score with the same float operations in the same order, and both rank by a stable sort (ties keep
the units' order), so they return the same hits.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
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
PLAIN_MAX = 400  # units: up to this many, the index is plain Python (no numpy import)
Postings = tuple[list[int], list[float]]  # unit positions and term frequencies, positions ascending


class MemoryIndex:
    """BM25 over the text fields of a list of units; `search` returns (position, score) pairs."""

    def __init__(self, units: list[KnowledgeUnit], plain: bool | None = None):
        self.units = units
        self.by_id: dict[str, int] = {u.id: i for i, u in enumerate(units)}
        fields = [unit_fields(u) for u in units]
        self.fields: list[dict[str, list[str]]] = fields  # analysed terms per field (reused by plugins)
        self.terms: list[frozenset[str]] = [content_terms(f) for f in fields]
        n = len(units)
        self.size = n
        self.plain = n <= PLAIN_MAX if plain is None else plain  # plain Python, else numpy arrays
        self._postings: dict[str, dict[str, Postings]] = {}
        self._norm: dict[str, list[float]] = {}
        self._idf: dict[str, dict[str, float]] = {}
        for name in TEXT_FIELDS:
            lengths = [len(f[name]) for f in fields]
            total = sum(lengths)  # exact (integers), as numpy's mean of integral floats is
            avg = total / n if n and total else 1.0
            self._norm[name] = [K1 * (1.0 - B + B * float(length) / avg) for length in lengths]
            raw: dict[str, dict[int, int]] = {}
            for i, f in enumerate(fields):
                for term in f[name]:
                    slot = raw.setdefault(term, {})
                    slot[i] = slot.get(i, 0) + 1
            self._postings[name] = {
                term: (list(d), [float(v) for v in d.values()]) for term, d in raw.items()
            }
            self._idf[name] = {term: idf(n, len(d)) for term, d in raw.items()}
        self._arrays = None if self.plain else _as_arrays(self._postings, self._norm)
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
        if self._arrays is not None:
            return self._search_arrays(weights, limit, background, background_size)
        scores: dict[int, float] = {}
        k1 = K1 + 1.0
        for name, (docs, tf), c in self._weighted(self._postings, weights, background, background_size):
            norm = self._norm[name]
            for d, t in zip(docs, tf, strict=True):
                scores[d] = scores.get(d, 0.0) + c * t * k1 / (t + norm[d])
        found = sorted(i for i, sc in scores.items() if sc > 0)
        found.sort(key=lambda i: -scores[i])  # stable: ties keep the units' order
        return [(i, scores[i]) for i in found[:limit]]

    def _weighted(
        self,
        postings_by_field: Mapping[str, Mapping[str, tuple[Any, Any]]],
        weights: dict[str, float],
        background: Callable[[str, str], int] | None,
        background_size: int,
    ) -> Iterator[tuple[str, tuple[Any, Any], float]]:
        """Each (field, a query term's postings there, field weight x query weight x idf) the query reaches:
        the one reading of the postings that both forms of `search` score."""
        for name in TEXT_FIELDS:
            postings, idfs, fw = postings_by_field[name], self._idf[name], FIELD_WEIGHTS[name]
            for term, w in weights.items():
                hit = postings.get(term)
                if hit is None:
                    continue
                if background is not None and background_size:
                    term_idf = idf(self.size + background_size, len(hit[0]) + background(name, term))
                else:
                    term_idf = idfs[term]
                yield name, hit, fw * w * term_idf

    def _search_arrays(
        self,
        weights: dict[str, float],
        limit: int,
        background: Callable[[str, str], int] | None,
        background_size: int,
    ) -> list[tuple[int, float]]:
        """`search` with numpy (a large index): the same operations on arrays."""
        import numpy as np

        assert self._arrays is not None
        arrays, norms = self._arrays
        scores = np.zeros(self.size)
        for name, (docs, tf), c in self._weighted(arrays, weights, background, background_size):
            norm = norms[name]
            scores[docs] += c * tf * (K1 + 1.0) / (tf + norm[docs])
        found = np.flatnonzero(scores > 0)
        order = found[np.argsort(-scores[found], kind="stable")][:limit]
        return [(int(i), float(scores[i])) for i in order]

    def df(self, term: str) -> int:
        """How many units hold the term in a text field."""
        return self._df_any.get(term, 0)

    def idf(self, term: str) -> float:
        """Inverse document frequency over the units' content terms (for coverage weighting)."""
        return idf(self.size, self._df_any.get(term, 0))

    def tag_idf(self, field: str, term: str) -> float:
        return self._tag_idf.get(field, {}).get(term, idf(self.size, 0))


def _as_arrays(
    postings: dict[str, dict[str, Postings]], norms: dict[str, list[float]]
) -> tuple[dict[str, dict[str, tuple[np.ndarray, np.ndarray]]], dict[str, np.ndarray]]:
    import numpy as np

    arrays = {
        name: {
            term: (np.array(docs, dtype=np.int64), np.array(tf, dtype=np.float64))
            for term, (docs, tf) in by_term.items()
        }
        for name, by_term in postings.items()
    }
    return arrays, {name: np.array(norm, dtype=np.float64) for name, norm in norms.items()}


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
