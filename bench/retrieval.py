"""Retrieval benchmark: kb plugins through their warm workers against rank-bm25 in-process.

Builds a synthetic KB of N atomic KUs (generated pseudo-word vocabulary, Zipf–Mandelbrot term frequencies
p(r) ~ 1/(r + 10)^1.05, i.e. a content-word distribution after stopword removal; topics of 2–4 words,
claims of 10–20 words with some function words), ingests it through each kb plugin's `onSourceText`
in batched sources, then asks Q questions made from the words of random target units.

Per plugin: build seconds (all onSourceText calls), query p50/p90 ms of `retrieve` through the warm
worker (kernel.supervisor.Supervisor when present, else a framed worker driven directly), the worker's
peak RSS, and the hit rate (the target unit among the selected evidence). rank-bm25 (BM25Okapi over
the same analysed terms) is timed in-process as the reference; for large N on fewer queries.

    .venv/bin/python bench/retrieval.py --kus 100000 [--queries 200] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import numpy as np
from perfkit import cpu_seconds, peak_rss_mb, tree  # type: ignore[import-not-found]
from synthetic_kus import Corpus  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_IDS = ("kb-fast", "kb-balanced", "kb-thinkingdb")
WARMUP = 5


# --------------------------------------------------------------------------- talking to a worker


class DirectWorker:
    """Fallback when kernel.supervisor is absent: one framed worker process driven directly."""

    def __init__(self, plugin_id: str):
        from mrpvm.protocol.framing import encode_frame, read_frame

        self._encode_frame, self._read_frame = encode_frame, read_frame
        module = plugin_id.replace("-", "_")
        env = dict(os.environ, MRPVM_WORKER="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"mrpvm.plugins.{module}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.seq = 0

    async def call(self, request) -> tuple[object, float]:
        from mrpvm.protocol.cnl import parse_document
        from mrpvm.protocol.envelope import encode_request

        self.seq += 1
        start = time.perf_counter()
        body = encode_request(msgspec.structs.replace(request, id=self.seq))
        self.proc.stdin.write(self._encode_frame(body))
        self.proc.stdin.flush()
        reply = self._read_frame(self.proc.stdout)
        doc = parse_document(reply.decode(), request.op)
        return doc, (time.perf_counter() - start) * 1000.0

    def pids(self) -> list[int]:
        return [self.proc.pid]

    async def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class SupervisedWorker:
    """The kernel's own path: Supervisor.call on a warm worker pool."""

    def __init__(self, plugin_id: str, supervisor):
        self.plugin_id = plugin_id
        self.sup = supervisor

    async def call(self, request) -> tuple[object, float]:
        result = await self.sup.call(self.plugin_id, request, timeout_s=600.0)
        return result.document, result.durationMs

    def pids(self) -> list[int]:
        return self.sup.pids()

    async def close(self) -> None:
        await self.sup.aclose()


def make_supervisor():
    try:
        from mrpvm.kernel.config import MANIFESTS_DIR
        from mrpvm.kernel.registry import Registry
        from mrpvm.kernel.supervisor import DEFAULT_LIMITS, Supervisor
    except ImportError:
        return None
    # the kernel's own memory limit (address space); only the per-call timeout is raised for the build
    limits = msgspec.structs.replace(DEFAULT_LIMITS, pluginTimeoutMs=600_000)
    registry = Registry.load(MANIFESTS_DIR)
    for entry in registry.list("kb-plugin"):  # a long build batch must not hit the per-call timeout
        entry.manifest = msgspec.structs.replace(entry.manifest, timeoutMs=600_000)
    return Supervisor(registry, limits)


def available(plugin_id: str) -> bool:
    """The plugin folder exists and its retrieve is implemented (not the `unsupported` stub)."""
    module = plugin_id.replace("-", "_")
    if not (ROOT / "plugins" / module / "__main__.py").is_file():
        return False
    proc = subprocess.run(
        [sys.executable, "-m", f"mrpvm.plugins.{module}"],
        input=b'{"prompt": "probe", "context": []}',
        capture_output=True,
        timeout=60,
    )
    return proc.returncode == 0 and b"Status: unsupported" not in proc.stdout


# --------------------------------------------------------------------------- one plugin


def retrieve_request(text: str, act: str, art: Path):
    from mrpvm.protocol.document import IntentGroup
    from mrpvm.protocol.envelope import Paths, Request, RetrievePayload

    return Request(
        op="retrieve",
        prompt=text,
        context=[],
        payload=RetrievePayload(
            intents=[IntentGroup(index=1, act=act, intent=text, output="answer")], kbId="kb-bench"
        ),
        paths=Paths(artifacts=str(art)),
    )


