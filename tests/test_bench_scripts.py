"""The benchmark scripts still run end to end (tiny sizes) and print the figures their notes quote.

No timing is asserted here: a bench can break silently (a plugin that cannot read its script inside the
sandbox made every bench turn fail) and nobody notices until the figures are needed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from mrpvm.kernel.config import PROJECT_ROOT

BENCH = PROJECT_ROOT / "bench"


def run_bench(script: str, *args: str, timeout: float = 300.0) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=PROJECT_ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_turn_latency_bench_runs_successful_turns() -> None:
    figures = run_bench("turn_latency.py", "--turns", "3", "--warmup", "1")
    assert figures["turns"] == 3
    # planner pre/post, sd, kb notification, kb, gs, validator, recordOutcome: every stage was called
    assert figures["plugin_calls_per_turn"] >= 7
    assert figures["turn_p50_ms"] >= figures["kernel_overhead_p50_ms"] > 0


def test_daemon_load_bench_answers_every_turn() -> None:
    figures = run_bench("daemon_load.py", "--turns", "8")
    assert figures["turns_c1"] == 8 and figures["turns_c8"] == 8
    assert figures["turn_p50_ms_c1"] >= figures["engine_p50_ms_c1"] > 0


def test_sd_symbolic_ingest_bench_builds_units() -> None:
    figures = run_bench("sd_symbolic_ingest.py", "--mb", "0.05")
    assert figures["kus"] > 50
    assert figures["sd_symbolic_kus_per_s"] > 0


@pytest.mark.parametrize("plugin", ["kb-fast"])
def test_retrieval_bench_finds_its_targets(plugin: str) -> None:
    figures = run_bench(
        "retrieval.py", "--kus", "2000", "--queries", "20", "--plugins", plugin, "--skip-bm25"
    )
    text = json.dumps(figures)
    assert plugin in text
    rates = [v for k, v in _flatten(figures) if k == "hit_rate"]
    assert rates and max(rates) > 0.5, figures
    # the worker's own figures, read through the sandbox's pid namespace (not bwrap's ~2 MB, 0 ms)
    assert min(v for k, v in _flatten(figures) if k == "peak_rss_mb") > 15, figures
    assert min(v for k, v in _flatten(figures) if k == "worker_cpu_ms_per_query") > 0, figures


def _flatten(value: object, prefix: str = "") -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_flatten(item, str(key)))
    elif isinstance(value, list):
        for item in value:
            out.extend(_flatten(item, prefix))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.append((prefix, float(value)))
    return out


def test_embedding_bench_reports_throughput_and_memory() -> None:
    figures = run_bench("embedding.py", "--units", "20")
    # the shared 1.1 MB corpus when ../shared is present, else a smaller example (15 units of its own)
    assert figures["units_in_source"] > 0
    assert figures["units_encoded"] == min(20, figures["units_in_source"])
    assert figures["tokens"] > figures["units_encoded"]
    assert figures["units_per_s"] > 0 and figures["units_per_cpu_s"] > 0
    assert figures["rss_with_model_mb"] >= figures["rss_before_mb"] > 0
    assert figures["graph"] == "cache"  # make setup built it; a worker only opens it
    assert figures["memory_now_mb"]["rss"] >= figures["memory_now_mb"]["pss"] > 0


def test_ask_daemon_bench_times_asks_answered_by_the_daemon() -> None:
    figures = run_bench("ask_daemon.py", "--runs", "1")
    (cli,) = [k for k in figures if k != "load_average"]
    assert set(figures[cli]) == {"wall_ms", "cli_cpu_ms", "turn_in_daemon_ms"}


def test_store_nodes_bench_answers_on_every_backend() -> None:
    figures = run_bench("store_nodes.py", "--turns", "6", "--clients", "2", timeout=600)
    for name in ("sqlite_1", "pg_1", "pg_3"):
        assert figures[f"turns_{name}"] == 6 and figures[f"failed_{name}"] == 0
        assert figures[f"p99_ms_{name}"] >= figures[f"p50_ms_{name}"] > 0


def test_ingest_stage_cpu_bench_times_every_stage() -> None:
    figures = run_bench("ingest_stage_cpu.py", str(PROJECT_ROOT / "examples" / "tessel-build.md"))
    assert figures["units"] > 10 and figures["reply_bytes"] > 0 and figures["units_file_bytes"] > 0
    for stage in (
        "sd_run",
        "sd_render",
        "kernel_parse",
        "kernel_units_file",
        "kb-fast_upsert",
        "kb-thinkingdb_upsert",
    ):
        assert figures[f"{stage}_cpu_s"] >= 0


def test_ingest_pipeline_ceiling_bench_runs_both_orders() -> None:
    rows = run_bench(
        "ingest_pipeline_ceiling.py", str(PROJECT_ROOT / "examples" / "tessel-build.md"), "--rounds", "1"
    )
    assert len(rows) == 1 and rows[0]["units"] > 10
    assert rows[0]["today_s"] >= rows[0]["today_build_s"] > 0
    assert rows[0]["pipelined_s"] >= rows[0]["pipelined_build_s"] > 0
    assert len(rows[0]["today_kb_cpu_s"]) == len(rows[0]["pipelined_kb_cpu_s"]) == 2


def test_ingest_store_ab_bench_reports_each_checkouts_write_stages() -> None:
    figures = run_bench(
        "ingest_store_ab.py",
        str(PROJECT_ROOT / "examples" / "tessel-build.md"),
        "--checkout",
        str(PROJECT_ROOT),
        "--rounds",
        "1",
    )
    (medians,) = figures["medians"].values()
    for stage in ("kernel_commit", "kb-fast_upsert", "kb-thinkingdb_upsert"):
        assert medians[f"{stage}_cpu_median"] >= 0 and medians[f"{stage}_wall_median"] > 0


def test_handoff_beside_commit_bench_times_both_orders() -> None:
    figures = run_bench(
        "handoff_beside_commit.py", str(PROJECT_ROOT / "examples" / "tessel-build.md"), "--rounds", "1"
    )
    assert figures["units"] > 10
    for mode in ("alone", "beside"):
        assert figures["median"][mode]["encode_wall_s"] > 0 and figures["median"][mode]["commit_wall_s"] > 0


def test_a_serving_daemon_freezes_its_start_and_collects_young_objects_less_often(tmp_path) -> None:
    """`mrpvm serve` under bench/daemon_pauses.py (the wrapper `daemon_kb_load.py --pauses` runs): once it serves,
    its start is out of the collector's sight and young collections run at SERVING_THRESHOLD."""
    from mrpvm.protocol.gc_pause import SERVING_THRESHOLD

    out = tmp_path / "gc.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")} | {
        "MRPVM_HOME": str(tmp_path / "home"),
        "MRPVM_ENABLED_PLUGINS": "sd-symbolic,planner-default,kb-fast,gs-symbolic",
        "PERF_PAUSES": str(out),
    }
    argv = [sys.executable, str(BENCH / "daemon_pauses.py"), "serve", "--port", "0"]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("mrpvm: serving on "):
                break
        assert lines and lines[-1].startswith("mrpvm: serving on "), "".join(lines)[-2000:]
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    figures = json.loads(out.read_text())
    assert figures["frozen_objects"] > 10_000  # modules, the app, the registry, the pools
    assert figures["threshold"][0] == SERVING_THRESHOLD


