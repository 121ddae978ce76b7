"""Reading the model package: the safetensors weights and tokenizer.json inside its `model.zip`.

safetensors is a JSON header (8-byte little-endian length first) followed by raw little-endian tensors;
it is read here with numpy so the `safetensors` package (and torch) are not needed (imported when the
weights are read: `model_zip` serves workers that never load the model).
"""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MODEL_PACKAGE = "all_minilm_l6_v2"
_DTYPES = {"F32": "float32", "F16": "float16", "I64": "int64"}  # safetensors' names -> numpy's


def model_zip() -> Path | None:
    """Where the installed wheel keeps model.zip, or None when the package is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    return path if path.is_file() else None


def read_safetensors(blob: bytes) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file, as float32 (int64 tensors as they are)."""
    import json  # here, as numpy: a worker whose vectors are kept never reads the weights

    import numpy as np

    (size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + size])
    base = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        array = np.frombuffer(blob[base + start : base + end], dtype=np.dtype(_DTYPES[meta["dtype"]]))
        array = array.reshape(meta["shape"])
        tensors[name] = array.astype(np.float32) if array.dtype == np.float16 else array
    return tensors


def load(path: Path) -> tuple[dict[str, np.ndarray], dict[str, object], str]:
    """(tensors, BERT config, tokenizer.json text) from the package's model.zip."""
    import json
    import zipfile  # here: a worker whose vectors are kept never opens the package

    with zipfile.ZipFile(path) as archive:
        tensors = read_safetensors(archive.read("model.safetensors"))
        config = json.loads(archive.read("config.json"))
        tokenizer = archive.read("tokenizer.json").decode("utf-8")
    return tensors, config, tokenizer


def tokenizer(path: Path) -> str:
    """tokenizer.json alone (the graph may come from the cache)."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        return archive.read("tokenizer.json").decode("utf-8")
