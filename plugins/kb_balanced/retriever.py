"""kb-balanced's retrieval: BM25 candidates + HDC/VSA associative neighbours, fused, then MMR reranking.

Candidates: the lexical top of each memory view, plus the HDC nearest neighbours of the query among the
inline units and, when the mounted KB is small enough to scan (<= SCAN_LIMIT units), among the KB's units.
Larger KBs (pool mode): the association reranks the lexical pool and the level neighbours, so the cost
stays bounded whatever the KB size.
Fusion: normalised score fusion, LEX_WEIGHT on BM25 (relative to the best), the rest on the association.
Diversity: MMR over the evidence that passed the relative cut, similarity = max(term Jaccard, HDC claim
similarity); a candidate too similar to one already chosen (>= DUPLICATE_SIM) is dropped.

Encoded vectors are cached per unit hash: in the KB's artifact database (table `hdc`, maintained inside
every write transaction, re-encoding only units whose hash changed) and in `Call.state` for inline units.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

import numpy as np
from mrpvm.plugins.kb_common import (
    Candidate,
    GoalProfile,
    IntentResult,
    MemoryIndex,
    NewUnit,
    OldUnit,
    Retriever,
    SelectionConfig,
    Views,
    jaccard,
    unit_hash,
)
from mrpvm.plugins.sdk import Call

from .hdc import (
    CLAIM_DIM,
    TOPIC_DIM,
    QueryVectors,
    association,
    encode_many,
    pairwise,
    popcount,
    unit_texts,
)

SCAN_LIMIT = 50_000  # KBs up to this many units get a full associative scan (a few ms); larger: pool mode
HDC_NEIGHBOURS = 12  # associative candidates added per scanned view
LEX_WEIGHT = 0.7
ASSOC_NORM_FLOOR = 0.3  # association is normalised by max(best association, this) to avoid inflating noise
ASSOC_FLOOR = 0.3  # a candidate with no query term must reach this association to be evidence
MMR_LAMBDA = 0.6
MMR_POOL = 3  # MMR looks at the best MMR_POOL x budget candidates
DUPLICATE_SIM = 0.8
INLINE_CACHE = 200_000  # encoded inline units kept per worker (by unit hash)

_TABLE = "CREATE TABLE IF NOT EXISTS hdc(id TEXT PRIMARY KEY, hash TEXT NOT NULL, topic BLOB NOT NULL, claim BLOB NOT NULL)"

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
        for j in bits:
            overlap += np.unpackbits(cols[j], count=self.n)
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


class _CallVectors:
    """What one call knows: vectors by unit id, the inline matrix, the KB scan matrix."""

    def __init__(self) -> None:
        self.by_id: dict[str, Vectors] = {}
        self.inline: Matrix | None = None
        self.kb_scan: tuple[list[str], Matrix] | None = None


class BalancedRetriever(Retriever):
    evidence_label = "bm25+hdc"

    def __init__(self, plugin_id: str, config: SelectionConfig | None = None):
        super().__init__(plugin_id, config)
        self.last_write: tuple[int, int] = (0, 0)  # (encoded, reused) of the last KB write
        self._call = _CallVectors()

    # ------------------------------------------------------------------ KB vector cache

    def store_hook(self):
        return self._write_vectors

    def _write_vectors(self, db, old: list[OldUnit], new: list[NewUnit]) -> None:
        db.execute(_TABLE)
        reuse: dict[str, tuple[bytes, bytes]] = {}
        old_ids = [o.id for o in old]
        for start in range(0, len(old_ids), 500):
            chunk = old_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for h, topic, claim in db.execute(
                f"SELECT hash, topic, claim FROM hdc WHERE id IN ({marks})", chunk
            ):
                reuse[h] = (topic, claim)
            db.execute(f"DELETE FROM hdc WHERE id IN ({marks})", chunk)
        fresh = [n for n in new if n.hash not in reuse]
        encoded: dict[str, tuple[bytes, bytes]] = {}
        if fresh:
            topics, claims = encode_fields([(n.fields["topic"], n.fields["body"]) for n in fresh])
            encoded = {n.unit.id: (topics[i].tobytes(), claims[i].tobytes()) for i, n in enumerate(fresh)}
        rows = []
        for n in new:
            t, c = encoded.get(n.unit.id) or reuse[n.hash]
            rows.append((n.unit.id, n.hash, t, c))
        db.executemany("INSERT OR REPLACE INTO hdc VALUES(?,?,?,?)", rows)
        self.last_write = (len(fresh), len(new) - len(fresh))

    def _kb_vectors(self, views: Views, ids: list[str]) -> dict[str, Vectors]:
        store = views.store
        out: dict[str, Vectors] = {}
        if store is None or not ids:
            return out
        try:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT id, topic, claim FROM hdc WHERE id IN ({marks})"
                for ident, topic, claim in store.db.execute(sql, chunk):
                    out[ident] = (np.frombuffer(topic, np.uint8), np.frombuffer(claim, np.uint8))
        except Exception:  # an index written without the table: the caller encodes on the fly
            return out
        return out

    def _kb_scan(self, call: Call, views: Views) -> tuple[list[str], Matrix] | None:
        store = views.store
        if store is None or not 0 < store.size <= SCAN_LIMIT:
            return None
        cache: dict[str, Any] = call.state.setdefault("kb_balanced.scan", {})
        key = (str(store.root), store.generation)
        if cache.get("key") == key:
            return cache["value"]
        try:
            rows = store.db.execute("SELECT id, topic, claim FROM hdc").fetchall()
        except Exception:
            return None
        value = None
        if rows:
            topics = np.frombuffer(b"".join(r[1] for r in rows), np.uint8).reshape(len(rows), -1)
            claims = np.frombuffer(b"".join(r[2] for r in rows), np.uint8).reshape(len(rows), -1)
            value = ([r[0] for r in rows], Matrix(topics, claims))
        cache["key"], cache["value"] = key, value
        return value

    # ------------------------------------------------------------------ inline vector cache

    def _inline_matrix(self, call: Call, index: MemoryIndex) -> Matrix:
        mats: weakref.WeakKeyDictionary = call.state.setdefault(
            "kb_balanced.inline", weakref.WeakKeyDictionary()
        )
        found = mats.get(index)
        if found is not None:
            return found
        cache: OrderedDict[str, Vectors] = call.state.setdefault("kb_balanced.hv", OrderedDict())
        hashes = [unit_hash(u) for u in index.units]
        missing = [i for i, h in enumerate(hashes) if h not in cache]
        if missing:
            topics, claims = encode_fields(
                [(index.fields[i]["topic"], index.fields[i]["body"]) for i in missing]
            )
            for row, i in enumerate(missing):
                cache[hashes[i]] = (topics[row], claims[row])
        for h in hashes:
            cache.move_to_end(h)
        while len(cache) > INLINE_CACHE:
            cache.popitem(last=False)
        pairs = [cache[h] for h in hashes]
        found = Matrix(np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs]))
        mats[index] = found
        return found

    # ------------------------------------------------------------------ hooks

    def prepare(self, call: Call, views: Views) -> None:
        self._call = _CallVectors()
        if views.inline is not None and views.inline.size:
            self._call.inline = self._inline_matrix(call, views.inline)
        self._call.kb_scan = self._kb_scan(call, views)

    @staticmethod
    def _query(profile: GoalProfile) -> QueryVectors:
        terms = [t for t, w in profile.weights.items() if w >= 0.5] or list(profile.weights)
        return QueryVectors(terms, profile.roles, profile.act)

    def generate(self, call: Call, views: Views, profile: GoalProfile) -> dict[str, Candidate]:
        pool = super().generate(call, views, profile)
        q = self._query(profile)
        if self._call.inline is not None and views.inline is not None:
            for pos in self._call.inline.neighbours(q, HDC_NEIGHBOURS):
                entry = views.inline_entry(int(pos))
                pool.setdefault(entry.unit.id, Candidate(entry, 0.0))
        if self._call.kb_scan is not None:
            ids, matrix = self._call.kb_scan
            wanted = [ids[int(i)] for i in matrix.neighbours(q, HDC_NEIGHBOURS)]
            for ident, entry in views.lookup(i for i in wanted if i not in pool).items():
                pool[ident] = Candidate(entry, 0.0)
        return pool

    def _vectors(self, views: Views, cands: list[Candidate]) -> Vectors:
        known = self._call.by_id
        kb_missing = [c.id for c in cands if c.id not in known and c.origin == "kb"]
        known.update(self._kb_vectors(views, kb_missing))
        inline, matrix = views.inline, self._call.inline
        for c in cands:
            if c.id in known:
                continue
            pos = inline.by_id.get(c.id) if inline is not None and c.origin == "inline" else None
            if pos is not None and matrix is not None:
                known[c.id] = (matrix.topics[pos], matrix.claims[pos])
            else:
                t, cl = encode_fields([unit_texts(c.unit)])
                known[c.id] = (t[0], cl[0])
        return np.stack([known[c.id][0] for c in cands]), np.stack([known[c.id][1] for c in cands])

    def rescore(self, call: Call, views: Views, profile: GoalProfile, pool: dict[str, Candidate]) -> None:
        cands = list(pool.values())
        if not cands:
            return
        topics, claims = self._vectors(views, cands)
        assoc = association(self._query(profile), topics, claims, [c.unit for c in cands])
        best_lex = max(c.lexical for c in cands)
        norm = max(float(assoc.max()), ASSOC_NORM_FLOOR)
        for c, a in zip(cands, assoc, strict=True):
            c.assoc = float(a)
            if best_lex > 0:
                c.score = best_lex * (LEX_WEIGHT * c.lexical / best_lex + (1 - LEX_WEIGHT) * c.assoc / norm)
            else:
                c.score = c.assoc

    def admit(self, c: Candidate) -> bool:
        return c.match > 0 or c.assoc >= ASSOC_FLOOR

    def diversify(
        self, call: Call, views: Views, profile: GoalProfile, ranked: list[Candidate], budget: int
    ) -> list[Candidate]:
        """MMR: relevance (score relative to the best) against the closest already-chosen unit."""
        ranked = ranked[: max(MMR_POOL * budget, 10)]
        if len(ranked) <= 1:
            return ranked
        _, claims = self._vectors(views, ranked)
        hv = pairwise(claims, CLAIM_DIM)
        top = ranked[0].score or 1.0
        chosen: list[int] = []
        left = list(range(len(ranked)))
        while left and len(chosen) < budget:
            best_i, best_v = -1, -np.inf
            for i in left:
                sim = 0.0
                if chosen:
                    sim = max(
                        float(hv[i, chosen].max()),
                        max(jaccard(ranked[i].terms, ranked[j].terms) for j in chosen),
                    )
                if sim >= DUPLICATE_SIM:
                    continue
                value = MMR_LAMBDA * ranked[i].score / top - (1 - MMR_LAMBDA) * sim
                if value > best_v:
                    best_i, best_v = i, value
            if best_i < 0:
                break
            chosen.append(best_i)
            left.remove(best_i)
        return [ranked[i] for i in chosen]

    def notes(self, views: Views, profile: GoalProfile, result: IntentResult) -> list[str]:
        best = max((c.assoc for c in result.evidence), default=0.0)
        scan = "scan" if self._call.kb_scan is not None else "pool"
        return [f"hdc best association {best:.2f} ({scan} mode)", f"mmr lambda {MMR_LAMBDA}"]
