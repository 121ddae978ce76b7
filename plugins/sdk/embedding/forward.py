"""The forward pass: token ids in batches of similar length through an onnxruntime session, unit vectors out.

A batch holds at most BATCH_TOKENS padded tokens (and BATCH rows): onnxruntime's arena keeps the largest
activations it has served (32 texts x 256 tokens took ~350 MB per worker). A batch holds texts of nearly
the same length (PAD_SLACK): the forward pass costs per padded token (~0.7 ms each on this CPU, the
per-run overhead is negligible), and a question's dozen sentences of 13 to 93 tokens padded to the
longest cost 1.6-1.7x the compute of their own tokens. A text's vector does not depend on its batch
beyond float rounding (< 1e-7 per component).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
BATCH = 32
BATCH_TOKENS = 2048
PAD_SLACK = (1.15, 4)  # a text joins a batch when its length <= the batch's shortest x 1.15 + 4 tokens


def batches(lengths: Sequence[int]) -> list[list[int]]:
    """Indices grouped shortest first, each group's rows x its longest length within BATCH_TOKENS, its
    longest within PAD_SLACK of its shortest."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    factor, extra = PAD_SLACK
    groups: list[list[int]] = []
    for i in order:
        group = groups[-1] if groups else None
        if (
            group is None
            or len(group) >= BATCH
            or (len(group) + 1) * max(lengths[i], 1) > BATCH_TOKENS
            or lengths[i] > lengths[group[0]] * factor + extra
        ):
            groups.append([i])
        else:
            group.append(i)
    return groups


def clip(ids: list[int], max_tokens: int) -> list[int]:
    """A text's ids read to at most `max_tokens` (its last id, [SEP], kept): the tokenizer's own truncation at
    that length (tests: test_embedding_cache)."""
    return ids if len(ids) <= max_tokens else [*ids[: max_tokens - 1], ids[-1]]


def encode(
    session: ort.InferenceSession, tokenizer: Tokenizer, texts: Sequence[str], max_tokens: int = MAX_TOKENS
) -> np.ndarray:
    """One unit vector per text ([len(texts), DIMENSIONS] float32), in the order given, each text read to at
    most `max_tokens` tokens (the tokenizer truncates at MAX_TOKENS)."""
    import numpy as np  # here: a worker that reads kept vectors without numpy imports this module (plain.py)

    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return out
    ids_of = [clip(e.ids, max_tokens) for e in tokenizer.encode_batch(list(texts))]
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
