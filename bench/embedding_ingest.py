"""kb-balanced's dense view at ingest: units per second through `write_dense` (the path a KB write takes),
where the time goes, and the resident memory of a process that loads the model (a kb-balanced worker).

    .venv/bin/python bench/embedding_ingest.py [--source FILE] [--units N] [--precision float|int8]
                                               [--threads T] [--json]

Units come from sd-symbolic's tree of the source (default: the 1.1 MB corpus of ../shared/perf), read as
kb-balanced reads them (dense.unit_text), the first N of the document (0: all). Printed:
- the work: units, distinct texts (each encoded once), tokens per text, padded tokens of forward.py's
  batches (the padding ratio) and the FLOP they cost (~21 MFLOP per token, bench/embedding.py);
- the time: wall and CPU seconds of the write, split into tokenizing, onnxruntime's forward pass and the
  rest (batching, rows, the vector file), units per wall second and per CPU second (the A/B figure on a
  loaded machine: 2 x units per CPU s is what 2 free cores would give), the sustained GFLOP/s;
- the memory: the process's Rss / Pss / Private_Dirty with the model loaded and after the write (the
  weights are memory-mapped from the graph cache: file pages other workers share), and its peak RSS; where
  the write is int8, also after loading the float encoder (a kb-balanced worker that answers too: its
  intents and the nearest rows are read in float, dense.py);
- the load average before and after (the machine is shared: compare runs of the same minutes).

`--precision float|int8` sets MRPVM_EMBED_PRECISION (every encoder of the process); unset, the write encodes
at kb-balanced's ingest precision (dense.ingest_precision: int8 since session 30, float before) and reads
each unit to dense.MAX_TOKENS tokens (128 since session 30; a checkout without it: the encoder's 256). The
same script runs in an older checkout (`/work/base28/.venv/bin/python bench/embedding_ingest.py`): what it
lacks is read with its old default.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from embedding import FLOP_PER_TOKEN, rss_mb, smaps_mb
from perfkit import print_figures

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "perf" / "corpus" / "node-api-1.1mb.md"


def memory_mb() -> dict[str, float]:
    """This process's memory now (embedding.smaps_mb) and its peak RSS (MiB)."""
    return {**smaps_mb(), "peak_rss": round(rss_mb(), 1)}


class _Timed:
    """Wraps an object and adds the wall and CPU seconds its `method` takes to `clock`."""

    def __init__(self, inner: Any, method: str, clock: dict[str, float]) -> None:
        self._inner, self._method, self._clock = inner, method, clock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name != self._method:
            return value

        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return value(*args, **kwargs)
            finally:
                self._clock["wall"] += time.perf_counter() - wall
                self._clock["cpu"] += time.process_time() - cpu

        return timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=CORPUS)
    parser.add_argument("--units", type=int, default=0, help="the first N units of the source (0: all)")
    parser.add_argument("--precision", choices=("float", "int8"), default="")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime threads (0: the default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.precision:
        os.environ["MRPVM_EMBED_PRECISION"] = args.precision
    if args.threads:
        os.environ["MRPVM_EMBED_THREADS"] = str(args.threads)
    load_before = os.getloadavg()[0]

    from mrpvm.plugins.kb_balanced import dense
    from mrpvm.plugins.kb_common import NewUnit
    from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
    from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
    from mrpvm.plugins.sdk.embedding import forward, missing_reason, shared_encoder
    from mrpvm.plugins.sdk.embedding.quantize import precision

    if missing_reason():
        print(missing_reason())
        return 1
    units = list(
        build_tree(args.source.read_text(), SourceMeta("bench", "bench.md", "text", created_at="t0"))
    )
    units = units[: args.units] if args.units else units
    new = [NewUnit(key=i + 1, unit=u, hash=f"h{i}", fields={}) for i, u in enumerate(units)]
    texts = list(dict.fromkeys(dense.unit_text(u) for u in units))

    before = memory_mb()
    start = time.perf_counter()
    kind = dense.ingest_precision() if hasattr(dense, "ingest_precision") else None
    encoder = shared_encoder(kind) if kind else shared_encoder()
    assert encoder is not None
    max_tokens = getattr(dense, "MAX_TOKENS", forward.MAX_TOKENS)
    load_s = time.perf_counter() - start
    loaded = memory_mb()
    lengths = [min(len(e.ids), max_tokens) for e in encoder.tokenizer.encode_batch(texts)]
    padded = sum(len(g) * max(lengths[i] for i in g) for g in forward.batches(lengths))
    tokens = sum(lengths)

    clocks = {k: {"wall": 0.0, "cpu": 0.0} for k in ("tokenize", "forward")}
    encoder.tokenizer = _Timed(encoder.tokenizer, "encode_batch", clocks["tokenize"])  # type: ignore[assignment]
    encoder.session = _Timed(encoder.session, "run", clocks["forward"])  # type: ignore[assignment]
    dense.ENCODE_BUDGET_S = float("inf")  # the whole write: the rate, not one call's share (dense.py)
    with tempfile.TemporaryDirectory(prefix="mrpvm-bench-dense-") as folder:
        wall, cpu = time.perf_counter(), time.process_time()
        done = dense.write_dense(dense.dense_file(Path(folder)), [], new, deadline=float("inf"))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert done.pending == 0 and done.encoded == len(units), done

    rest = {k: wall - sum(c["wall"] for c in clocks.values()) for k in ("wall",)}
    sorted_lengths = sorted(lengths)
    figures = {
        "source": str(args.source),
        "precision": getattr(encoder, "precision", "float"),  # a checkout before int8 existed: float
        "threads": os.environ.get("MRPVM_EMBED_THREADS") or "default",
        "max_tokens": max_tokens,
        "units": len(units),
        "distinct_texts": len(texts),
        "tokens": tokens,
        "tokens_per_text": round(tokens / max(1, len(texts)), 1),
        "tokens_p50_p90_p99": [sorted_lengths[int(q * (len(lengths) - 1))] for q in (0.5, 0.9, 0.99)],
        "padded_tokens": padded,
        "padding_ratio": round(padded / max(1, tokens), 3),
        "gflop": round(padded * FLOP_PER_TOKEN / 1e9, 1),
        "model_load_s": round(load_s, 2),
        "graph": encoder.graph_source,
        "write_wall_s": round(wall, 2),
        "write_cpu_s": round(cpu, 2),
        "tokenize_wall_s": round(clocks["tokenize"]["wall"], 2),
        "forward_wall_s": round(clocks["forward"]["wall"], 2),
        "forward_cpu_s": round(clocks["forward"]["cpu"], 2),
        "other_wall_s": round(rest["wall"], 2),
        "units_per_s": round(len(units) / wall, 1),
        "units_per_cpu_s": round(len(units) / cpu, 1),
        "gflop_per_s": round(padded * FLOP_PER_TOKEN / 1e9 / clocks["forward"]["wall"], 1),
        "gflop_per_cpu_s": round(padded * FLOP_PER_TOKEN / 1e9 / clocks["forward"]["cpu"], 1),
        "memory_before_mb": before,
        "memory_model_loaded_mb": loaded,
        "memory_after_write_mb": memory_mb(),
        "load_before_after": [round(load_before, 1), round(os.getloadavg()[0], 1)],
    }
    if kind and kind != precision():  # a worker that also answers: intents and the nearest rows in float
        floats = shared_encoder(precision())
        assert floats is not None
        floats.encode(texts[:12], max_tokens)
        figures["memory_with_float_encoder_mb"] = memory_mb()
    print_figures(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
