"""Shared helpers for the perf scripts: a raw keep-alive HTTP/1.1 client, daemon starters for ours and
upstream, process-tree CPU and memory, percentiles. Standard library only (runs under any python3).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
TMP = Path(tempfile.gettempdir())  # $TMPDIR, else the system's temporary folder


def _ours() -> Path:
    """The project checkout (with `make setup` done): $PERF_OURS, else the current folder when it is one,
    else $TMPDIR/perf."""
    if os.environ.get("PERF_OURS"):
        return Path(os.environ["PERF_OURS"]).resolve()
    if (HERE.parent / ".venv" / "bin" / "mrpvm").exists():  # bench/ of a checkout: that checkout
        return HERE.parent
    if (Path.cwd() / ".venv" / "bin" / "mrpvm").exists():
        return Path.cwd()
    return TMP / "perf"


OURS = _ours()
# upstream (the original Node.js MRP-VM, `npm install` done) is optional: only --target upstream and the
# comparisons use it
UPSTREAM = Path(os.environ.get("PERF_UPSTREAM") or TMP / "upstream").resolve()
MRPVM = OURS / ".venv" / "bin" / "mrpvm"
TICK = os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def mmm(values: list[float], nd: int = 3) -> str:
    """median [min–max]"""
    if not values:
        return "n/a"
    return f"{round(med(values), nd)} [{round(min(values), nd)}–{round(max(values), nd)}]"


def questions(path: Path | None = None) -> list[str]:
    path = path or CORPUS / "questions-crypto.txt"
    return [q.strip() for q in path.read_text().splitlines() if q.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----------------------------------------------------------------------------- HTTP client


class Client:
    """One keep-alive HTTP/1.1 connection; Content-Length or chunked replies."""

    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.last = 0.0

    async def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict, bytes]:
        if self.writer is not None and time.monotonic() - self.last > 3.0:
            await self.aclose()  # servers close idle keep-alive connections (ours after 5 s)
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=2**24)
        data = json.dumps(body).encode() if body is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
        if body is not None:
            head += f"content-type: application/json\r\ncontent-length: {len(data)}\r\n"
        self.writer.write((head + "\r\n").encode() + data)
        assert self.reader is not None
        raw = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(raw[0].split()[1])
        headers: dict[str, str] = {}
        for line in raw[1:]:
            k, sep, v = line.partition(":")
            if sep:
                headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            payload = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                parts.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            payload = b"".join(parts)
        else:
            payload = await self.reader.read()
            self.writer = None
        if headers.get("connection", "").lower() == "close":
            await self.aclose()
        self.last = time.monotonic()
        return status, headers, payload

    async def json(self, method: str, path: str, body: dict | None = None) -> dict:
        status, _, payload = await self.request(method, path, body)
        if status >= 300:
            raise RuntimeError(f"{method} {path} -> {status}: {payload[:300]!r}")
        return json.loads(payload)

    async def aclose(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except Exception:
                pass
            self.writer = None


# ----------------------------------------------------------------------------- daemons


def ours_env(home: str, extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRPVM_")}
    env["MRPVM_HOME"] = home
    env |= extra or {}
    return env


class Daemon:
    def __init__(self, proc: subprocess.Popen, port: int, home: str, kind: str):
        self.proc, self.port, self.home, self.kind = proc, port, home, kind

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM if self.kind == "upstream" else signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def need_ours() -> None:
    if not MRPVM.exists():
        raise SystemExit(
            f"no {MRPVM}: set PERF_OURS to a project checkout with `make setup` done "
            "(or run from that checkout)"
        )


def start_ours(home: str, extra_env: dict | None = None, argv: list[str] | None = None) -> Daemon:
    need_ours()
    proc = subprocess.Popen(
        argv or [str(MRPVM), "serve", "--port", "0"],
        env=ours_env(home, extra_env),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=home,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("mrpvm: serving on "):
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            url = line.split()[3]
            return Daemon(proc, int(url.rsplit(":", 1)[1]), home, "ours")
    proc.kill()
    raise SystemExit("our daemon did not start")


UPSTREAM_ENV = {
    # upstream's own limits (1 MiB per source, 500 units per source, 10k units, 200 chunks) would refuse
    # the 1.1 MB corpus; raised for the measurement only (env overrides, upstream's config loader)
    "MRP_KB_MAX_SOURCE_SIZE_BYTES": "8388608",
    "MRP_KB_MAX_UNITS_PER_SOURCE": "1000000",
    "MRP_KB_MAX_TOTAL_UNITS": "10000000",
    "MRP_KB_MAX_L_L_M_CALLS_PER_SOURCE": "100000",  # maxLLMCallsPerSource, as upstream spells the key
    "MRP_SERVER_MAX_BODY_SIZE_BYTES": "16777216",
    "MRP_CONVERSATION_MAX_SESSIONS": "100000",
    "LOG_LEVEL": "warn",
}


def need_upstream() -> None:
    if not (UPSTREAM / "src" / "server" / "index.mjs").exists():
        raise SystemExit(
            f"no upstream server under {UPSTREAM}: set PERF_UPSTREAM to a checkout of the original "
            "Node.js MRP-VM with `npm install` done"
        )


def start_upstream(home: str) -> Daemon:
    need_upstream()
    # upstream loads its built-in plugins from ./src and keeps data in ./data: a fresh folder with a link
    if not os.path.exists(os.path.join(home, "src")):
        os.symlink(UPSTREAM / "src", os.path.join(home, "src"))
    port = free_port()
    env = dict(os.environ) | UPSTREAM_ENV | {"MRP_SERVER_PORT": str(port)}
    proc = subprocess.Popen(
        ["node", str(UPSTREAM / "src" / "server" / "index.mjs")],
        env=env,
        cwd=home,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return Daemon(proc, port, home, "upstream")
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("upstream exited at start")  # noqa: B904
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("upstream did not start")


def new_home(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=prefix)


# ----------------------------------------------------------------------------- process tree


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree(pid: int) -> list[int]:
    """`pid` and every descendant. A sandboxed worker's pid is bubblewrap's; the plugin's interpreter runs
    below it in its own pid namespace, so its CPU and memory are read from the host's /proc through the
    tree (bwrap's own pid alone shows ~2 MB and no CPU)."""
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def _name(pid: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    cmd = [c.decode(errors="replace") for c in cmd if c]
    if not cmd:
        return "?"
    if "-m" in cmd:
        return cmd[cmd.index("-m") + 1].rsplit(".", 1)[-1]
    base = os.path.basename(cmd[0])
    if base == "bwrap":
        return "bwrap"
    if base in ("mrpvm",) or (len(cmd) > 1 and cmd[1].endswith("/mrpvm")):
        return "mrpvm-daemon"
    if base == "node":
        return "node:" + os.path.basename(cmd[1]) if len(cmd) > 1 else "node"
    return base


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds `pid` has used so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_rss_mb(pid: int) -> float | None:
    """The peak resident set (VmHWM) of `pid` in MiB, None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def cpu_by_name(pid: int, system_only: bool = False) -> dict[str, float]:
    """CPU seconds (user+sys, or sys only) per process name over the tree under pid (live processes)."""
    out: dict[str, float] = {}
    for p in tree(pid):
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        secs = (int(f[12]) if system_only else int(f[11]) + int(f[12])) / TICK  # utime, stime
        key = f"{_name(p)}#{p}"
        out[key] = secs
    return out


def sched_stats(pid: int) -> dict[str, float] | None:
    """The scheduler's account of one process's main thread (the daemon's event loop): ms on a CPU, ms
    runnable but waiting for one (/proc/PID/schedstat), and its voluntary and involuntary context switches
    (/proc/PID/status). None when the kernel does not expose them."""
    try:
        run_ns, wait_ns, _slices = (int(x) for x in Path(f"/proc/{pid}/schedstat").read_text().split()[:3])
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, ValueError):
        return None
    switches = dict(re.findall(r"^(voluntary|nonvoluntary)_ctxt_switches:\s+(\d+)", status, re.M))
    return {
        "run_ms": run_ns / 1e6,
        "runqueue_wait_ms": wait_ns / 1e6,
        "voluntary_switches": float(switches.get("voluntary", 0)),
        "involuntary_switches": float(switches.get("nonvoluntary", 0)),
    }


def sched_per_turn(before: dict[str, float] | None, after: dict[str, float] | None, turns: int) -> dict:
    """`sched_stats` over a load, a turn: how much of the event loop's lag is waiting for a CPU (a loaded
    host) rather than the loop's own work."""
    if before is None or after is None or turns <= 0:
        return {}
    return {k: round((after[k] - before[k]) / turns, 3) for k in before}


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    agg: dict[str, float] = {}
    for key, secs in after.items():
        name = key.split("#")[0]
        agg[name] = agg.get(name, 0.0) + secs - before.get(key, 0.0)
    return dict(sorted(agg.items(), key=lambda kv: -kv[1]))


def memory(pid: int) -> dict:
    """RSS and PSS (MiB) summed over the tree, and per process name."""
    per: dict[str, dict[str, float]] = {}
    rss_total = pss_total = 0.0
    count = 0
    for p in tree(pid):
        rss = pss = 0.0
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) / 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) / 1024
        except OSError:
            continue
        count += 1
        name = _name(p)
        e = per.setdefault(name, {"n": 0, "rss_mb": 0.0, "pss_mb": 0.0})
        e["n"] += 1
        e["rss_mb"] = round(e["rss_mb"] + rss, 1)
        e["pss_mb"] = round(e["pss_mb"] + pss, 1)
        rss_total += rss
        pss_total += pss
    return {"processes": count, "rss_mb": round(rss_total, 1), "pss_mb": round(pss_total, 1), "by_name": per}


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def print_figures(figures: dict, as_json: bool) -> None:
    """A bench's figures: one JSON line (for A/B scripts), else one aligned `name value` line each."""
    if as_json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:24} {value}")
