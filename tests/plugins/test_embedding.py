"""The sentence encoder (plugins/sdk/embedding) reproduces sentence-transformers' all-MiniLM-L6-v2.

`tests/models/minilm_reference.json` holds embeddings computed once by sentence-transformers itself (copied
from ../shared/models): an option line, code, non-ASCII text, a text over 256 tokens and the empty string.
A wrong tokenizer, graph, pooling or truncation moves some cosine below 0.9999 (the float32 graph). The
product encodes with it (quantize.PRECISION); the int8 graph (embedding/quantize.py, MRPVM_EMBED_PRECISION=int8)
is checked against the same references at quantize.INT8_AGREEMENT (0.98; the empty text at 0.95).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mrpvm.plugins.sdk.embedding import DIMENSIONS, Encoder, available, missing_reason, shared_encoder
from mrpvm.plugins.sdk.embedding import encoder as encoder_module
from mrpvm.plugins.sdk.embedding.quantize import FLOAT, INT8, INT8_AGREEMENT, PRECISION
from mrpvm.plugins.sdk.embedding.weights import read_safetensors

REFERENCE = json.loads((Path(__file__).parent / "models" / "minilm_reference.json").read_text())


def test_the_model_is_installed_with_the_dev_extra():
    assert available(), missing_reason()


def _cosines(encoder: Encoder) -> np.ndarray:
    got = encoder.encode(REFERENCE["sentences"])
    want = np.asarray(REFERENCE["embeddings"], dtype=np.float32)
    assert got.shape == (len(REFERENCE["sentences"]), DIMENSIONS)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    return (got * want).sum(axis=1) / np.linalg.norm(want, axis=1)


def test_embeddings_match_the_reference_computed_by_sentence_transformers():
    encoder = shared_encoder()  # the product's encoder: float32
    assert encoder is not None and encoder.precision == PRECISION == FLOAT
    cosines = _cosines(encoder)
    assert cosines.min() >= 0.9999, dict(zip(REFERENCE["sentences"], cosines.round(6).tolist(), strict=True))


def test_the_int8_encoder_agrees_with_the_reference_within_its_bound():
    encoder = Encoder(kind=INT8)
    cosines = _cosines(encoder)
    worded = [bool(s.strip()) for s in REFERENCE["sentences"]]
    report = dict(zip(REFERENCE["sentences"], cosines.round(4).tolist(), strict=True))
    assert cosines[worded].min() >= INT8_AGREEMENT, report
    assert cosines.min() >= 0.95, report
    assert cosines[worded].mean() >= 0.99, report
    assert cosines.max() < 0.9999  # int8 indeed: not the float graph under another name


def test_order_and_batching_do_not_change_a_vector():
    encoder = shared_encoder()
    assert encoder is not None
    texts = REFERENCE["sentences"][:6]
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    together = encoder.encode(list(reversed(texts)))[::-1]
    assert np.allclose(alone, together, atol=1e-5)
    assert encoder.encode([]).shape == (0, DIMENSIONS)


def test_an_int8_vector_moves_little_with_its_batch():
    """int8 activations are quantized per batch tensor (quantize.py): a text's vector depends on the texts
    encoded beside it, within cosine 0.985 of the vector it has alone (0.991 measured)."""
    encoder = Encoder(kind=INT8)
    texts = REFERENCE["sentences"]
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    together = encoder.encode(list(reversed(texts)))[::-1]
    assert float((alone * together).sum(axis=1).min()) >= 0.985
    assert np.array_equal(together, encoder.encode(list(reversed(texts)))[::-1])  # deterministic


def test_a_paraphrased_answer_is_nearer_than_other_sentences():
    encoder = shared_encoder()
    assert encoder is not None
    question, paraphrase, other, unrelated = encoder.encode(
        [
            "Where does the kiln store the schedules it fires?",
            "Firing programs are saved under /var/lib/kiln/programs by the controller.",
            "-L, --location: this option makes curl redo the request on the new place.",
            "Paris is the capital and most populous city of France.",
        ]
    )
    assert float(question @ paraphrase) > max(float(question @ other), float(question @ unrelated)) + 0.3


def test_a_missing_runtime_is_named_and_not_fatal(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(encoder_module, "_RUNTIME_MODULES", ("onnxruntime", "no_such_runtime_module"))
    reason = missing_reason()
    assert reason is not None and "no_such_runtime_module" in reason and "lexical" in reason
    assert not available()


def test_safetensors_reader_reads_half_precision_and_rejects_nothing_silently():
    import struct

    values = np.array([1.5, -2.0], dtype=np.float16)
    header = json.dumps({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    blob = struct.pack("<Q", len(header)) + header + values.tobytes()
    tensors = read_safetensors(blob)
    assert tensors["w"].dtype == np.float32 and tensors["w"].tolist() == [1.5, -2.0]
    bad = json.dumps({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 4]}}).encode()
    with pytest.raises(KeyError):
        read_safetensors(struct.pack("<Q", len(bad)) + bad + values.tobytes())