def test_reply_parse_bench_times_every_recorded_op() -> None:
    replies = PROJECT_ROOT / "tests" / "protocol" / "replies"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "reply_parse.py"), str(replies), "--rounds", "1", "--passes", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT_ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    ops = {path.name.split(".")[0] + "." + path.name.split(".")[1] for path in replies.glob("*.md")}
    assert {line.split(":")[0] for line in lines} == ops
    assert all(" µs a reply" in line for line in lines)


def test_sd_compiled_probe_builds_and_digests_the_interpreted_side(tmp_path) -> None:
    """The probe's measuring side, without the minutes of compiling (`--interpreted-only`)."""
    source = tmp_path / "kettle.md"
    source.write_text(
        "# Kettles\n\nA kettle boils water. It switches off at 100 degrees.\n\n"
        "## Descaling\n\n1. Fill it with vinegar.\n2. Wait an hour.\n3. Rinse it twice.\n"
    )
    figures = run_bench(
        "sd_compiled_probe.py", str(source), "--rounds", "1", "--pairs", "1", "--interpreted-only"
    )
    assert figures["units"] > 3
    assert len(figures["interpreted"]["digests"]) == 1
    assert figures["interpreted"]["compiled"] is False
    assert "compiled" not in figures


def small_daemon_load(tmp_path, *flags: str) -> dict:
    """`daemon_kb_load.py` over an invented two-section document, 2 sessions × 3 turns, symbolic plugins."""
    doc = tmp_path / "kiln.md"
    doc.write_text(
        "# Kiln firing\n\nA bisque firing heats the clay to 1000 degrees. A glaze firing follows it.\n\n"
        "## Cooling\n\nThe kiln cools for twelve hours before it is opened.\n"
    )
    questions = tmp_path / "q.txt"
    questions.write_text("How hot is a bisque firing?\nHow long does the kiln cool?\n")
    return run_bench(
        "daemon_kb_load.py",
        *("--symbolic-only", "--sessions", "2", "--turns", "3", "--settle", "0"),
        *("--doc", str(doc), "--questions", str(questions), *flags),
    )


