#!/usr/bin/env python3
"""N concurrent sessions x M turns against ONE daemon (ours or upstream) over a real KB.

    PERF_OURS=CHECKOUT python3 daemon_kb_load.py --target ours|upstream [--sessions 20] [--turns 50] [--doc FILE]
                              [--json] [--out turns.jsonl] [--pyspy SECONDS] [--symbolic-only]
                              [--daemon-env NAME=VALUE]
                              [--load-questions FILE --distinct] [--counts FILE] [--sqltime FILE]

CHECKOUT: the project checkout with `make setup` done (default: the current folder when it is one); upstream
(optional): PERF_UPSTREAM=a checkout of the original Node.js MRP-VM with `npm install` done.

Fresh home per run. The document is ingested over HTTP (ours: POST /kbs, /sessions {kb},
/sessions/ID/workspace/sources; upstream: POST /kbs, /sessions {kb_id}, .../workspace/sources,
.../kb/save), then one warm-up session asks every question once (workers start), then `sessions`
clients each open a session on the KB and ask `turns` questions back to back (closed loop, keep-alive,
non-streaming). Reports latency p50/p90/p99, turns/s, errors, CPU seconds per turn by process (the
daemon's whole process tree, /proc utime+stime), RSS/PSS of the tree after the load, and the per-plugin
call times (from each turn's execution trace) of the median turns vs the slowest 1 %. `--counts`: each
plugin.op's calls and worker jobs (wake-ups) a turn during the load (`per_turn`). `--sqltime`: the daemon's
SQLite statements, their calls and thread CPU a turn during the load (`sql_per_turn`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfkit as pk  # noqa: E402


async def ingest_http(d: pk.Daemon, doc: Path, kb: str) -> dict:
    c = pk.Client(d.port)
    text = doc.read_text()
    t0 = time.perf_counter()
    if d.kind == "ours":
        await c.json("POST", "/kbs", {"name": kb})
        sid = (await c.json("POST", "/sessions", {"kb": kb}))["session_id"]
        t1 = time.perf_counter()
        r = await c.json(
            "POST", f"/sessions/{sid}/workspace/sources", {"text": text, "source_name": doc.name}
        )
        t2 = time.perf_counter()
        units = sum(s.get("unit_count", 0) for s in r.get("sources", []))
        ref = {"kb": kb}
        save = 0.0
    else:
        kb_id = (await c.json("POST", "/kbs", {"name": kb}))["kb_id"]
        sid = (await c.json("POST", "/sessions", {"kb_id": kb_id}))["session_id"]
        t1 = time.perf_counter()
        r = await c.json("POST", f"/sessions/{sid}/workspace/sources", {"content": text, "name": doc.name})
        t2 = time.perf_counter()
        await c.json("POST", f"/sessions/{sid}/kb/save", {})
        save = time.perf_counter() - t2
        units = r.get("unitCount", 0)
        ref = {"kb_id": kb_id}
    await c.aclose()
    return {
        "ingest_s": round(t2 - t1, 3),
        "save_s": round(save, 3),
        "units": units,
        "ref": ref,
        "setup_s": round(t1 - t0, 3),
    }


async def settle(pid: int, quiet_s: float, cap_s: float = 120.0) -> float:
    """Wait until the daemon's tree has been quiet (< 30 ms CPU a second) for `quiet_s` seconds: work the
    ingest and the warm-up left running (a kb-plugin encoding the rest of a source, idle workers loading
    the sentence model, ~0.5 s CPU each) then stays out of the per-turn CPU. Returns the seconds waited."""
    t0 = time.perf_counter()
    quiet_since = t0
    before = sum(pk.cpu_by_name(pid).values())
    while quiet_s > 0 and time.perf_counter() - quiet_since < quiet_s and time.perf_counter() - t0 < cap_s:
        await asyncio.sleep(1.0)
        now = sum(pk.cpu_by_name(pid).values())
        if now - before > 0.03:
            quiet_since = time.perf_counter()
        before = now
    return round(time.perf_counter() - t0, 1)


def turn_body(kind: str, q: str, sid: str) -> dict:
    if kind == "ours":
        return {"message": q, "session_id": sid, "stream": False}
    return {"messages": [{"role": "user", "content": q}], "session_id": sid, "stream": False}


def parse_turn(kind: str, status: int, headers: dict, payload: bytes) -> dict:
    rec: dict = {"http": status}
    try:
        r = json.loads(payload)
    except ValueError:
        return rec | {"ok": False}
    calls: list[tuple[str, float]] = []
    if kind == "ours":
        rec["status"] = r.get("status")
        rec["engine_ms"] = r.get("duration_ms")
        st = headers.get("server-timing", "")
        rec["server_ms"] = float(st.split("dur=")[1]) if "dur=" in st else None
        for n in (r.get("execution_trace") or {}).get("nodes", []):
            if n.get("kind") == "plugin":
                calls.append((f"{n.get('pluginId')}.{n.get('op')}", n.get("durationMs") or 0.0))
        rec["answer"] = (r.get("answer_markdown") or "")[:160]
    else:
        tr = r.get("execution_trace") or {}
        rec["status"] = tr.get("finalStatus")
        rec["engine_ms"] = None
        for s in tr.get("stages", []):
            calls.append((f"{s.get('pluginId')}.{s.get('stage')}", s.get("durationMs") or 0.0))
        ch = r.get("choices") or [{}]
        rec["answer"] = ((ch[0].get("message") or {}).get("content") or "")[:160]
    rec["calls"] = calls
    # an error is a transport or HTTP failure, or a turn that failed; a weak answer is an answer
    rec["ok"] = status == 200 and rec.get("status") not in (None, "failure", "error", "failed")
    return rec


async def run_load(
    d: pk.Daemon, ref: dict, qs: list[str], sessions: int, turns: int, distinct: bool = False
) -> tuple[list[dict], float]:
    clients = [pk.Client(d.port) for _ in range(sessions)]
    body = {"kb": ref["kb"]} if d.kind == "ours" else {"kb_id": ref["kb_id"]}
    sids = [(await c.json("POST", "/sessions", body))["session_id"] for c in clients]
    records: list[dict] = []

    async def worker(k: int) -> None:
        c, sid = clients[k], sids[k]
        for i in range(turns):
            q = qs[(k * turns + i if distinct else k + i) % len(qs)]
            t = time.perf_counter()
            try:
                status, headers, payload = await c.request(
                    "POST", "/chat/completions", turn_body(d.kind, q, sid)
                )
            except Exception as err:  # noqa: BLE001
                records.append(
                    {"ok": False, "error": repr(err)[:200], "latency_ms": (time.perf_counter() - t) * 1e3}
                )
                await c.aclose()
                continue
            rec = parse_turn(d.kind, status, headers, payload)
            rec["latency_ms"] = (time.perf_counter() - t) * 1e3
            rec["q"] = q
            records.append(rec)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(k) for k in range(sessions)))
    elapsed = time.perf_counter() - t0
    for c in clients:
        await c.aclose()
    return records, elapsed


def call_parts(rows: list, t0: float, t1: float) -> dict:
    """Per plugin.op during the load: calls, and median / p99 ms of pre, queue, worker, resume, post, total."""
    by: dict[str, list] = {}
    for r in rows:
        if t0 <= r[1] <= t1:
            by.setdefault(r[0], []).append(r[2:])
    out = {}
    for k, v in sorted(by.items(), key=lambda kv: -len(kv[1])):
        cols = list(zip(*v))  # noqa: B905
        out[k] = {"calls": len(v)} | {
            name: [round(pk.pct(list(c), 0.5) * 1e3, 2), round(pk.pct(list(c), 0.99) * 1e3, 2)]
            for name, c in zip(("pre", "queue", "worker", "resume", "post", "total"), cols)  # noqa: B905
        }
    return out


def call_profile(recs: list[dict]) -> dict[str, float]:
    """Mean per-turn ms spent in each plugin.op (sum over the turn's calls), over the given turns."""
    tot: dict[str, float] = {}
    for r in recs:
        for name, ms in r.get("calls", []):
            tot[name] = tot.get(name, 0.0) + ms
    n = max(1, len(recs))
    return {k: round(v / n, 1) for k, v in sorted(tot.items(), key=lambda kv: -kv[1])}


def sql_per_turn(rows: list[dict], turns: int) -> dict:
    """daemon_sqltime.py's statements over the load's turns: the daemon's SQLite CPU µs a turn, in all and
    for the statements costing most (calls a turn, µs a turn)."""
    top = [
        {"sql": r["sql"], "calls": round(r["calls"] / turns, 3), "us": round(r["cpu_us"] / turns, 1)}
        for r in rows
    ]
    return {"cpu_us": round(sum(r["cpu_us"] for r in rows) / turns, 1), "statements": top[:15]}


def per_turn(counts: dict, turns: int) -> dict:
    """daemon_call_counts.py's counts over the load's turns: calls and worker jobs a turn per plugin.op,
    and the worker jobs a turn in all (the wake-ups a worker's refill scales with)."""
    jobs = counts.get("worker_jobs", {})
    return {
        "calls": {k: round(v / turns, 3) for k, v in sorted(counts.get("calls", {}).items())},
        "worker_jobs": {k: round(v / turns, 3) for k, v in sorted(jobs.items())},
        "worker_jobs_total": round(sum(jobs.values()) / turns, 3),
    }


async def main_async(a: argparse.Namespace) -> dict:
    qs = pk.questions(Path(a.questions) if a.questions else None)
    pk.need_ours() if a.target == "ours" else pk.need_upstream()
    home = a.home or pk.new_home(f"perf-{a.target}-")
    os.makedirs(home, exist_ok=True)
    reuse = bool(a.home) and a.target == "ours" and os.path.exists(os.path.join(home, "perf-ingest.json"))
    extra = dict(item.split("=", 1) for item in a.daemon_env or [])  # e.g. MRPVM_EVENT_LOOP=asyncio
    if a.symbolic_only and a.target == "ours":
        extra["MRPVM_ENABLED_PLUGINS"] = (
            "sd-symbolic,planner-default,kb-fast,kb-balanced,kb-thinkingdb,gs-symbolic"
        )
    argv = None
    # A daemon wrapped by one measuring script (the last one asked for wins): env var, its value, the script.
    wrappers = [
        (a.calltimer, "PERF_CALLTIMES", os.path.join(home, "calltimes.json"), "daemon_calltimer.py"),
        (a.requests, "PERF_REQUESTS", a.requests, "daemon_requests.py"),
        (a.cprofile, "PERF_CPROFILE", a.cprofile and os.path.abspath(a.cprofile), "daemon_cprofile.py"),
        (a.waits, "PERF_WAITS", a.waits and os.path.abspath(a.waits), "daemon_waits.py"),
        (a.pauses, "PERF_PAUSES", a.pauses and os.path.abspath(a.pauses), "daemon_pauses.py"),
        (a.counts, "PERF_COUNTS", a.counts and os.path.abspath(a.counts), "daemon_call_counts.py"),
        (a.sqltime, "PERF_SQLTIME", a.sqltime and os.path.abspath(a.sqltime), "daemon_sqltime.py"),
    ]
    if a.requests:
        os.makedirs(a.requests, exist_ok=True)
    for wanted, variable, value, script in wrappers:
        if wanted and a.target == "ours":
            extra[variable] = value
            argv = [str(pk.OURS / ".venv/bin/python"), str(pk.HERE / script), "serve", "--port", "0"]
    d = pk.start_ours(home, extra, argv) if a.target == "ours" else pk.start_upstream(home)
    out: dict = {"target": a.target, "sessions": a.sessions, "turns_per_session": a.turns}
    spy = None
    try:
        if reuse:  # --home named a home this script already ingested the document into
            ing = json.loads(Path(home, "perf-ingest.json").read_text())
        else:
            ing = await ingest_http(d, Path(a.doc), "perfkb")
            if a.home:
                Path(home, "perf-ingest.json").write_text(json.dumps(ing))
        out["ingest"] = {k: v for k, v in ing.items() if k != "ref"} | {"reused": reuse}
        # warm-up: every question once in one session (starts the workers)
        c = pk.Client(d.port)
        body = {"kb": ing["ref"]["kb"]} if d.kind == "ours" else {"kb_id": ing["ref"]["kb_id"]}
        sid = (await c.json("POST", "/sessions", body))["session_id"]
        warm = []
        for q in qs:
            t = time.perf_counter()
            st, h, p = await c.request("POST", "/chat/completions", turn_body(d.kind, q, sid))
            rec = parse_turn(d.kind, st, h, p)
            rec["latency_ms"] = (time.perf_counter() - t) * 1e3
            warm.append(rec)
        await c.aclose()
        out["warmup_c1_p50_ms"] = round(pk.med([r["latency_ms"] for r in warm]), 2)
        out["warmup_ok"] = sum(r["ok"] for r in warm)
        out["sample_answers"] = [(r.get("q", qs[i]), r.get("answer")) for i, r in enumerate(warm[:3])]
        out["settle_s"] = await settle(d.proc.pid, a.settle)
        if a.cprofile or a.waits or a.pauses or a.counts or a.sqltime:
            os.kill(d.proc.pid, signal.SIGUSR1)  # daemon_cprofile/waits/pauses/call_counts.py: the load only
        mem_before = pk.memory(d.proc.pid)
        cpu0 = pk.cpu_by_name(d.proc.pid)
        sys0 = pk.cpu_by_name(d.proc.pid, system_only=True)
        load0 = pk.loadavg()
        sched0 = pk.sched_stats(d.proc.pid)
        if a.pyspy:
            # --pyspy-gil: the daemon alone, samples only while its thread holds the GIL (a pipe write
            # releases it, so a preempted write is not counted as work); read with bench/pyspy_shares.py
            who = "--gil" if a.pyspy_gil else "--subprocesses"
            spy_argv = f"record -p {d.proc.pid} -d {a.pyspy} {who} --nonblocking -r {a.pyspy_rate} -f raw -o"
            spy = subprocess.Popen(
                [str(pk.OURS / ".venv/bin/py-spy"), *spy_argv.split(), a.pyspy_out],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            await asyncio.sleep(1.0)
        t_load0 = time.perf_counter()
        load_qs = pk.questions(Path(a.load_questions)) if a.load_questions else qs
        recs, elapsed = await run_load(d, ing["ref"], load_qs, a.sessions, a.turns, a.distinct)
        t_load1 = time.perf_counter()
        cpu1 = pk.cpu_by_name(d.proc.pid)
        sys1 = pk.cpu_by_name(d.proc.pid, system_only=True)
        sched1 = pk.sched_stats(d.proc.pid)
        mem_after = pk.memory(d.proc.pid)
        if spy is not None:
            spy.wait(a.pyspy + 600)  # a loaded host: the load may outlast the recording by minutes
            out["pyspy_stderr"] = (spy.stderr.read() if spy.stderr else "")[-500:]
    finally:
        d.stop()
        ct = os.path.join(home, "calltimes.json")
        if a.calltimer and os.path.exists(ct) and "t_load1" in locals():
            out["call_parts_ms"] = call_parts(json.load(open(ct)), t_load0, t_load1)  # noqa: SIM115
        if a.waits and os.path.exists(a.waits):
            out["waits_for_last_outcome"] = json.loads(Path(a.waits).read_text())
        if a.pauses and os.path.exists(a.pauses):
            out["pauses"] = json.loads(Path(a.pauses).read_text())
        if a.counts and os.path.exists(a.counts) and "recs" in locals():
            out["per_turn"] = per_turn(json.loads(Path(a.counts).read_text()), len(recs))
        if a.sqltime and os.path.exists(a.sqltime) and "recs" in locals():
            out["sql_per_turn"] = sql_per_turn(json.loads(Path(a.sqltime).read_text()), len(recs))
        if not a.keep and not a.home:
            shutil.rmtree(home, ignore_errors=True)
    lat = [r["latency_ms"] for r in recs]
    ok = [r for r in recs if r.get("ok")]
    errors = len(recs) - len(ok)
    srt = sorted(recs, key=lambda r: r["latency_ms"])
    slow = srt[-max(1, len(srt) // 100) :]
    mid = srt[len(srt) // 2 - len(srt) // 20 : len(srt) // 2 + len(srt) // 20]
    cpu = pk.cpu_delta(cpu0, cpu1)
    total_cpu = sum(cpu.values())
    status_counts: dict[str, int] = {}
    for r in recs:
        status_counts[str(r.get("status"))] = status_counts.get(str(r.get("status")), 0) + 1
    out |= {
        "turns": len(recs),
        "errors": errors,
        "statuses": status_counts,
        "p50_ms": round(pk.pct(lat, 0.5), 1),
        "p90_ms": round(pk.pct(lat, 0.9), 1),
        "p99_ms": round(pk.pct(lat, 0.99), 1),
        "max_ms": round(max(lat), 1),
        "turns_per_s": round(len(recs) / elapsed, 1),
        "elapsed_s": round(elapsed, 2),
        "cpu_ms_per_turn": round(total_cpu * 1000 / len(recs), 2),
        "cpu_ms_per_turn_by_process": {k: round(v * 1000 / len(recs), 2) for k, v in cpu.items() if v > 0},
        "sys_cpu_ms_per_turn_by_process": {
            k: round(v * 1000 / len(recs), 2) for k, v in pk.cpu_delta(sys0, sys1).items() if v > 0
        },
        "loadavg_before_after": [load0, pk.loadavg()],
        # the event loop's thread: ms on a CPU vs ms runnable but waiting for one, a turn (the loop's lag)
        "daemon_sched_per_turn": pk.sched_per_turn(sched0, sched1, len(recs)),
        "memory_before_load": mem_before,
        "memory_after_load": mem_after,
        "calls_ms_median_turns": call_profile(mid),
        "calls_ms_slowest_1pct": call_profile(slow),
        "slowest_turns": [
            {
                "latency_ms": round(r["latency_ms"], 1),
                "server_ms": r.get("server_ms"),
                "engine_ms": r.get("engine_ms"),
                "q": r.get("q"),
                "calls": r.get("calls"),
            }
            for r in slow[-3:]
        ],
    }
    if a.target == "ours":
        srv = [r["server_ms"] for r in recs if r.get("server_ms") is not None]
        gap = [r["latency_ms"] - r["server_ms"] for r in recs if r.get("server_ms") is not None]
        eng = [r["engine_ms"] for r in recs if r.get("engine_ms") is not None]
        out["server_timing_p50_p99_ms"] = [round(pk.pct(srv, 0.5), 1), round(pk.pct(srv, 0.99), 1)]
        out["engine_p50_p99_ms"] = [round(pk.pct(eng, 0.5), 1), round(pk.pct(eng, 0.99), 1)]
        out["http_gap_p50_p99_ms"] = [round(pk.pct(gap, 0.5), 1), round(pk.pct(gap, 0.99), 1)]
    if a.out:
        with open(a.out, "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["ours", "upstream"], default="ours")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--doc", default=str(pk.CORPUS / "node-crypto.md"))
    ap.add_argument("--questions", default=None)
    ap.add_argument(
        "--load-questions",
        help="ask these during the load (the warm-up still asks --questions): questions the workers have not "
        "seen, e.g. corpus/questions-crypto-novel.txt (use a copy of a settled home per run)",
    )
    ap.add_argument(
        "--distinct",
        action="store_true",
        help="each session asks its own slice of the questions (no repeats)",
    )
    ap.add_argument(
        "--settle",
        type=float,
        default=8.0,
        help="seconds the tree must stay quiet after the warm-up before the load (0: start at once)",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", default=None, help="write every turn as JSON lines")
    ap.add_argument(
        "--pyspy", type=int, default=0, help="py-spy record the daemon tree for N s during the load"
    )
    ap.add_argument("--pyspy-out", default=str(pk.TMP / "perf-pyspy.txt"))
    ap.add_argument("--pyspy-gil", action="store_true", help="py-spy: the daemon only, GIL-holding samples")
    ap.add_argument("--pyspy-rate", type=int, default=200, help="py-spy: samples a second")
    ap.add_argument("--symbolic-only", action="store_true", help="ours: enable only the symbolic plugins")
    ap.add_argument("--keep", action="store_true", help="keep the home folder")
    ap.add_argument(
        "--cprofile", help="ours: cProfile the daemon's event loop during the load into this file"
    )
    ap.add_argument(
        "--requests",
        help="ours: a folder for each plugin call's request/reply sizes and sample bodies (daemon_requests.py)",
    )
    ap.add_argument(
        "--home",
        help="ours: use and keep this home; the document is ingested only on the first run (A/B runs of "
        "one checkout skip the ingest; use one home per checkout)",
    )
    ap.add_argument(
        "--daemon-env",
        action="append",
        metavar="NAME=VALUE",
        help="ours: set this in the daemon's environment (repeatable), e.g. MRPVM_EVENT_LOOP=asyncio to A/B "
        "a setting on one checkout and one home",
    )
    ap.add_argument(
        "--counts",
        help="ours: count each plugin.op's calls and worker jobs (wake-ups) during the load (file; "
        "daemon_call_counts.py), reported per turn",
    )
    ap.add_argument(
        "--sqltime",
        help="ours: each SQLite statement's calls and thread CPU during the load (file; daemon_sqltime.py)",
    )
    ap.add_argument("--waits", help="ours: time each turn's wait for its session's last recordOutcome (file)")
    ap.add_argument(
        "--pauses",
        help="ours: what stopped the daemon's event loop during the load: GC, SQLite commits (file; daemon_pauses.py)",
    )
    ap.add_argument(
        "--calltimer",
        action="store_true",
        help="ours: run the daemon under daemon_calltimer.py and report each call's parts",
    )
    a = ap.parse_args()
    out = asyncio.run(main_async(a))
    if a.json:
        print(json.dumps(out))
        return
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
