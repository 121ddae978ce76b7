"""The forward pass: token ids in batches of similar length through an onnxruntime session, unit vectors out.

A batch holds at most BATCH_TOKENS padded tokens (and BATCH rows): onnxruntime's arena keeps the largest
activations it has served (32 texts x 256 tokens took ~350 MB per worker), and batches of equal width
waste no compute on padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
BATCH = 32
BATCH_TOKENS = 2048


def batches(lengths: Sequence[int]) -> list[list[int]]:
    """Indices grouped shortest first, each group's rows x its longest length within BATCH_TOKENS."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    for i in order:
        group = groups[-1] if groups else None
        if group is None or len(group) >= BATCH or (len(group) + 1) * max(lengths[i], 1) > BATCH_TOKENS:
            groups.append([i])
        else:
            group.append(i)
    return groups


def encode(session: ort.InferenceSession, tokenizer: Tokenizer, texts: Sequence[str]) -> np.ndarray:
    """One unit vector per text ([len(texts), DIMENSIONS] float32), in the order given."""
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return out
    ids_of = [e.ids for e in tokenizer.encode_batch(list(texts))]
    for chunk in batches([len(ids) for ids in ids_of]):
        width = max(len(ids_of[i]) for i in chunk)
        ids = np.zeros((len(chunk), width), dtype=np.int64)
        mask = np.zeros((len(chunk), width), dtype=np.int64)
        for row, i in enumerate(chunk):
            tokens = ids_of[i]
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        (vectors,) = session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})
        out[chunk] = vectors
    return out
