"""Binary hyperdimensional encoding of KUs (DS024) and baseline-shifted similarity, with numpy.

Each field of a unit becomes one binary hypervector: every feature (a term's character trigrams with
boundary marks, and the term itself; terms are the kb family's stemmed content words) sets one bit (a
fixed random code per feature, from a hash), and a field bundles its features by OR. Role and acts are symbols: each name sets `SYMBOL_BITS`
bits. Two vectors are compared by their bit overlap minus the overlap two random vectors of the same
densities would have (e = |a||b|/D), over the same shift of the largest possible overlap:
(overlap - e) / (sqrt(|a||b|) - e), clipped to [0, 1]: 0 for unrelated content, 1 for identical.
A unit's association with a query is the DS024 weighted sum over fields:
role 0.20, topic 0.35, claim 0.35, acts 0.10.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from mrpvm.plugins.kb_common import body_text
from mrpvm.plugins.kb_common.fields import analyse, topic_text
from mrpvm.protocol.digests import blake2b
from mrpvm.protocol.document import KnowledgeUnit

TOPIC_DIM = 1024
CLAIM_DIM = 2048
SYMBOL_DIM = 512
SYMBOL_BITS = 24
MAX_TERMS = 120  # a longer text is encoded from its first MAX_TERMS terms (bounded density)
QUERY_CACHE = 1024  # query vectors kept per worker (query_vectors)
COLUMN_CHUNK = 128  # bit columns unpacked at once by a scan (128 x units bytes at most)
FIELD_WEIGHTS: dict[str, float] = {"role": 0.20, "topic": 0.35, "claim": 0.35, "acts": 0.10}

_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
_HAS_BITCOUNT = hasattr(np, "bitwise_count")


def _h(feature: str) -> int:
    return int.from_bytes(blake2b(feature.encode(), digest_size=8).digest(), "little")


@lru_cache(maxsize=500_000)
def term_codes(term: str) -> np.ndarray:
    """Stable 64-bit codes of a term's features: its boundary-marked character trigrams and the term itself."""
    marked = f"#{term}#"
    grams = sorted({marked[i : i + 3] for i in range(len(marked) - 2)})
    codes = np.array([_h("g:" + g) for g in grams] + [_h("t:" + term)], dtype=np.uint64)
    codes.setflags(write=False)
    return codes


def encode_terms(terms: list[str], dim: int) -> np.ndarray:
    """One packed binary hypervector (uint8[dim/8]) bundling the terms' features by OR."""
    return encode_many([terms], dim)[0]


def encode_many(texts: list[list[str]], dim: int) -> np.ndarray:
    """Packed hypervectors of many term lists at once: uint8[n, dim/8] (dim a power of two)."""
    n = len(texts)
    bits = np.zeros(n * dim, dtype=bool)
    parts: list[np.ndarray] = []
    mask = np.uint64(dim - 1)
    for i, found in enumerate(texts):
        if not found:
            continue
        codes = np.concatenate([term_codes(t) for t in found[:MAX_TERMS]]) & mask
        parts.append(codes.astype(np.int64) + i * dim)
    if parts:
        bits[np.concatenate(parts)] = True
    return np.packbits(bits.reshape(n, dim), axis=1)


