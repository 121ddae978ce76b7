"""The sentence-embedding model's cost: load time, resident memory of a process that loads it, and the
throughput of ingest-time encoding (what kb-balanced's dense view does for every unit it indexes), per
wall second and per CPU second (the latter is what to compare between two checkouts on a loaded machine).

    .venv/bin/python bench/embedding.py [--source FILE] [--units N] [--threads T] [--json]

Units come from sd-symbolic's tree of the source (default: the 1.1 MB corpus of ../shared/perf when present,
else examples/); each is read as kb-balanced reads it (dense.unit_text). A transformer costs ~20 MFLOP per
token (6 layers, hidden 384): tokens/s x 2e7 is the sustained FLOP rate, printed to show where the time goes.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from perfkit import print_figures

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "perf" / "corpus" / "node-api-1.1mb.md"
FLOP_PER_TOKEN = 2.1e7  # 2 x the encoder's ~10.6 M non-embedding parameters


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def smaps_mb() -> dict[str, float]:
    """This process's Rss, Pss and Private_Dirty now (MiB): the weights, memory-mapped from the graph cache,
    are file pages other model-loading workers share (Pss), the rest is this process's own."""
    wanted = ("Rss", "Pss", "Private_Dirty")
    out: dict[str, float] = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in wanted:
            out[name.lower()] = round(int(value.split()[0]) / 1024, 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=CORPUS if CORPUS.exists() else None)
    parser.add_argument("--units", type=int, default=2000, help="encode at most this many units")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime threads (0: the default)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from mrpvm.plugins.kb_balanced.dense import unit_text
    from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
    from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
    from mrpvm.plugins.sdk.embedding import Encoder, missing_reason

    if missing_reason():
        print(json.dumps({"error": missing_reason()}) if args.json else missing_reason())
        return 1
    text = args.source.read_text() if args.source else (ROOT / "examples" / "tessel-build.md").read_text()
    units = [u for u in build_tree(text, SourceMeta("bench", "bench.md", "text", created_at="t0"))]
    texts = [unit_text(u) for u in units][: args.units]
    before = rss_mb()
    start = time.perf_counter()
    encoder = Encoder(threads=args.threads or None)
    load_s = time.perf_counter() - start
    loaded = rss_mb()
    tokens = sum(len(e.ids) for e in encoder.tokenizer.encode_batch(texts))
    start, cpu = time.perf_counter(), time.process_time()
    encoder.encode(texts)
    encode_s, encode_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    start = time.perf_counter()
    for question in (
        "How do I verify a signature?",
        "What is the default encoding?",
        "Which flag sets the mode?",
    ):
        encoder.encode([question])
    query_ms = (time.perf_counter() - start) / 3 * 1000
    figures = {
        "source": str(args.source or "examples/tessel-build.md"),
        "units_in_source": len(units),
        "units_encoded": len(texts),
        "tokens": tokens,
        "model_load_s": round(load_s, 2),
        "graph": encoder.graph_source,  # "cache" (built once) or "built" (this process built it)
        "rss_before_mb": round(before, 1),
        "rss_with_model_mb": round(loaded, 1),
        "rss_after_encoding_mb": round(rss_mb(), 1),
        "memory_now_mb": smaps_mb(),
        "encode_s": round(encode_s, 2),
        "units_per_s": round(len(texts) / encode_s, 1),
        # CPU seconds of all onnxruntime threads: steadier than wall time on a loaded machine (A/B runs)
        "encode_cpu_s": round(encode_cpu_s, 2),
        "units_per_cpu_s": round(len(texts) / encode_cpu_s, 1),
        "tokens_per_s": round(tokens / encode_s, 1),
        "gflop_per_s": round(tokens * FLOP_PER_TOKEN / encode_s / 1e9, 1),
        "query_ms": round(query_ms, 1),
    }
    print_figures(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
