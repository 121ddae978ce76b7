"""A real `mrpvm serve` daemon for the API tests: a subprocess on 127.0.0.1, an ephemeral port, MRPVM_HOME in tmp.

with Daemon(tmp_path, token="t") as daemon:
    httpx.get(daemon.url + "/health")
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

SYMBOLIC = "sd-symbolic,planner-default,kb-fast,gs-symbolic"
READY_LINE = "mrpvm: serving on "
IDLE_POLL_S = 0.1
IDLE_STATES = frozenset("SITtZ")  # /proc/<pid>/stat states of a process not using the CPU
FACTS = "The zorblax is a teal bird.\n\nThe zorblax lives in Norway.\n\nThe zorblax eats blue fish.\n"


class Daemon:
    def __init__(
        self, home: Path, *, token: str | None = None, args: list[str] = (), env: dict | None = None
    ):
        self.home = home
        self.token = token
        self.args = list(args)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("MRPVM_", "OPENAI_"))} | {
            "MRPVM_HOME": str(home),
            "MRPVM_ENABLED_PLUGINS": SYMBOLIC,
            "MRPVM_PLUGIN_ALLOWLIST": "",
            "MRPVM_WRAPPER_FOLDERS": "",
            **(env or {}),
        }
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.log: list[str] = []

    def start(self, timeout: float = 120.0) -> Daemon:
        argv = [sys.executable, "-m", "mrpvm.shells.cli.main", "serve", "--port", "0", *self.args]
        if self.token:
            argv += ["--token", self.token]
        self.proc = subprocess.Popen(argv, env=self.env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            if line.startswith(READY_LINE):
                self.url = line[len(READY_LINE) :].split()[0]
                break
        if not self.url:
            self.proc.kill()
            raise RuntimeError("the daemon did not start:\n" + "".join(self.log))
        threading.Thread(target=self._drain, daemon=True).start()
        self._wait_workers_idle(deadline)
        return self

    def _wait_workers_idle(self, deadline: float) -> None:
        """Wait (until `deadline`, then go on) for the workers `warm()` spawned to finish starting.

        The ready line comes right after `warm()` only *spawned* every pool: a dozen sandboxed interpreters
        starting at once, on a busy machine for seconds, inside the first call's deadline. Started means
        idle: every process under the daemon sleeping (its worker blocked on stdin) and using no CPU between
        two polls in a row. On an idle machine this costs about two polls after the workers are up."""
        assert self.proc is not None
        quiet, before = 0, None
        while quiet < 2 and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(IDLE_POLL_S)
            now = _descendant_cpu(self.proc.pid)
            quiet = quiet + 1 if now is not None and now == before else 0
            before = now

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers(), timeout=30.0, **kwargs)

    def children(self) -> list[int]:
        """Pids of the daemon's child processes (the plugin workers)."""
        assert self.proc is not None
        out = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    out.append(int(entry.name))
        return out

    def stop(self, timeout: float = 120.0) -> int:
        """SIGTERM and wait. The daemon's own graceful shutdown may take its 30 s (in-flight requests)
        plus the plugins' close, and more on a busy machine: the bound only guards against a hang."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"the daemon did not stop in {timeout} s:\n" + "".join(self.log[-40:])
            ) from None

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _descendant_cpu(root: int) -> dict[int, int] | None:
    """CPU ticks (user + system) of every process under `root`, or None while one of them runs or waits
    for the disk (state other than sleeping, idle, stopped or zombie)."""
    parents: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            pid = int(entry.name)
            parents[pid], stats[pid] = int(fields[1]), fields
    under, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - under
        under |= frontier
    ticks: dict[int, int] = {}
    for pid in under:
        fields = stats[pid]  # [state, ppid, ...]: utime and stime are stat fields 14 and 15
        if fields[0] not in IDLE_STATES:
            return None
        ticks[pid] = int(fields[11]) + int(fields[12])
    return ticks


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def sse_events(text: str) -> list[tuple[str | None, str]]:
    """(event name or None, data) of every event in an SSE body."""
    out = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data.append(line[len("data: ") :])
        out.append((name, "\n".join(data)))
    return out


def new_session(http: httpx.Client, **body) -> str:
    """POST /sessions (201) and the new session's id."""
    reply = http.post("/sessions", json=body)
    assert reply.status_code == 201, reply.text
    return reply.json()["session_id"]


def ask(http: httpx.Client, session: str, message: str) -> dict:
    """One non-streamed turn in `session` (200) and its body."""
    reply = http.post("/chat/completions", json={"message": message, "session_id": session, "stream": False})
    assert reply.status_code == 200, reply.text
    return reply.json()
