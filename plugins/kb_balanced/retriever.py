"""kb-balanced's retrieval: BM25 candidates + HDC/VSA associative neighbours, fused, then MMR reranking.

Candidates: the lexical top of each memory view, plus the HDC nearest neighbours of the query among the
inline units and, when the mounted KB is small enough to scan (<= SCAN_LIMIT units), among the KB's units.
Larger KBs (pool mode): the association reranks the lexical pool only, so the cost stays bounded
whatever the KB size.
Fusion: normalised score fusion, LEX_WEIGHT on BM25 (relative to the best), the rest on the association
above the pool's mean (a second baseline shift, over the candidates), on a fixed scale. With the
sentence-embedding model installed (dense.py), the dense view takes the association's place in the score
(`_fuse`); HDC still adds candidates and admits misspelt ones.
Diversity: MMR over the evidence that passed the relative cut (mmr.py).

HDC matrices and encoding live in hdc.py, the dense view's rows in dense.py (a scanned KB's, kept per
generation: dense_scan.py). Encoded vectors are cached per unit hash: in the KB's artifact folder (`vectors.py`: a memory-mapped row per
unit key, written inside every KB write, re-encoding only units whose hash changed) and in `Call.state`
for inline units.
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
    unit_hash,
)
from mrpvm.plugins.sdk import Call
from mrpvm.plugins.sdk.embedding import for_call

from . import mmr
from .dense import (
    DenseWrite,
    InlineVectors,
    dense_file,
    encode_query,
    from_rows,
    nearest,
    pending_rows,
    write_dense,
)
from .dense_scan import DenseScan, generation_dense_file
from .hdc import (
    Matrix,
    QueryVectors,
    Vectors,
    association,
    encode_fields,
    query_vectors,
    unit_texts,
)
from .vectors import ROW, VectorFile, join, root_of, split

SCAN_LIMIT = 50_000  # KBs up to this many units get a full associative scan (a few ms); larger: pool mode
HDC_NEIGHBOURS = 12  # associative candidates added per scanned view
LEX_WEIGHT = 0.7
ASSOC_SCALE = 0.5  # association this far above the pool's mean earns the full associative share
ASSOC_FLOOR = 0.3  # a candidate with no query term must reach this association to be evidence
INLINE_CACHE = 200_000  # encoded inline units kept per worker (by unit hash)
DENSE_NEIGHBOURS = 12  # dense nearest neighbours added per scanned KB
INLINE_ENCODE = 16  # uncached inline candidates encoded per intent (the best by BM25)
DENSE_WEIGHT = 0.5  # share of the fused score that comes from the dense view (measured: retriever docstring)
DENSE_FLOOR = 0.35  # a dense neighbour or a candidate with no query term needs this cosine to be evidence


class _CallVectors:
    """What one call knows: vectors by unit id, the inline matrix, the KB scan matrix."""

    def __init__(self) -> None:
        self.by_id: dict[str, Vectors] = {}
        self.inline: Matrix | None = None
        self.kb_scan: tuple[list[str], Matrix] | None = None
        self.vectors: VectorFile | None = None
        self.dense: VectorFile | None = None
        self.dense_scan: DenseScan | None = None
        self.cosine: dict[str, float] = {}  # candidate id -> cosine with the current intent
        self.dense_by_id: dict[str, np.ndarray] = {}  # candidate id -> its dense vector
        self.dense_pending = 0  # KB units without a stored vector yet (dense.py): the scanned KB's, else
        # the judged candidates'


class BalancedRetriever(Retriever):
    evidence_label = "bm25+hdc"

    def __init__(self, plugin_id: str, config: SelectionConfig | None = None):
        super().__init__(plugin_id, config)
        self.last_write: tuple[int, int] = (0, 0)  # (encoded, reused) of the last KB write
        self._call = _CallVectors()
        self._inline_dense = InlineVectors()
        self._deadline = float("inf")  # of the current onSourceText call (dense encoding stops before it)
        self.dense_write = DenseWrite()  # of the current onSourceText call

    # ------------------------------------------------------------------ KB vector cache

    def store_hook(self):
        return self._write_vectors

    def _write_vectors(self, db, old: list[OldUnit], new: list[NewUnit]) -> None:
        vf = VectorFile(root_of(db))
        reuse: dict[str, np.ndarray] = {}
        if old and vf.valid():
            rows, found = vf.read([o.key for o in old])
            reuse = {o.hash: rows[i] for i, o in enumerate(old) if found[i]}
        fresh = [n for n in new if n.hash not in reuse]
        out = np.zeros((len(new), ROW), np.uint8)
        if fresh:
            encoded = join(*encode_fields([(n.fields["topic"], n.fields["body"]) for n in fresh]))
            by_id = {n.unit.id: encoded[i] for i, n in enumerate(fresh)}
        for i, n in enumerate(new):
            out[i] = reuse[n.hash] if n.hash in reuse else by_id[n.unit.id]
        vf.write([n.key for n in new], out)
        self.last_write = (len(fresh), len(new) - len(fresh))
        self._write_dense(db, old, new)

    def _write_dense(self, db, old: list[OldUnit], new: list[NewUnit]) -> None:
        self.dense_write = write_dense(dense_file(root_of(db)), old, new, self._deadline)

    def on_source_text(self, call: Call):
        for_call(call.time_left())
        self._deadline = call.deadline
        self.dense_write = DenseWrite()
        doc = super().on_source_text(call)
        done = self.dense_write
        if done.pending and doc.result.status == "success":
            # searchable now (BM25, HDC); `partial` keeps the source owed, so the kernel offers it again
            # and the next call encodes the next share (dense.py)
            doc.result.status = "partial"
            doc.result.result = (
                f"{doc.result.result}; dense view: {done.encoded} units encoded, {done.reused} kept, "
                f"{done.pending} pending (encoded when the kernel offers the source again)"
            )
        return doc

    def _vector_file(self, call: Call, views: Views) -> VectorFile | None:
        if views.store is None:
            return None
        files: dict[str, VectorFile] = call.state.setdefault("kb_balanced.vectors", {})
        key = str(views.store.root)
        vf = files.get(key)
        if vf is None:
            vf = files[key] = VectorFile(views.store.root)
        return vf

    def _kb_vectors(self, cands: list[Candidate]) -> dict[str, Vectors]:
        vf = self._call.vectors
        if vf is None or not cands:
            return {}
        rows, found = vf.read([c.key or 0 for c in cands])
        topics, claims = split(rows)
        return {c.id: (topics[i], claims[i]) for i, c in enumerate(cands) if found[i]}

    def _kb_scan(self, call: Call, views: Views) -> tuple[list[str], Matrix] | None:
        store, vf = views.store, self._call.vectors
        if store is None or vf is None or not 0 < store.size <= SCAN_LIMIT:
            return None
        cache: dict[str, Any] = call.state.setdefault("kb_balanced.scan", {})
        key = (str(store.root), store.generation)
        if cache.get("key") == key:
            return cache["value"]
        pairs = store.db.execute("SELECT key, id FROM units").fetchall()
        value = None
        rows, found = vf.read([k for k, _ in pairs])
        if pairs and found.all():
            value = ([i for _, i in pairs], Matrix(*split(rows)))
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

    def _dense_scan(self, call: Call, views: Views) -> DenseScan | None:
        store, df = views.store, self._call.dense
        if store is None or df is None or not 0 < store.size <= SCAN_LIMIT or not df.valid():
            return None
        cache: dict[str, Any] = call.state.setdefault("kb_balanced.dense_scan", {})
        key = (str(store.root), store.generation)
        if cache.get("key") != key:
            pairs = store.db.execute("SELECT key, id FROM units").fetchall()
            rows, found = df.read([k for k, _ in pairs])
            cache["key"] = key
            whole = pairs and found.all()
            cache["value"] = DenseScan([k for k, _ in pairs], [i for _, i in pairs], rows) if whole else None
            cache["pending"] = int(pending_rows(rows).sum()) if pairs else 0
        self._call.dense_pending = cache["pending"]
        return cache["value"]

    def prepare(self, call: Call, views: Views) -> None:
        # a short one-shot call does not wait for the model to load; inline units' vectors are kept in the
        # call's artifacts folder (the next `mrpvm ask --source` of the same file does not encode them again)
        for_call(call.time_left(), call.request.paths.artifacts)
        self._call = _CallVectors()
        self._call.vectors = self._vector_file(call, views)
        if views.store is not None:
            self._call.dense = generation_dense_file(call.state, views.store.root, views.store.generation)
            self._call.dense_scan = self._dense_scan(call, views)
        if views.inline is not None and views.inline.size:
            self._call.inline = self._inline_matrix(call, views.inline)
        self._call.kb_scan = self._kb_scan(call, views)

    @staticmethod
    def _query(profile: GoalProfile) -> QueryVectors:
        terms = [t for t, w in profile.weights.items() if w >= 0.5] or list(profile.weights)
        return query_vectors(tuple(terms), tuple(profile.roles), profile.act)

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
        if self._call.dense_scan is not None:
            query = encode_query(profile.text)
            scan = self._call.dense_scan
            if query is not None:
                cos = scan.matrix @ query
                k = min(DENSE_NEIGHBOURS, len(cos))
                top = np.argpartition(-cos, k - 1)[:k]
                wanted = [scan.ids[int(i)] for i in top if cos[i] >= DENSE_FLOOR]
                for ident, entry in views.lookup(i for i in wanted if i not in pool).items():
                    pool[ident] = Candidate(entry, 0.0)
        return pool

    def _cosines(self, views: Views, profile: GoalProfile, cands: list[Candidate]) -> np.ndarray | None:
        """Each candidate's cosine with the intent: KB rows from the artifact file, inline units from the
        worker's cache (encoded when first judged); None without the model."""
        query = encode_query(profile.text)
        if query is None:
            return None
        vectors = np.zeros((len(cands), query.shape[0]), np.float32)
        done = np.zeros(len(cands), bool)
        kb = [i for i, c in enumerate(cands) if c.origin == "kb" and c.key]
        again: list[int] = []
        if kb and self._call.dense is not None and self._call.dense.valid():
            keys = [cands[i].key or 0 for i in kb]
            scanned = self._call.dense_scan.stored(keys) if self._call.dense_scan is not None else None
            if scanned is not None:  # the rows the scan holds (this generation's file, converted once)
                rows_f, stored = scanned
            else:
                rows, found = self._call.dense.read(keys)
                stored = found & ~pending_rows(rows)
                rows_f = from_rows(rows)
                if self._call.dense_scan is None:
                    self._call.dense_pending = int((found & ~stored).sum())
            at = np.asarray(kb)[stored]
            vectors[at], done[at] = rows_f[stored], True
            again = nearest(rows_f[stored] @ query, at)  # int8 rows: the nearest read in float (dense.py)
            done[again] = False
        # units without stored rows (inline ones, KB units still pending): those cached, and the INLINE_ENCODE
        # best by BM25, are read
        # (the cost of a turn stays bounded); the others keep cosine 0 (lexical and HDC evidence only)
        hashes = {i: unit_hash(cands[i].unit) for i in range(len(cands)) if not done[i]}
        fresh = sorted(
            (i for i, h in hashes.items() if h not in self._inline_dense), key=lambda i: -cands[i].lexical
        )
        fresh = [i for i in fresh if i in again] + [i for i in fresh if i not in again][:INLINE_ENCODE]
        rest = [i for i, h in hashes.items() if h in self._inline_dense] + fresh
        if rest:
            encoded = self._inline_dense.get([(hashes[i], cands[i].unit) for i in rest])
            if encoded is None:
                return None
            vectors[rest] = encoded
        self._call.dense_by_id.update((c.id, v) for c, v in zip(cands, vectors, strict=True))
        return vectors @ query

    def _vectors(self, views: Views, cands: list[Candidate]) -> Vectors:
        known = self._call.by_id
        known.update(self._kb_vectors([c for c in cands if c.id not in known and c.origin == "kb"]))
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
        cosines = self._cosines(views, profile, cands)
        # the association above the pool's mean, on a fixed scale: a flat, weak signal adds little
        lift = np.clip((assoc - float(assoc.mean())) / ASSOC_SCALE, 0.0, 1.0) if len(cands) > 1 else assoc
        if cosines is not None:  # the dense view: BM25 and meaning fused
            self._fuse(cands, assoc, lift, cosines, best_lex)
            return
        for c, a, up in zip(cands, assoc, lift, strict=True):
            c.assoc = float(a)
            if best_lex > 0:
                c.score = best_lex * (LEX_WEIGHT * c.lexical / best_lex + (1 - LEX_WEIGHT) * float(up))
            else:
                c.score = c.assoc

    def _fuse(
        self,
        cands: list[Candidate],
        assoc: np.ndarray,
        lift: np.ndarray,
        cosines: np.ndarray,
        best_lex: float,
    ) -> None:
        """Score fusion on the lexical scale (the cut, goal boosts and sufficiency downstream read scores
        relative to the best): (1 - DENSE_WEIGHT) x BM25 relative to the best, plus DENSE_WEIGHT x the
        stronger associative signal: the cosine above DENSE_FLOOR relative to the pool's best, or HDC's lift
        (misspellings). Rank fusion (RRF) was tried first and dropped: it flattens the scores, so the
        relative cut let unrelated candidates through."""
        top = float(cosines.max()) - DENSE_FLOOR
        dense = np.clip((cosines - DENSE_FLOOR) / top, 0.0, 1.0) if top > 0 else np.zeros(len(cands))
        self._call.cosine = {c.id: float(x) for c, x in zip(cands, cosines, strict=True)}
        for c, a, up, d in zip(cands, assoc, lift, dense, strict=True):
            c.assoc = float(a)
            near = max(float(d), float(up))
            if best_lex > 0:
                c.score = best_lex * ((1 - DENSE_WEIGHT) * c.lexical / best_lex + DENSE_WEIGHT * near)
            else:
                c.score = max(float(d), c.assoc)

    def admit(self, c: Candidate) -> bool:
        """About the intent by a subject term, by association (HDC: misspellings) or by meaning (dense)."""
        return bool(c.related) or c.assoc >= ASSOC_FLOOR or self._call.cosine.get(c.id, 0.0) >= DENSE_FLOOR

    def diversify(
        self, call: Call, views: Views, profile: GoalProfile, ranked: list[Candidate], budget: int
    ) -> list[Candidate]:
        """MMR (mmr.py) over the best MMR_POOL x budget candidates."""
        ranked = ranked[: max(mmr.MMR_POOL * budget, 10)]
        if len(ranked) <= 1:
            return ranked
        _, claims = self._vectors(views, ranked)
        sims = mmr.similarities(ranked, claims, self._call.dense_by_id, set(profile.content))
        return mmr.select(ranked, sims, budget)

    def notes(self, views: Views, profile: GoalProfile, result: IntentResult) -> list[str]:
        best = max((c.assoc for c in result.evidence), default=0.0)
        scan = "scan" if self._call.kb_scan is not None else "pool"
        notes = [f"hdc best association {best:.2f} ({scan} mode)", f"mmr lambda {mmr.MMR_LAMBDA}"]
        if self._call.cosine:
            close = max((self._call.cosine.get(c.id, 0.0) for c in result.evidence), default=0.0)
            notes.append(f"dense view: bm25+minilm score fusion, best cosine {close:.2f}")
            if self._call.dense_pending:
                notes.append(
                    f"dense view incomplete: {self._call.dense_pending} units not encoded yet (their source "
                    "is offered again until they are; the candidates judged here were encoded now)"
                )
        else:
            notes.append("dense view off: the sentence-embedding model is not installed")
        return notes
