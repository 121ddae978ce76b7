"""The encoder's precision: float32 (the reference) or int8 weights with dynamic activation quantization.

int8 (`quantize`): onnxruntime's own dynamic quantization (onnxruntime.quantization) of the built graph —
MatMul and the fused Attention's packed QKV weights as signed 8-bit per output channel, activations
quantized per tensor at run time; embeddings, LayerNorms and GELU stay float. On this 2-core AVX2 CPU
(no VNNI) it encodes ~1.5x the units per CPU second of float32 (session 29, bench/embedding_ingest.py);
its vectors agree with the float graph's at cosine >= 0.98 (mean 0.992 over corpus units), and a dense
ranking's top unit is the float one's for ~91% of development questions (top-10 overlap 0.95). Not the
default for every encoder: that noise (and the batch dependence below) flips near ties — with int8 the eval answered 2 fewer
questions of real01-10 and 2 fewer of dev01-24, and the golden paraphrase test (test_answers_by_meaning)
picked the section over its unit. Activations are quantized per batch tensor, so an int8 vector depends on
the texts encoded beside it (cosine 0.991 or more to the vector the text has alone, on the reference
sentences); float32's does not.

The precision an encoder uses: MRPVM_EMBED_PRECISION (`float` or `int8`) for every encoder of the process,
else its caller's default (`precision(default)`): PRECISION (float) for intents, inline units and answer
selection (gs-symbolic's cosines, whose thresholds were calibrated on float), FIRST_STAGE (int8) for the
rows kb-balanced encodes at a KB's ingest (session 30, perf48; kb_balanced/dense.py): a retrieval reads its
nearest rows again in float, so int8's noise moves which units are candidates, not the order of near ties
nor which sentence answers (quick.sh: real 99 and dev 253 as before). A kept vector's identity (the cache folder's name) names the precision, so vectors of the two are never mixed.
"""

from __future__ import annotations

import os

FLOAT, INT8 = "float", "int8"
PRECISION = FLOAT  # what answer selection encodes with (int8 measured and not its default: module docstring)
FIRST_STAGE = INT8  # a KB's dense rows at ingest: first-stage candidates, the nearest re-read in float
INT8_AGREEMENT = 0.98  # the least cosine an int8 vector of a text with words has to the float reference


def precision(default: str = PRECISION) -> str:
    """An encoder's precision: MRPVM_EMBED_PRECISION when it names one, else `default` (its caller's)."""
    configured = os.environ.get("MRPVM_EMBED_PRECISION", "").strip().lower()
    return configured if configured in (FLOAT, INT8) else default


def quantize(graph: bytes) -> bytes:
    """The int8 graph of a float32 one (serialized ONNX in, serialized ONNX out)."""
    import logging
    import tempfile  # here: a worker whose vectors are kept reads precision() and never builds (shutil)
    from pathlib import Path

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load_from_string(graph)
    # quantize_dynamic advises pre-processing through the root logger: the graph is already optimised
    # (graph.py), and `make setup` stays quiet; the caller's own disable level is given back after
    before = logging.root.manager.disable
    logging.disable(max(before, logging.WARNING))
    try:
        with tempfile.TemporaryDirectory(prefix="mrpvm-int8-") as work:
            out = Path(work) / "int8.onnx"
            quantize_dynamic(
                model,
                out,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul", "Attention"],
                # the contrib ops' outputs have no inferred type: they are float
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
            return out.read_bytes()
    finally:
        logging.disable(before)
