"""What kb-balanced keeps between calls (issue 22, the plugins' own work per call) gives the values it
would compute afresh: the chunked bit-column scan, role/act similarity per distinct bundle, the dense
rows of a scanned KB, the kept query vectors."""

from __future__ import annotations

import numpy as np
import pytest
from mrpvm.plugins.kb_balanced.dense import DENSE, from_rows, pending_rows, to_rows
from mrpvm.plugins.kb_balanced.dense_scan import DenseScan, generation_dense_file
from mrpvm.plugins.kb_balanced.hdc import (
    CLAIM_DIM,
    COLUMN_CHUNK,
    SYMBOL_DIM,
    TOPIC_DIM,
    Matrix,
    QueryVectors,
    _symbol_similarity,
    query_vectors,
    similarity,
    symbol_vector,
)
from mrpvm.plugins.kb_balanced.vectors import VectorFile


def test_a_query_of_more_bits_than_a_chunk_scans_to_the_exact_overlap():
    rng = np.random.default_rng(5)
    n = 777
    topics = np.packbits(rng.random((n, TOPIC_DIM)) < 0.05, axis=1)
    claims = np.packbits(rng.random((n, CLAIM_DIM)) < 0.05, axis=1)
    matrix = Matrix(topics, claims)
    query = np.packbits(rng.random(CLAIM_DIM) < 0.2)  # ~400 bits: several chunks
    assert int(np.unpackbits(query).sum()) > 2 * COLUMN_CHUNK
    got = matrix._similarity(matrix.claim_cols, matrix.claim_counts, query, CLAIM_DIM)
    assert np.array_equal(got, similarity(claims, query, CLAIM_DIM))


def test_symbol_similarity_per_distinct_bundle_equals_the_row_by_row_one():
    names = [("Description",), ("Procedure",), ("Description",), (), ("Warning",), ("Procedure",)]
    query = symbol_vector(("Description", "Procedure"))
    rows = np.stack([symbol_vector(n) for n in names])
    assert np.array_equal(_symbol_similarity(names, query), similarity(rows, query, SYMBOL_DIM))


def test_kept_query_vectors_are_the_fresh_ones_and_read_only():
    kept = query_vectors(("lantern", "harbour"), ("Description",), "describe")
    fresh = QueryVectors(["lantern", "harbour"], ("Description",), "describe")
    assert query_vectors(("lantern", "harbour"), ("Description",), "describe") is kept
    for name in ("topic", "claim", "role", "acts"):
        assert np.array_equal(getattr(kept, name), getattr(fresh, name))
    with pytest.raises(ValueError):
        kept.topic[0] = 1


def test_the_scan_gives_the_rows_the_file_gives(tmp_path):
    vf = VectorFile(tmp_path, DENSE)
    rng = np.random.default_rng(2)
    rows = to_rows(rng.standard_normal((5, DENSE.row // 2)).astype(np.float32))
    rows[3] = 0  # pending: not encoded yet
    keys = [1, 2, 3, 4, 5]
    vf.write(keys, rows)
    scan = DenseScan(keys, [f"u{k}" for k in keys], vf.read(keys)[0])
    wanted = [4, 2, 5]
    vectors, stored = scan.stored(wanted)
    read, found = vf.read(wanted)
    assert np.array_equal(stored, found & ~pending_rows(read))
    assert np.array_equal(vectors[stored], from_rows(read[stored]))
    assert stored.tolist() == [False, True, True]
    assert scan.stored([2, 99]) is None  # a key the scan does not hold: read the file instead


def test_the_dense_file_is_reopened_when_the_generation_moves(tmp_path):
    state: dict = {}
    first = generation_dense_file(state, tmp_path, 1)
    assert generation_dense_file(state, tmp_path, 1) is first
    assert generation_dense_file(state, tmp_path, 2) is not first
