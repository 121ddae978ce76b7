"""Per-stage breakdown of `mrpvm ingest --kb x FILE` (cold: fresh MRPVM_HOME, workers start), in-process.

    CHECKOUT/.venv/bin/python ingest_breakdown.py FILE [--profile OUT.pstats] [--json] [--dump DIR]

Runs the real CLI entry point (mrpvm.shells.cli.main.main) with timers wrapped around, without changing
the project: KernelContext.open/aclose, normalize_text (the sd-plugin stage, chunks + tree merge),
Supervisor._worker_call per plugin.op (send -> reply on the pipe: the plugin's own work, plus the
worker's start on its first call), the kernel's CNL parse (parse_document) and request encoding
(encode_request) per op, Store.replace_source (SQLite), notify_source (every kb-plugin's onSourceText,
in parallel), reoffer, and the whole process wall time. --profile: cProfile of the kernel process.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import sys
import tempfile
import time
from typing import Any

T0 = time.perf_counter()
stats: dict[str, list[float]] = {}
spans: list[tuple[float, float, str]] = []  # (start, end) since the process started, per timed call


def add(key: str, secs: float) -> None:
    stats.setdefault(key, []).append(secs)
    end = time.perf_counter() - T0
    spans.append((end - secs, end, key))


def wrap_async(owner, name, key_fn):
    orig = getattr(owner, name)

    @functools.wraps(orig)
    async def w(*a, **k):
        t = time.perf_counter()
        try:
            return await orig(*a, **k)
        finally:
            add(key_fn(a, k), time.perf_counter() - t)

    setattr(owner, name, w)


def wrap_sync(owner, name, key_fn):
    orig = getattr(owner, name)

    @functools.wraps(orig)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            add(key_fn(a, k), time.perf_counter() - t)

    setattr(owner, name, w)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--timeline", action="store_true", help="also print each timed call's start and end")
    ap.add_argument("--dump", default=None, help="write each plugin request body to DIR/<n>-<op>.json")
    ap.add_argument(
        "--plugins",
        default=None,
        help="only these plugins enabled (MRPVM_ENABLED_PLUGINS), e.g. sd-symbolic,kb-fast,kb-thinkingdb: "
        "the lexical kb-plugins without kb-balanced's dense (semantic) view",
    )
    ap.add_argument(
        "--timeout-ms",
        type=int,
        default=0,
        help="give every plugin at least this deadline (a loaded machine: sd-symbolic's 10 s is too short "
        "for 1 MB there); bench only, the project is unchanged",
    )
    a = ap.parse_args()
    home = tempfile.mkdtemp(prefix="ingbd-")
    for k in [k for k in os.environ if k.startswith("MRPVM_")]:
        del os.environ[k]
    os.environ["MRPVM_HOME"] = home
    if a.plugins:
        os.environ["MRPVM_ENABLED_PLUGINS"] = a.plugins

    t_imp = time.perf_counter()
    import mrpvm.kernel.context as kctx
    import mrpvm.kernel.store as kstore
    import mrpvm.kernel.supervisor.core as core
    import mrpvm.knowledge.ingest as king
    from mrpvm.shells.cli.main import main as cli_main

    add("import kernel+cli modules", time.perf_counter() - t_imp)

    if a.timeout_ms:
        try:  # the per-plugin state: kernel/supervisor/plugin_state.py (core._Plugin before the split)
            from mrpvm.kernel.supervisor.plugin_state import PluginState as state_class
        except ImportError:
            state_class = core._Plugin
        init = state_class.__init__

        def longer(self, *args, **kw):
            init(self, *args, **kw)
            self.timeout_ms = max(self.timeout_ms, a.timeout_ms)

        state_class.__init__ = longer
    wrap_async(kctx.KernelContext, "open", lambda a, k: "KernelContext.open")
    wrap_async(kctx.KernelContext, "aclose", lambda a, k: "KernelContext.aclose (workers stop)")
    wrap_async(king, "normalize_text", lambda a, k: "normalize_text (sd stage, total)")
    wrap_async(king, "notify_source", lambda a, k: "notify_source (3 kb onSourceText, parallel, total)")
    wrap_async(king, "reoffer", lambda a, k: "reoffer (owed sources)")
    wrap_sync(kstore.Store, "replace_source", lambda a, k: "Store.replace_source (SQLite)")
    if hasattr(kstore.Store, "hold_removals"):  # the kb notice beside the commit (issue 22, session 20)
        wrap_sync(kstore.Store, "hold_removals", lambda a, k: "Store.hold_removals (SQLite)")
    import mrpvm.kernel.supervisor.handoff as khandoff
    import mrpvm.knowledge.notify as knotify

    wrap_sync(khandoff.HandoffFolder, "write", lambda a, k: "units file write (per kb-plugin)")
    wrap_async(knotify.UnitsFile, "get", lambda a, k: "units file encode (shared)")
    import mrpvm.protocol.handoff as phandoff

    encode = phandoff.encode_handoff

    def encode_timed(*args, **kw):  # its own thread's CPU beside its wall: a wait for the GIL shows
        t, c = time.perf_counter(), time.thread_time()
        try:
            return encode(*args, **kw)
        finally:
            add("units file encode: its thread's CPU", time.thread_time() - c)
            add("units file encode: in its thread (wall)", time.perf_counter() - t)

    phandoff.encode_handoff = encode_timed
    replace = kstore.Store.replace_source

    def replace_timed(*args, **kw):
        c = time.thread_time()
        try:
            return replace(*args, **kw)
        finally:
            add("Store.replace_source: its thread's CPU", time.thread_time() - c)

    kstore.Store.replace_source = replace_timed
    wrap_async(core.Supervisor, "warm", lambda a, k: f"supervisor warm {a[1]}")
    wrap_async(core.Supervisor, "call", lambda a, k: f"plugin call {a[1]}")
    parse_home: Any = core  # the reply's parse: reply_read.py since session 26
    if not hasattr(core, "parse_document"):
        parse_home = importlib.import_module("mrpvm.kernel.supervisor.reply_read")
    wrap_sync(
        parse_home,
        "parse_document",
        lambda a, k: f"kernel parse_document op={a[1] if len(a) > 1 else k.get('op')}",
    )
    wrap_sync(core, "encode_request", lambda a, k: "kernel encode_request")
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        enc = core.encode_request

        def dumping(req, *x, **k):
            body = enc(req, *x, **k)
            n = len(os.listdir(a.dump))
            with open(os.path.join(a.dump, f"{n}-{req.op}.json"), "wb") as f:
                f.write(body)
            return body

        core.encode_request = dumping
    prof = None
    if a.profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t = time.perf_counter()
    old = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    try:
        rc = cli_main(["ingest", "--kb", "x", "--json", a.file])
    except SystemExit as e:
        rc = e.code
    finally:
        sys.stdout.close()
        sys.stdout = old
    add("cli main (ingest command)", time.perf_counter() - t)
    if prof:
        prof.disable()
        prof.dump_stats(a.profile)
    total = time.perf_counter() - T0
    import sqlite3

    db = [os.path.join(home, f) for f in os.listdir(home) if f.endswith((".db", ".sqlite", ".sqlite3"))]
    units = None
    if db:
        try:
            units = sqlite3.connect(db[0]).execute("select count(*) from units").fetchone()[0]
        except sqlite3.Error:
            pass
    rows = sorted(((k, sum(v), len(v)) for k, v in stats.items()), key=lambda r: -r[1])
    ingest_s = sum(stats.get("cli main (ingest command)", [0.0]))
    rate = round(units / total) if units else 0
    out = {
        "file": a.file,
        "rc": rc,
        "plugins": a.plugins or "all enabled",
        "process_wall_s": round(total, 3),
        "units": units,
        "units_per_s_end_to_end": rate,
        "units_per_s_ingest_command": round(units / ingest_s) if units and ingest_s else 0,
        "stages": {k: {"s": round(s, 3), "calls": n} for k, s, n in rows},
    }
    if a.json:
        print(json.dumps(out))
    else:
        print(
            f"{a.file}: rc {rc}, plugins {out['plugins']}, process wall {total:.3f} s, units {units}, "
            f"{rate} units/s end to end, {out['units_per_s_ingest_command']} units/s in the ingest command"
        )
        for k, s, n in rows:
            print(f"  {s:8.3f} s  {n:5d}x  {k}")
        if a.timeline:
            for start, end, k in sorted(spans):
                print(f"  {start:7.3f} → {end:7.3f} s  {k}")
    import shutil

    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