def test_daemon_kb_load_counts_each_ops_worker_jobs_a_turn(tmp_path) -> None:
    """`daemon_kb_load.py --counts` (bench/daemon_call_counts.py): the load's calls and worker jobs a turn per
    plugin.op; an ordinary turn wakes the sd-plugin once and the planner once for its plan (the daemon's
    recordOutcome goes out batched: at most one call a turn, and the warm-up's last one may fall in the load)."""
    figures = small_daemon_load(tmp_path, "--counts", str(tmp_path / "counts.json"))
    assert figures["turns"] == 6 and figures["errors"] == 0
    jobs = figures["per_turn"]["worker_jobs"]
    assert jobs["sd-symbolic.detectSeeds"] == 1.0 and jobs["planner-default.buildPlan"] == 1.0
    assert jobs.get("planner-default.recordOutcome", 0.0) <= 1.2  # 7 outcomes over 6 turns at most
    assert figures["per_turn"]["worker_jobs_total"] >= 3.0  # sd, the plan, at least one retrieve


def test_daemon_kb_load_waits_reports_what_a_wait_is_made_of(tmp_path) -> None:
    """`daemon_kb_load.py --waits` (bench/daemon_waits.py): a later turn of a session waits for its last
    recordOutcome; the summary gives those waits and their parts (each outcome call, each fold, the loop's
    lag), counted, not timed against any figure."""
    figures = small_daemon_load(tmp_path, "--waits", str(tmp_path / "waits.json"))
    assert figures["turns"] == 6 and figures["errors"] == 0
    waits = figures["waits_for_last_outcome"]
    # a session's second and third turns (its first may follow the warm-up)
    assert waits["turns_that_waited"] >= 1
    parts = waits["parts_p50_p90_p99_max_ms"]
    assert set(parts) == {"outcome_call", "fold", "loop_lag"}
    assert parts["outcome_call"]["n"] >= 1 and parts["loop_lag"]["n"] >= 1
    assert all(len(p["ms"]) == 4 for p in parts.values())


def test_daemon_kb_load_splits_the_loops_time_into_running_and_waiting_for_a_cpu(tmp_path) -> None:
    """`daemon_kb_load.py` reports the event loop's thread a turn as the scheduler saw it (perfkit.sched_stats,
    /proc/PID/schedstat and status): ms on a CPU, ms runnable but waiting for one, and its context switches —
    what the loop's lag is made of on a loaded host. Counted, not timed against any figure."""
    figures = small_daemon_load(tmp_path)
    assert figures["turns"] == 6 and figures["errors"] == 0
    sched = figures["daemon_sched_per_turn"]
    if not sched:  # a kernel without schedstat
        pytest.skip("no /proc/PID/schedstat")
    assert set(sched) == {"run_ms", "runqueue_wait_ms", "voluntary_switches", "involuntary_switches"}
    assert sched["run_ms"] > 0 and sched["voluntary_switches"] > 0  # an idle loop sleeps between turns
    assert all(v >= 0 for v in sched.values())


def test_daemon_kb_load_sqltime_gives_the_daemons_sqlite_cpu_a_turn(tmp_path) -> None:
    """`daemon_kb_load.py --sqltime` (bench/daemon_sqltime.py): every statement the daemon ran during the load,
    its calls and thread CPU a turn; a turn commits once (one COMMIT a turn of the turn's own transaction,
    counted under its first statement) and reads its session. Counted, not timed against any figure."""
    figures = small_daemon_load(tmp_path, "--sqltime", str(tmp_path / "sql.json"))
    assert figures["turns"] == 6 and figures["errors"] == 0
    sql = figures["sql_per_turn"]
    assert sql["cpu_us"] > 0
    calls = {s["sql"]: s["calls"] for s in sql["statements"]}
    commits = [c for k, c in calls.items() if k.startswith("COMMIT of: UPDATE sessions")]
    assert commits == [1.0]
    assert any(k.startswith("SELECT") and "FROM sessions" in k for k in calls)
