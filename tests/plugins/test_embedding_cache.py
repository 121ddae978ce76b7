"""The encoder's on-disk graph (plugins/sdk/embedding/cache.py) and its batching (forward.py).

A worker opens the cached, already-optimised graph instead of building it; a cache that no longer
reproduces its probe embeddings (damaged weights, a missing check) is rebuilt, and an unwritable cache
folder still gives a working encoder. Each session is checked against the reference embeddings computed
by sentence-transformers (tests/plugins/models/minilm_reference.json).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mrpvm.plugins.sdk.embedding import available, cache, forward, weights
from mrpvm.plugins.sdk.embedding.quantize import PRECISION
from tokenizers import Tokenizer

pytestmark = pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")

REFERENCE = json.loads((Path(__file__).parent / "models" / "minilm_reference.json").read_text())


def _tokenizer(model: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_str(weights.tokenizer(model))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=forward.MAX_TOKENS)
    return tokenizer


def _matches_reference(session, tokenizer: Tokenizer) -> bool:
    got = forward.encode(session, tokenizer, REFERENCE["sentences"])
    want = np.asarray(REFERENCE["embeddings"], dtype=np.float32)
    cosines = (got * want).sum(axis=1) / np.linalg.norm(want, axis=1)
    return bool(cosines.min() >= 0.9999)


def test_a_built_cache_is_reused_and_a_damaged_one_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    model = weights.model_zip()
    assert model is not None
    folder = tmp_path / "share" / "minilm-test"
    monkeypatch.setattr(cache, "cache_dir", lambda _model, _kind=None: folder)
    tokenizer = _tokenizer(model)

    session, source = cache.load_session(model, tokenizer, 1, cache.FLOAT)
    assert source == "built" and _matches_reference(session, tokenizer)
    assert sorted(p.name for p in folder.iterdir()) == [
        "check.json",
        "model.onnx",
        "tokenizer.json",
        "verified.json",
        "weights.bin",
    ]
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no work folder left

    session, source = cache.load_session(model, tokenizer, 1, cache.FLOAT)
    assert source == "cache" and _matches_reference(session, tokenizer)

    blob = bytearray((folder / "weights.bin").read_bytes())
    middle = len(blob) // 2
    blob[middle : middle + 4_000_000] = bytes(4_000_000)  # a zeroed stretch of some layer's weights
    (folder / "weights.bin").write_bytes(bytes(blob))
    session, source = cache.load_session(model, tokenizer, 1, cache.FLOAT)
    assert source == "built" and _matches_reference(session, tokenizer)
    assert cache.load_session(model, tokenizer, 1, cache.FLOAT)[1] == "cache"  # repaired

    (folder / "check.json").unlink()
    assert cache.load_session(model, tokenizer, 1, cache.FLOAT)[1] == "built"
    (folder / "weights.bin").write_bytes(b"")  # truncated
    assert cache.load_session(model, tokenizer, 1, cache.FLOAT)[1] == "built"
    assert cache.load_session(model, tokenizer, 1, cache.FLOAT)[1] == "cache"


def _probes_run(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a load encodes the probe sentences."""
    runs: list[int] = []
    encode = forward.encode

    def counted(session, tokenizer, texts, max_tokens=forward.MAX_TOKENS):
        if tuple(texts) == cache.PROBES:
            runs.append(1)
        return encode(session, tokenizer, texts, max_tokens)

    monkeypatch.setattr(forward, "encode", counted)
    return runs