async def build(plugin_id: str, worker, corpus: Corpus, batch: int, art: Path) -> dict:
    """Ingest the corpus through the plugin's onSourceText, one source per `batch` units."""
    from mrpvm.protocol.envelope import OnSourceTextPayload, Paths, Request

    t0 = time.perf_counter()
    in_calls_ms = 0.0
    for b, start in enumerate(range(0, corpus.n, batch)):
        source = f"src-{b:05d}"
        units = [corpus.unit(i, source) for i in range(start, min(corpus.n, start + batch))]
        payload = msgspec.convert(
            {"kbId": "kb-bench", "sourceId": source, "sourceName": f"{source}.txt", "units": units},
            OnSourceTextPayload,
        )
        req = Request(
            op="onSourceText",
            prompt=f"index {source}",
            context=[],
            payload=payload,
            paths=Paths(artifacts=str(art)),
        )
        doc, ms = await worker.call(req)
        in_calls_ms += ms
        if doc.result.status != "success":
            raise RuntimeError(f"{plugin_id} onSourceText: {doc.result.status} {doc.result.result}")
    return {"build_s": round(in_calls_ms / 1000.0, 2), "build_wall_s": round(time.perf_counter() - t0, 2)}


class RankBM25:
    """The reference: rank-bm25's BM25Okapi in this process, over the same analysed terms."""

    def __init__(self, corpus: Corpus):
        from rank_bm25 import BM25Okapi

        docs = corpus.analysed()
        before = _rss_mb()
        t0 = time.perf_counter()
        self.bm25 = BM25Okapi(docs)
        self.build_s = time.perf_counter() - t0
        self.rss_mb = _rss_mb() - before
        del docs
        gc.collect()
        self.times: list[float] = []
        self.hits = 0

    def ask(self, target: int, text: str) -> None:
        from mrpvm.plugins.sdk.text import terms

        q = terms(text)
        t = time.perf_counter()
        scores = self.bm25.get_scores(q)
        top = np.argpartition(-scores, 8)[:8] if len(scores) > 8 else np.arange(len(scores))
        self.times.append((time.perf_counter() - t) * 1000.0)
        self.hits += target in set(top.tolist())

    def report(self) -> dict:
        return {
            "build_s": round(self.build_s, 2),
            "p50_ms": round(statistics.median(self.times), 3),
            "p90_ms": round(float(np.percentile(self.times, 90)), 3),
            "queries": len(self.times),
            "index_rss_mb": round(self.rss_mb, 1),
            "hit_rate_top8": round(self.hits / len(self.times), 3),
        }


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


async def query(pid: str, client, questions, art: Path) -> dict:
    """Ask the questions through the warm worker: latency percentiles, the worker's CPU, hit rate."""
    for _target, act, text in questions[:WARMUP]:
        await client.call(retrieve_request(text, act, art))
    cpu0 = sum(cpu_seconds(p) or 0.0 for pid in client.pids() for p in tree(pid))
    times: list[float] = []
    hits = 0
    for target, act, text in questions:
        doc, ms = await client.call(retrieve_request(text, act, art))
        times.append(ms)
        hits += any(u.id.endswith(f"::unit-{target:07d}") for u in doc.units)
    # the plugin's interpreter inside the sandbox included
    pids = [p for pid in client.pids() for p in tree(pid)]
    used = sum(cpu_seconds(p) or 0.0 for p in pids) - cpu0
    rss = [r for r in (peak_rss_mb(p) for p in pids) if r is not None]
    return {
        "worker_cpu_ms_per_query": round(used * 1000.0 / len(questions), 3),
        "p50_ms": round(statistics.median(times), 3),
        "p90_ms": round(float(np.percentile(times, 90)), 3),
        "peak_rss_mb": round(max(rss), 1) if rss else None,
        "artifact_mb": round(sum(f.stat().st_size for f in art.rglob("*") if f.is_file()) / 1e6, 1),
        "hit_rate": round(hits / len(questions), 3),
    }