@lru_cache(maxsize=256)
def symbol_vector(names: tuple[str, ...]) -> np.ndarray:
    """A bundle of symbols (role or act names): SYMBOL_BITS bits per name."""
    bits = np.zeros(SYMBOL_DIM, dtype=bool)
    for name in names:
        code = _h("y:" + name.lower())
        for _ in range(SYMBOL_BITS):
            code = (code * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
            bits[(code >> 33) % SYMBOL_DIM] = True
    packed = np.packbits(bits)
    packed.setflags(write=False)
    return packed


def popcount(packed: np.ndarray) -> np.ndarray:
    """Set bits per row of a packed (n, bytes) array (or of one vector)."""
    if _HAS_BITCOUNT and packed.shape[-1] % 8 == 0:
        words = np.ascontiguousarray(packed).view(np.uint64)
        return np.bitwise_count(words).sum(axis=-1, dtype=np.int64)
    return _POP8[packed].sum(axis=-1, dtype=np.int64)


def similarity(
    matrix: np.ndarray, query: np.ndarray, dim: int, counts: np.ndarray | None = None
) -> np.ndarray:
    """Baseline-shifted overlap of each row with the query, clipped to [0, 1].

    `counts` (the rows' popcounts) may be passed when the matrix is reused across queries.
    """
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    nq = float(popcount(query))
    if nq == 0:
        return np.zeros(len(matrix))
    overlap = popcount(matrix & query)
    na = (popcount(matrix) if counts is None else counts).astype(np.float64)
    expected = na * nq / dim
    # chance overlap removed from both the overlap and its maximum: identical -> 1, independent -> 0
    denom = np.maximum(np.sqrt(na * nq) - expected, 1e-9)
    return np.clip((overlap - expected) / denom, 0.0, 1.0)


def pairwise(matrix: np.ndarray, dim: int) -> np.ndarray:
    """Baseline-shifted similarity between every pair of rows (a small matrix, e.g. MMR candidates)."""
    bits = np.unpackbits(matrix, axis=1).astype(np.float32)
    overlap = bits @ bits.T
    counts = np.diag(overlap).astype(np.float64)
    prod = np.outer(counts, counts)
    expected = prod / dim
    denom = np.maximum(np.sqrt(prod) - expected, 1e-9)
    return np.clip((overlap - expected) / denom, 0.0, 1.0)


def unit_texts(unit: KnowledgeUnit) -> tuple[list[str], list[str]]:
    """The terms encoded for a unit's topic and claim fields (the kb family's analysis, `unit_fields`)."""
    return analyse(topic_text(unit)), analyse(body_text(unit))


class QueryVectors:
    """A query's field vectors: topic and claim from its words, role from the act's roles, acts from the act."""

    __slots__ = ("topic", "claim", "role", "acts")

    def __init__(self, words: list[str], roles: tuple[str, ...], act: str):
        self.topic = encode_terms(words, TOPIC_DIM)
        self.claim = encode_terms(words, CLAIM_DIM)
        self.role = symbol_vector(tuple(roles))
        self.acts = symbol_vector((act,))


@lru_cache(maxsize=QUERY_CACHE)
def query_vectors(words: tuple[str, ...], roles: tuple[str, ...], act: str) -> QueryVectors:
    """A query's vectors, kept for the next use of the same terms (a call reads its query twice: candidates
    and scores; the vectors are never written)."""
    q = QueryVectors(list(words), roles, act)
    q.topic.setflags(write=False)
    q.claim.setflags(write=False)
    return q


def association(
    q: QueryVectors, topics: np.ndarray, claims: np.ndarray, units: list[KnowledgeUnit]
) -> np.ndarray:
    """DS024 weighted field similarity of each unit (rows of topics/claims) to the query."""
    if not units:
        return np.zeros(0)
    s_topic = similarity(topics, q.topic, TOPIC_DIM)
    s_claim = similarity(claims, q.claim, CLAIM_DIM)
    s_role = _symbol_similarity([(u.role,) for u in units], q.role)
    s_acts = _symbol_similarity([tuple(u.acts) for u in units], q.acts)
    w = FIELD_WEIGHTS
    return w["role"] * s_role + w["topic"] * s_topic + w["claim"] * s_claim + w["acts"] * s_acts


def _symbol_similarity(names: list[tuple[str, ...]], query: np.ndarray) -> np.ndarray:
    """`similarity` of each symbol bundle to the query, computed once per distinct bundle (a pool's units
    share a handful of roles and act sets; a row's similarity does not depend on the other rows)."""
    distinct = list(dict.fromkeys(names))
    values = similarity(np.stack([symbol_vector(n) for n in distinct]), query, SYMBOL_DIM)
    at = {n: i for i, n in enumerate(distinct)}
    return values[[at[n] for n in names]]


# --------------------------------------------------------------------------- many units at once


Vectors = tuple[np.ndarray, np.ndarray]  # packed (topic, claim)


def encode_fields(fields: list[tuple[list[str], list[str]]]) -> Vectors:
    """Topic and claim hypervectors of many units from their analysed (topic, body) terms."""
    return encode_many([t for t, _ in fields], TOPIC_DIM), encode_many([b for _, b in fields], CLAIM_DIM)


class Matrix:
    """Packed vectors of many units, kept also as bit columns (one bitmap over the units per dimension).

    A query vector is sparse (tens of bits), so its overlap with every unit is the sum of the bit columns
    of its set bits: O(query bits x units / 8) instead of O(units x dim).
    """

    __slots__ = ("n", "topics", "claims", "topic_counts", "claim_counts", "topic_cols", "claim_cols")

    def __init__(self, topics: np.ndarray, claims: np.ndarray):
        self.n = len(topics)
        self.topics, self.claims = topics, claims
        self.topic_counts, self.claim_counts = popcount(topics), popcount(claims)
        self.topic_cols, self.claim_cols = _columns(topics), _columns(claims)

    def _similarity(self, cols: np.ndarray, counts: np.ndarray, query: np.ndarray, dim: int) -> np.ndarray:
        bits = np.flatnonzero(np.unpackbits(query))
        if not len(bits):
            return np.zeros(self.n)
        overlap = np.zeros(self.n, dtype=np.int32)
        for start in range(0, len(bits), COLUMN_CHUNK):  # one unpack a chunk of columns, bounded memory
            chunk = np.unpackbits(cols[bits[start : start + COLUMN_CHUNK]], axis=1, count=self.n)
            overlap += chunk.sum(axis=0, dtype=np.int32)
        nq = float(len(bits))
        na = counts.astype(np.float64)
        expected = na * nq / dim
        denom = np.maximum(np.sqrt(na * nq) - expected, 1e-9)
        return np.clip((overlap - expected) / denom, 0.0, 1.0)

    def neighbours(self, q: QueryVectors, k: int) -> np.ndarray:
        """Rows with the highest topic+claim association to the query (positive only)."""
        partial = 0.35 * self._similarity(self.topic_cols, self.topic_counts, q.topic, TOPIC_DIM)
        partial += 0.35 * self._similarity(self.claim_cols, self.claim_counts, q.claim, CLAIM_DIM)
        k = min(k, len(partial))
        top = np.argpartition(-partial, k - 1)[:k] if len(partial) > k else np.arange(len(partial))
        return top[partial[top] > 0]


def _columns(packed: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """Transpose packed rows (n, dim/8) into packed bit columns (dim, ceil(n/8))."""
    n, width = packed.shape
    cols = np.zeros((width * 8, (n + 7) // 8), dtype=np.uint8)
    for start in range(0, n, chunk):  # chunks of a multiple of 8 rows keep the byte boundaries aligned
        bits = np.unpackbits(packed[start : start + chunk], axis=1)
        cols[:, start // 8 : (start + len(bits) + 7) // 8] = np.packbits(bits.T, axis=1)
    return cols
