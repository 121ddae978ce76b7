"""kb-balanced's dense view: all-MiniLM-L6-v2 vectors of units (plugins/sdk/embedding), beside BM25.

Mounted KB: each unit's vector is computed inside the KB write (`write_dense`, batched, reusing the rows
of units whose hash is unchanged) and kept in the plugin's artifact folder as float16 rows (`dense.vectors`,
the row file of vectors.py). A KB small enough to scan gets a dense nearest-neighbour scan per intent; its
neighbours join the lexical candidates. Inline units (the session's context) are encoded when first judged
and cached by unit hash in the warm worker, their vectors kept by text in the call's artifacts folder
(sdk embedding/kept.py: a fresh `mrpvm ask --source` of the same file reads them).

A large source is not encoded in one call (~100 units/s on a quiet 2-core machine, estimated from CPU time;
~50 before session 30: a 2 MB document's 6,471 units took 340-370 s of a loaded one): one onSourceText
call encodes ENCODE_AT_LEAST units, then more while ENCODE_BUDGET_S lasts (always within the call's deadline). The units left get zero rows — "pending": a
real vector has norm 1, so an all-zero row is the one mark of a unit not encoded yet — and the call
answers `partial`; the kernel then keeps the source owed to kb-balanced and offers it again
(knowledge/index_ledger.py: the next ingest into the KB, a daemon's index watch, `mrpvm kb check NAME`,
with `--complete` until whole), and each offer reuses the rows already encoded and encodes the next share, until the call
answers `success`. Meanwhile a retrieval encodes the pending candidates it judges (like inline units) and
its notes say how many units wait.

Fusion with BM25: retriever.py `_fuse` (a weighted score fusion; rank fusion was measured and dropped).

How the view reads (session 30, perf48; bench/ISSUE22_FIGURES.md): a unit's first MAX_TOKENS word pieces,
the length all-MiniLM-L6-v2 was trained at (its model card: "the sequence length was limited to 128
tokens"; sentence-transformers' 256 reads more than it learned from), 7.6% fewer tokens on the 1.1 MB corpus
and a dense-only MRR of the answer unit on real+dev 0.734 -> 0.744; a code block (24% of the corpus's
tokens) to MAX_CODE_CHARS: its label and first lines, the call it shows (the model, trained on sentences,
reads the rest as word-piece soup that pulls every code vector toward one "code" direction; BM25 still
indexes all of it): 9% fewer tokens again, MRR 0.730 float / 0.735 int8 against 0.744 / 0.731, and the
eval's answers unchanged. A KB's rows are encoded at ingest at
the first-stage precision (quantize.FIRST_STAGE, int8: ~1.5x the units per CPU second); intents and inline
units (encoded when a turn needs them) in float, and a retrieval reads its RESCORE_TOP nearest stored rows
again in float (`nearest`; the inline cache then keeps them), so int8's error (cosine ~0.992 to float) moves
which units are candidates, never the order of the near ties at the top (a unit and its section can be
0.01 apart: the golden paraphrase test).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import numpy as np
from mrpvm.plugins.sdk.embedding import DIMENSIONS, available, encode_kept, shared_encoder
from mrpvm.plugins.sdk.embedding.quantize import FIRST_STAGE, precision
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
INGEST_BATCH = 64  # units encoded per batch at ingest (the budget is checked between batches)
ENCODE_BUDGET_S = 20.0  # encoding time one onSourceText call spends at most (the rest is pending) ...
ENCODE_AT_LEAST = 512  # ... once it has encoded this many units: a source this small is always encoded in one
# call (whatever the machine's load; the eval documents have 54-374 units), and each offer makes progress
DEADLINE_RESERVE = (
    0.2  # share of an ingest call's remaining time kept back from encoding (the write after it)
)
MAX_CHARS = 600  # a unit is read by its label and the start of its statement ...
MAX_TOKENS = 128  # ... to this many word pieces: the length the model was trained at (module docstring)
MAX_CODE_CHARS = 160  # a code block: its label and first lines (~64 word pieces; module docstring)
INLINE_CACHE = 50_000
QUERY_CACHE = 4_096  # intents' vectors kept per worker: a call reads its intent twice (candidates, scores),
# and a session's questions recur
_queries: OrderedDict[str, np.ndarray] = OrderedDict()


def unit_text(unit: KnowledgeUnit) -> str:
    """What the model reads of a unit: its term or heading, then its statement (a code block: its first
    lines)."""
    label = (unit.title or unit.heading or "").strip()
    body = " ".join((unit.body or "").split())
    text = f"{label}: {body}" if label and label.lower() not in body[:200].lower() else body
    return text[: MAX_CODE_CHARS if unit.unitType == "code" else MAX_CHARS]


def to_rows(vectors: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(vectors.astype(np.float16)).view(np.uint8)


def from_rows(rows: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(rows).view(np.float16).astype(np.float32)


RESCORE_TOP = 6  # stored rows of first-stage precision read again in float per intent (the nearest)


def ingest_precision() -> str:
    """The precision a KB's rows are encoded at (quantize.precision: MRPVM_EMBED_PRECISION, else FIRST_STAGE)."""
    return precision(FIRST_STAGE)