def test_a_folder_verified_on_this_cpu_loads_without_the_probe_and_a_changed_one_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The probe check runs when the folder is built; later loads of the same files on the same CPU skip it
    (and read the folder's tokenizer.json); a file rewritten since, or another CPU, checks again."""
    model = weights.model_zip()
    assert model is not None
    folder = tmp_path / "share" / "minilm-test"
    monkeypatch.setattr(cache, "cache_dir", lambda _model, _kind=None: folder)
    tokenizer = _tokenizer(model)
    runs = _probes_run(monkeypatch)
    assert cache.load_session(model, tokenizer, 1, cache.FLOAT)[1] == "built" and runs
    assert cache.verified(folder)

    runs.clear()
    session, source = cache.load_session(model, tokenizer, 1, cache.FLOAT)
    assert source == "cache" and not runs and _matches_reference(session, tokenizer)
    assert cache.tokenizer_text(model) == ((folder / "tokenizer.json").read_text(), True)
    assert cache.tokenizer_text(model)[0] == weights.tokenizer(model)

    this_cpu = cache.cpu_identity
    monkeypatch.setattr(cache, "cpu_identity", lambda: "another-cpu")
    assert not cache.verified(folder)
    assert cache.load_session(model, tokenizer, 1, cache.FLOAT)[1] == "cache" and runs == [1]
    monkeypatch.setattr(cache, "cpu_identity", this_cpu)
    assert cache.verified(folder)
    runs.clear()

    (folder / "tokenizer.json").write_text("{}")  # rewritten: no longer the verified file
    assert not cache.verified(folder)
    assert cache.tokenizer_text(model) == (
        weights.tokenizer(model),
        False,
    )  # the package's, not the damaged copy
    assert cache.load_session(model, tokenizer, 1, cache.FLOAT)[1] == "cache" and runs == [1]


def test_an_encoder_start_reads_verified_json_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The tokenizer's choice and the session's probe decision share one reading of verified.json."""
    from mrpvm.plugins.sdk.embedding.encoder import Encoder

    folder = tmp_path / "share" / "minilm-test"
    monkeypatch.setattr(cache, "cache_dir", lambda _model, _kind=None: folder)
    Encoder(threads=1, kind=cache.FLOAT)  # builds and verifies the folder
    reads: list[Path] = []
    verified = cache.verified

    def counted(where: Path) -> bool:
        reads.append(where)
        return verified(where)

    monkeypatch.setattr(cache, "verified", counted)
    runs = _probes_run(monkeypatch)
    encoder = Encoder(threads=1, kind=cache.FLOAT)
    assert reads == [folder] and not runs and encoder.graph_source == "cache"


def test_pre_packed_weights_give_the_vectors_of_a_graph_packed_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The folder keeps the weights in the layout the kernels read (packed once, at the build); a session on
    it encodes bit for bit what a session packing them at its own start does."""
    model = weights.model_zip()
    assert model is not None
    tokenizer = _tokenizer(model)
    packed, plain = tmp_path / "packed" / "minilm-a", tmp_path / "plain" / "minilm-b"
    monkeypatch.setattr(cache, "cache_dir", lambda _model, _kind=None: packed)
    cache.load_session(model, tokenizer, 1, cache.FLOAT)
    options = cache._options

    def unpacked(threads, optimized=False, save_to=None):
        made = options(threads, optimized, save_to)
        made.add_session_config_entry("session.save_external_prepacked_constant_initializers", "0")
        return made

    monkeypatch.setattr(cache, "_options", unpacked)
    monkeypatch.setattr(cache, "cache_dir", lambda _model, _kind=None: plain)
    cache.load_session(model, tokenizer, 1, cache.FLOAT)
    monkeypatch.setattr(cache, "_options", options)
    assert (packed / "weights.bin").stat().st_size > (plain / "weights.bin").stat().st_size
    texts = [*REFERENCE["sentences"], "Lanterns are trimmed at dusk.", "trim"]
    got = [
        forward.encode(cache._cached(folder, tokenizer, 1, probe=False), tokenizer, texts)
        for folder in (packed, plain)
    ]
    assert np.array_equal(got[0], got[1])


def test_an_unwritable_cache_folder_still_gives_a_working_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    model = weights.model_zip()
    assert model is not None
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(cache, "cache_dir", lambda _model, _kind=None: blocker / "minilm-test")
    tokenizer = _tokenizer(model)
    session, source = cache.load_session(model, tokenizer, 1, cache.FLOAT)
    assert source == "built" and _matches_reference(session, tokenizer)
    assert blocker.read_text() == "not a folder"


def test_the_cache_key_changes_with_the_runtime_version(monkeypatch: pytest.MonkeyPatch):
    import onnxruntime

    assert cache.runtime_version() == onnxruntime.__version__  # read without importing the runtime
    model = weights.model_zip()
    assert model is not None
    first = cache.cache_dir(model)
    monkeypatch.setattr(cache, "runtime_version", lambda: "0.0.0-other")
    assert cache.cache_dir(model) != first and cache.cache_dir(model).parent == first.parent


def test_the_runtime_version_is_read_without_importlib_metadata():
    """A one-turn worker names the kept vectors' model identity without importing importlib.metadata
    (and email): the same version it would report."""
    code = (
        "import sys; from mrpvm.plugins.sdk.embedding import cache; v = cache.runtime_version(); "
        "loaded = 'importlib.metadata' in sys.modules; from importlib.metadata import version; "
        "print(v, version('onnxruntime'), loaded)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    ours, theirs, loaded = done.stdout.split()
    assert ours == theirs and loaded == "False"


def test_the_runtime_version_follows_the_path_as_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    def dist(folder: Path, name: str, metadata: str) -> Path:
        (folder / name).mkdir(parents=True)
        (folder / name / "METADATA").write_text(metadata)
        return folder

    first = dist(
        tmp_path / "a",
        "ONNXRuntime-9.1.dist-info",
        "Metadata-Version: 2.1\nName: onnxruntime\nVersion: 9.1\n\nVersion: 0\n",
    )
    dist(first, "onnxruntime_gpu-7.0.dist-info", "Name: onnxruntime-gpu\nVersion: 7.0\n")
    later = dist(tmp_path / "b", "onnxruntime-8.0.dist-info", "Name: onnxruntime\nVersion: 8.0\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(later)])
    assert cache.runtime_version() == "9.1"  # the first folder holding it; onnxruntime-gpu is another project
    twice = dist(tmp_path / "c", "onnxruntime-1.0.dist-info", "Version: 1.0\n")
    dist(twice, "onnxruntime-2.0.dist-info", "Version: 2.0\n")
    monkeypatch.setattr(sys, "path", [str(twice), str(later)])
    from importlib.metadata import version

    assert cache.runtime_version() == version("onnxruntime")  # ambiguous: importlib.metadata decides
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing")])
    with pytest.raises(ModuleNotFoundError):  # PackageNotFoundError, as before
        cache.runtime_version()


def test_batches_keep_every_text_once_within_the_token_budget():
    lengths = [3, 256, 40, 40, 7, 128, 1, 0, 255, *range(5, 200, 3)]
    groups = forward.batches(lengths)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for group in groups:
        widths = [lengths[i] for i in group]
        assert widths == sorted(widths)
        assert len(group) <= forward.BATCH
        assert len(group) == 1 or len(group) * max(widths) <= forward.BATCH_TOKENS
        factor, extra = forward.PAD_SLACK
        assert max(widths) <= min(widths) * factor + extra  # little compute spent on padding
    assert forward.batches([]) == []


def test_texts_of_one_length_share_a_batch_and_mixed_lengths_are_not_padded_to_the_longest():
    assert forward.batches([20] * 40) == [list(range(32)), list(range(32, 40))]
    assert forward.batches([13, 93, 41, 45, 15]) == [[0, 4], [2, 3], [1]]


def test_the_int8_graph_has_its_own_folder_and_both_are_kept(monkeypatch: pytest.MonkeyPatch):
    """Vectors of the two precisions never share a kept vector's identity (the folder's name), and
    building one precision's folder does not remove the other's."""
    model = weights.model_zip()
    assert model is not None
    floats, int8 = cache.cache_dir(model, cache.FLOAT), cache.cache_dir(model, cache.INT8)
    assert floats != int8 and floats.parent == int8.parent
    monkeypatch.setenv("MRPVM_EMBED_PRECISION", "float")
    assert cache.cache_dir(model) == floats
    monkeypatch.setenv("MRPVM_EMBED_PRECISION", "int8")
    assert cache.cache_dir(model) == int8
    monkeypatch.setenv("MRPVM_EMBED_PRECISION", "no-such-precision")
    assert cache.cache_dir(model) == cache.cache_dir(model, PRECISION)
