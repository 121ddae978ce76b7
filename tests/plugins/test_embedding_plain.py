"""Kept vectors read and compared without numpy (sdk embedding/plain.py, `kept_vectors`).

The dot products of plain vectors agree with numpy's float32 products of the same rows (the cosines
gs-symbolic scored with before) on sentence-transformers' own reference embeddings (tests/plugins/models,
copied from ../shared/models), and with the exact sum of the products; `kept_vectors` reads what
`encode_kept` keeps, bit for bit (a gs-symbolic worker reading them imports no numpy:
test_embedding_lazy.py).
"""

from __future__ import annotations

import json
import math
import operator
from pathlib import Path

import numpy as np
import pytest
from mrpvm.plugins.sdk.embedding import Vector, available, dot, encode_kept, for_call, kept_vectors
from mrpvm.plugins.sdk.embedding import encoder as encoder_module
from mrpvm.plugins.sdk.embedding.plain import from_row

REFERENCE = json.loads((Path(__file__).parent / "models" / "minilm_reference.json").read_text())
ROWS = np.asarray(REFERENCE["embeddings"], dtype=np.float32)  # float32, as the model's rows are kept


def _plain(rows: np.ndarray) -> list[Vector]:
    return [from_row(row.tobytes()) for row in rows]


def test_plain_dot_products_agree_with_numpy_on_the_reference_embeddings() -> None:
    plain = _plain(ROWS)
    by_numpy = ROWS @ ROWS.T  # float32, what gs-symbolic's cosines were
    for i, a in enumerate(plain):
        assert a.values == tuple(float(x) for x in ROWS[i])  # the float32 components, unchanged
        for j, b in enumerate(plain):
            exact = math.fsum(map(operator.mul, a.values, b.values))  # float32 x float32 is exact in float64
            got = dot(a, b)
            assert abs(got - exact) <= 1e-14, (i, j, got, exact)
            assert abs(got - float(by_numpy[i, j])) <= 2e-6, (i, j, got, by_numpy[i, j])
            assert got == dot(b, a)
    # unit vectors: a vector's cosine with itself is 1, and the spread of the others is kept
    assert all(abs(dot(v, v) - 1.0) <= 1e-6 for v in plain)
    cosines = [dot(plain[0], v) for v in plain[1:]]
    assert max(cosines) - min(cosines) > 0.3


def test_a_row_of_another_size_is_refused() -> None:
    with pytest.raises(Exception, match="requires a buffer"):
        from_row(ROWS[0][:100].tobytes())


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_kept_vectors_read_what_encode_kept_keeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoder_module, "_kept", {})
    texts = REFERENCE["sentences"][:4]
    try:
        for_call(60.0, str(tmp_path))
        by_numpy = encode_kept(texts)  # encoded and kept
        encoder_module._kept.clear()  # a fresh worker: nothing open
        plain = kept_vectors([texts[2], texts[0], texts[2]])
    finally:
        for_call(60.0)
    assert by_numpy is not None and plain is not None
    assert [v.values for v in plain] == [tuple(float(x) for x in by_numpy[i]) for i in (2, 0, 2)]
    assert kept_vectors([]) == []