def encode(texts: Sequence[str]) -> np.ndarray | None:
    """A KB write's vectors, at `ingest_precision()`."""
    encoder = shared_encoder(ingest_precision())
    return None if encoder is None else encoder.encode(texts, MAX_TOKENS)


def nearest(cosines: np.ndarray, at: np.ndarray) -> list[int]:
    """The positions `at` of the RESCORE_TOP highest cosines (of stored rows) to read again in float; none
    when the rows are float already."""
    if ingest_precision() == precision() or not len(at):
        return []
    k = min(RESCORE_TOP, len(at))
    return [int(at[i]) for i in np.argsort(-cosines, kind="stable")[:k]]


def encode_query(text: str) -> np.ndarray | None:
    """One intent's vector ([DIMENSIONS]): from the worker's cache, else the call's kept vectors (a sibling
    worker or an earlier `mrpvm ask` encoded it), else encoded once."""
    vector = _queries.get(text)
    if vector is not None:
        _queries.move_to_end(text)
        return vector
    encoded = encode_kept([text], max_tokens=MAX_TOKENS)
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
            vectors = encode_kept([unit_text(u) for _, u in missing], max_tokens=MAX_TOKENS)
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


def pending_rows(rows: np.ndarray) -> np.ndarray:
    """Which rows hold no vector yet (all zero: a unit vector never is)."""
    return ~rows.any(axis=1) if len(rows) else np.zeros(0, bool)


class DenseWrite(msgspec.Struct, kw_only=True):
    """What one KB write did to the dense view: units encoded now, reused, and left pending."""

    encoded: int = 0
    reused: int = 0
    pending: int = 0
    model: bool = True  # False: the model is not installed (no dense view at all, nothing pending)


def write_dense(df: VectorFile, old: list[OldUnit], new: list[NewUnit], deadline: float) -> DenseWrite:
    """Dense rows for the units of a KB write: the rows of unchanged units that hold a vector are reused,
    the others encoded in batches: ENCODE_AT_LEAST units, then more until ENCODE_BUDGET_S has passed (and
    while the call's deadline allows); the units left get zero rows (pending)."""
    reuse: dict[str, np.ndarray] = {}
    if old and df.valid():
        rows, found = df.read([o.key for o in old])
        done = found & ~pending_rows(rows)
        reuse = {o.hash: rows[i] for i, o in enumerate(old) if done[i]}
    # by length: each batch's texts are of similar length, so little of the compute goes to padding
    # (1.09x the tokens on the 2 MB document, against 1.2x in document order by batches of 64)
    # one vector per distinct text: units that read alike (a repeated list item, a heading's summary equal
    # to its one sentence) are encoded once (6.5% of the 1.1 MB corpus's units)
    texts = {n.unit.id: unit_text(n.unit) for n in new if n.hash not in reuse}
    fresh = [n for n in new if n.hash not in reuse]
    distinct = sorted(dict.fromkeys(texts.values()), key=len)
    by_text: dict[str, np.ndarray] = {}
    now = time.monotonic()
    budget = now + ENCODE_BUDGET_S
    hard = deadline if deadline == float("inf") else now + (1 - DEADLINE_RESERVE) * max(0.0, deadline - now)
    model = True
    for start in range(0, len(distinct), INGEST_BATCH):
        clock = time.monotonic()
        if clock > hard or (len(by_text) >= ENCODE_AT_LEAST and clock > budget):
            break
        batch = distinct[start : start + INGEST_BATCH]
        vectors = encode(batch)
        if (
            vectors is None
        ):  # not installed (no dense view: the retrieval notes say so), or not loaded in time
            model = available()
            break
        by_text.update(zip(batch, to_rows(vectors), strict=True))
    by_id = {n.unit.id: by_text[texts[n.unit.id]] for n in fresh if texts[n.unit.id] in by_text}
    if new:
        zero = np.zeros(DENSE.row, np.uint8)
        df.write([n.key for n in new], np.stack([reuse.get(n.hash, by_id.get(n.unit.id, zero)) for n in new]))
    pending = len(fresh) - len(by_id) if model else 0
    return DenseWrite(encoded=len(by_id), reused=len(new) - len(fresh), pending=pending, model=model)
