"""kb-balanced's dense view: all-MiniLM-L6-v2 vectors of units (plugins/sdk/embedding), beside BM25.

Mounted KB: each unit's vector is computed inside the KB write (`DenseVectors.write`, batched, reusing the
rows of units whose hash is unchanged) and kept in the plugin's artifact folder as float16 rows
(`dense.vectors`, the row file of vectors.py). A KB small enough to scan gets a dense nearest-neighbour scan
per intent; its neighbours join the lexical candidates. Inline units (the session's context) are encoded
when first judged and cached by unit hash in the warm worker, their vectors kept by text in the call's
artifacts folder (sdk embedding/kept.py: a fresh `mrpvm ask --source` of the same file reads them).

Fusion with BM25: retriever.py `_fuse` (a weighted score fusion; rank fusion was measured and dropped).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from mrpvm.plugins.sdk.embedding import DIMENSIONS, encode_kept, shared_encoder
from mrpvm.protocol.document import KnowledgeUnit

from .vectors import Layout, VectorFile

if TYPE_CHECKING:
    from mrpvm.plugins.kb_common import NewUnit, OldUnit

DENSE = Layout(
    "dense.vectors",
    "dense.meta.json",
    DIMENSIONS * 2,
    {"model": "all-MiniLM-L6-v2", "dims": DIMENSIONS, "dtype": "float16", "text": 1},
)
INGEST_BATCH = 256  # units encoded per batch at ingest
DEADLINE_RESERVE = (
    0.2  # share of an ingest call's remaining time kept back from encoding (the write after it)
)
MAX_CHARS = 600  # a unit is read by its label and the start of its statement (~128 tokens)
INLINE_CACHE = 50_000
QUERY_CACHE = 4_096  # intents' vectors kept per worker: a call reads its intent twice (candidates, scores),
# and a session's questions recur
_queries: OrderedDict[str, np.ndarray] = OrderedDict()


def unit_text(unit: KnowledgeUnit) -> str:
    """What the model reads of a unit: its term or heading, then its statement."""
    label = (unit.title or unit.heading or "").strip()
    body = " ".join((unit.body or "").split())
    text = f"{label}: {body}" if label and label.lower() not in body[:200].lower() else body
    return text[:MAX_CHARS]


def to_rows(vectors: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(vectors.astype(np.float16)).view(np.uint8)


def from_rows(rows: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(rows).view(np.float16).astype(np.float32)


def encode(texts: Sequence[str]) -> np.ndarray | None:
    encoder = shared_encoder()
    return None if encoder is None else encoder.encode(texts)


def encode_query(text: str) -> np.ndarray | None:
    """One intent's vector ([DIMENSIONS]), encoded once per worker while it stays in the cache."""
    vector = _queries.get(text)
    if vector is not None:
        _queries.move_to_end(text)
        return vector
    encoded = encode([text])
    if encoded is None:
        return None
    _queries[text] = encoded[0]
    while len(_queries) > QUERY_CACHE:
        _queries.popitem(last=False)
    return encoded[0]


class InlineVectors:
    """Vectors of inline units by unit hash (a worker keeps them across calls)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def __contains__(self, unit_hash: str) -> bool:
        return unit_hash in self._cache

    def get(self, units: Sequence[tuple[str, KnowledgeUnit]]) -> np.ndarray | None:
        """Vectors of (hash, unit) pairs, encoding the ones not seen before."""
        missing = [(h, u) for h, u in dict(units).items() if h not in self._cache]
        if missing:
            vectors = encode_kept([unit_text(u) for _, u in missing])
            if vectors is None:
                return None
            for (h, _), v in zip(missing, vectors, strict=True):
                self._cache[h] = v
            while len(self._cache) > INLINE_CACHE:
                self._cache.popitem(last=False)
        return (
            np.stack([self._cache[h] for h, _ in units]) if units else np.zeros((0, DIMENSIONS), np.float32)
        )


def dense_file(root: Path) -> VectorFile:
    return VectorFile(root, DENSE)


def write_dense(df: VectorFile, old: list[OldUnit], new: list[NewUnit], deadline: float) -> int:
    """Dense rows for the units of a KB write, reusing those of unchanged units; how many were left out.

    A large source may not fit the call's deadline: units are encoded in batches while time is left; the
    rest get zero rows (found by BM25 and HDC only, and encoded when a retrieval judges them)."""
    reuse: dict[str, np.ndarray] = {}
    if old and df.valid():
        rows, found = df.read([o.key for o in old])
        reuse = {o.hash: rows[i] for i, o in enumerate(old) if found[i]}
    fresh = [n for n in new if n.hash not in reuse]
    now = time.monotonic()
    stop = deadline if deadline == float("inf") else now + (1 - DEADLINE_RESERVE) * max(0.0, deadline - now)
    by_id: dict[str, np.ndarray] = {}
    for start in range(0, len(fresh), INGEST_BATCH):
        if time.monotonic() > stop:
            break
        batch = fresh[start : start + INGEST_BATCH]
        vectors = encode([unit_text(n.unit) for n in batch])
        if vectors is None:
            return 0  # no model: no dense view (the retrieval notes say so)
        by_id.update((n.unit.id, row) for n, row in zip(batch, to_rows(vectors), strict=True))
    if new:
        zero = np.zeros(DENSE.row, np.uint8)
        df.write([n.key for n in new], np.stack([reuse.get(n.hash, by_id.get(n.unit.id, zero)) for n in new]))
    return len(fresh) - len(by_id)