async def run_all(plugin_ids: list[str], corpus: Corpus, questions, args, workdir: Path) -> dict:
    """Each plugin in turn: build its KB through onSourceText, then ask the questions through the same
    warm worker (one plugin at a time, so one plugin's queries do not evict another's caches); then the
    rank-bm25 reference in this process."""
    results: dict[str, dict] = {}
    for pid in plugin_ids:
        art = workdir / "artifacts" / "kb-bench" / pid
        sup = make_supervisor()
        client = SupervisedWorker(pid, sup) if sup is not None else DirectWorker(pid)
        try:
            results[pid] = {"plugin": pid, "mode": "supervisor" if sup is not None else "direct"}
            results[pid].update(await build(pid, client, corpus, args.batch, art))
            results[pid]["build_kus_per_s"] = round(corpus.n / results[pid]["build_s"])
            results[pid].update(await query(pid, client, questions, art))
            results[pid]["load_avg"] = round(os.getloadavg()[0], 2)
        finally:
            await client.close()
        if not args.keep:  # free the page cache for the next plugin
            shutil.rmtree(art, ignore_errors=True)
        if not args.json:
            print(f"{pid}: {results[pid]}", file=sys.stderr)
    ref = None
    if not args.skip_bm25:
        ref = RankBM25(corpus)
        nq = args.bm25_queries or (len(questions) if corpus.n <= 100_000 else max(5, min(20, len(questions))))
        for target, _, text in questions[:nq]:
            ref.ask(target, text)
    return {"plugins": results, "rank_bm25": ref.report() if ref is not None else None}


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kus", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=10_000, help="units per source (one onSourceText each)")
    ap.add_argument(
        "--bm25-queries", type=int, default=None, help="rank-bm25 queries (default: fewer for large N)"
    )
    ap.add_argument("--plugins", default=",".join(PLUGIN_IDS))
    ap.add_argument("--skip-bm25", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the artifact folder")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    t0 = time.perf_counter()
    corpus = Corpus(args.kus)
    questions = corpus.questions(args.queries)
    gen_s = time.perf_counter() - t0
    workdir = Path(tempfile.mkdtemp(prefix="mrpvm-retrieval-"))
    report: dict = {"kus": args.kus, "queries": args.queries, "corpus_s": round(gen_s, 2), "plugins": {}}
    try:
        wanted = [pid for pid in args.plugins.split(",") if pid]
        present = [pid for pid in wanted if available(pid)]
        out = asyncio.run(run_all(present, corpus, questions, args, workdir))
        report["plugins"] = {pid: out["plugins"].get(pid) for pid in wanted}
        if out["rank_bm25"] is not None:
            report["rank_bm25"] = out["rank_bm25"]
    finally:
        if args.keep:
            report["workdir"] = str(workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    def p50(pid: str):
        entry = report["plugins"].get(pid)
        return entry["p50_ms"] if entry else None

    ref = (report.get("rank_bm25") or {}).get("p50_ms")
    report["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    report["kb_fast_p50_ms"] = p50("kb-fast")
    report["kb_balanced_p50_ms"] = p50("kb-balanced")
    report["kb_thinkingdb_p50_ms"] = p50("kb-thinkingdb")
    report["rank_bm25_p50_ms"] = ref
    report["kb_fast_speedup_vs_rank_bm25"] = (
        round(ref / report["kb_fast_p50_ms"], 1) if ref and report["kb_fast_p50_ms"] else None
    )
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"synthetic KB: {args.kus} atomic KUs, {args.queries} questions (corpus built in {gen_s:.1f} s)")
    print(
        f"load average at the end: {report['load_avg']} (2 cores shared: wall times include waiting for a CPU)"
    )
    print("build s: time inside the onSourceText calls; p50/p90: retrieve through the warm worker;")
    print("cpu ms: the worker's own CPU time per retrieve; hit: the target unit among the selected evidence")
    print(
        f"{'plugin':<15}{'build s':>10}{'KUs/s':>10}{'p50 ms':>10}{'p90 ms':>10}{'cpu ms':>10}"
        f"{'RSS MB':>10}{'disk MB':>10}{'hit':>7}"
    )
    for pid, r in report["plugins"].items():
        if r is None:
            print(f"{pid:<15}{'absent':>10}")
            continue
        print(
            f"{pid:<15}{r['build_s']:>10}{r['build_kus_per_s']:>10}{r['p50_ms']:>10}{r['p90_ms']:>10}"
            f"{r['worker_cpu_ms_per_query']:>10}{r['peak_rss_mb'] or 0:>10}{r['artifact_mb']:>10}{r['hit_rate']:>7}"
        )
    if "rank_bm25" in report:
        r = report["rank_bm25"]
        print(
            f"{'rank-bm25':<15}{r['build_s']:>10}{'':>10}{r['p50_ms']:>10}{r['p90_ms']:>10}{'':>10}{r['index_rss_mb']:>10}"
            f"{'':>10}{r['hit_rate_top8']:>7}   ({r['queries']} queries, in-process)"
        )
        if report["kb_fast_speedup_vs_rank_bm25"]:
            print(f"kb-fast is {report['kb_fast_speedup_vs_rank_bm25']}x faster than rank-bm25 (p50)")


if __name__ == "__main__":
    main()
