"""One plugin process: no shell, scrubbed environment, its own session, non-blocking pipes on the event loop.

The process runs in a new process group (and session: early_launch.start_process), so its pid is also its
process-group id and `kill()` takes any grandchildren with it. Exit is watched with a pidfd (Linux ≥ 5.3; a waiter thread
elsewhere): when the leader exits it stays a zombie until we reap it, so the group kill that cleans up
stragglers can never hit a recycled pid. Stdout goes to the owner's callback; stderr is drained all the
time into a bounded tail, so a chatty plugin never blocks on a full pipe, and line by line into the
plugin's log (plugin_log.py) when the supervisor keeps one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from .cgroups import WATCH_INTERVAL_S, Group
from .early_launch import start_process
from .errors import SPAWN_FAILED, ProcessFailure
from .plugin_log import StderrLog

LogFactory = Callable[[int], "StderrLog | None"]  # pid -> where this process's stderr lines go

READ_SIZE = 1 << 18
STDERR_TAIL_BYTES = 8192
PASSED_ENV = ("PATH", "HOME", "LANG")
ENV_PREFIX = "MRPVM_"
WORKER_FLAG = "MRPVM_WORKER"
# Set for a worker started while its plugin keeps nothing in any artifacts folder (a fresh home): every text
# its first call reads will be encoded, so a worker that loads a model may load it at once, while the
# turn's earlier stages run (sdk embedding/encoder.worker_started). Never part of an early-launch record.
NOTHING_KEPT_FLAG = "MRPVM_NOTHING_KEPT"
# Secrets plugins must never see: they reach the LLM only through the kernel's loopback endpoint with a
# per-call token (the upstream key would let a plugin bypass budgets), never the HTTP API's token, and
# never the store's URL (it may carry the database password; plugins have no business in the database).
SECRET_ENV = ("MRPVM_LLM_API_KEY", "MRPVM_LLM_BASE_URL", "MRPVM_API_TOKEN", "MRPVM_STORE_URL")
# A plugin worker computes on one thread: the pools are the parallelism. Numeric libraries otherwise start a
# thread per core that spin-waits after every operation (OpenBLAS: ~8 ms of CPU after a 0.15 ms
# matrix-vector product), stealing the cores the other workers and the kernel need.
ONE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def worker_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A plugin process's environment: `scrubbed_env` with ONE_THREAD_ENV under `extra`."""
    return scrubbed_env({**ONE_THREAD_ENV, **(extra or {})})


def scrubbed_env(
    extra: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """PATH, HOME, LANG and MRPVM_* from the kernel's environment, then `extra`; never MRPVM_WORKER
    nor the SECRET_ENV variables (not even through `extra`)."""
    source = os.environ if environ is None else environ
    env = {k: v for k, v in source.items() if k in PASSED_ENV or k.startswith(ENV_PREFIX)}
    env.pop(WORKER_FLAG, None)
    if extra:
        env.update(extra)
    for name in SECRET_ENV:
        env.pop(name, None)
    return env


class StderrTail:
    """The last `limit` bytes written to stderr (since the last `reset`)."""

    __slots__ = ("_buf", "limit", "total")

    def __init__(self, limit: int = STDERR_TAIL_BYTES):
        self._buf = bytearray()
        self.limit = limit
        self.total = 0

    def add(self, data: bytes) -> None:
        self._buf += data
        self.total += len(data)
        if len(self._buf) > 2 * self.limit:
            del self._buf[: -self.limit]

    def reset(self) -> None:
        self._buf.clear()

    def value(self) -> bytes:
        return bytes(self._buf[-self.limit :])


def _quiet(fn: Callable[..., object], *args: object) -> None:
    with contextlib.suppress(OSError):
        fn(*args)


def _retry_release(group: Group, tries: int) -> None:
    if not group.release() and tries > 0:
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_later(0.05, _retry_release, group, tries - 1)


class ChildProcess:
    """A started process and its pipes. Callbacks run on the event loop thread.

    on_stdout(data)  bytes from stdout (also called by `poll_stdout`, which the worker's spin loop uses)
    on_stdout_eof()  the plugin closed stdout (or died)
    on_exit(code)    after reaping; stdout and stderr have been drained first
    """

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path | str,
        env: dict[str, str],
        loop: asyncio.AbstractEventLoop,
        on_stdout: Callable[[bytes], None],
        on_stdout_eof: Callable[[], None],
        on_exit: Callable[[int], None],
        memory_bytes: int | None = None,
        stderr_limit: int = STDERR_TAIL_BYTES,
        sandboxed: bool = False,
        log: LogFactory | None = None,
        group: Group | None = None,
        popen: subprocess.Popen[bytes] | None = None,
    ):
        """`group`: the control group `argv` joins (cgroups.py): watched while the process runs; a limit
        reached kills the whole process group and sets `limit_exceeded` (why). `popen`: `argv` already
        started, as this class starts it (early_launch.py), adopted instead of started again."""
        self.loop = loop
        self.group = group
        self.limit_exceeded: str | None = None
        self.sandboxed = sandboxed  # started through bwrap: a death by signal N comes back as exit 128+N
        self.on_stdout, self.on_stdout_eof, self.on_exit = on_stdout, on_stdout_eof, on_exit
        self.stderr = StderrTail(stderr_limit)
        self.returncode: int | None = None
        self.exited: asyncio.Future[int] = loop.create_future()
        self._pending_write = bytearray()
        self._close_after_write = False
        self._killed = False
        try:
            self.popen = popen or start_process(argv, cwd, env, sandboxed)
        except (OSError, ValueError, subprocess.SubprocessError) as err:
            if group is not None:
                group.remove()
            raise ProcessFailure(SPAWN_FAILED, f"cannot start {argv[0]!r}: {err}") from None
        self.pid = self.popen.pid
        if group is not None:
            group.started(self.pid)
        self.log: StderrLog | None = log(self.pid) if log is not None else None  # plugin_log.py
        if memory_bytes and not sandboxed:
            # After exec (no preexec_fn, so Popen keeps using vfork); the window before it applies is a
            # freshly exec'd interpreter, far below any sensible limit. (A sandboxed plugin gets the limit
            # from prlimit(1) before bwrap forks: see sandbox.py.)
            try:
                import resource

                resource.prlimit(self.pid, resource.RLIMIT_AS, (memory_bytes, memory_bytes))
            except (OSError, ValueError, ImportError):
                pass
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.stdin_fd: int | None = self.popen.stdin.fileno()
        self.stdout_fd: int | None = self.popen.stdout.fileno()
        self.stderr_fd: int | None = self.popen.stderr.fileno()
        for fd in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
            os.set_blocking(fd, False)
        loop.add_reader(self.stdout_fd, self._read_stdout)
        loop.add_reader(self.stderr_fd, self._read_stderr)
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            threading.Thread(target=self._wait_thread, name=f"wait-{self.pid}", daemon=True).start()
        else:
            loop.add_reader(self._pidfd, self._reap)
        self._watch: asyncio.TimerHandle | None = None
        if group is not None:
            self._watch = loop.call_later(WATCH_INTERVAL_S, self._check_group)

    # ------------------------------------------------------------------ state

    @property
    def alive(self) -> bool:
        """Running and not being killed (a process may be dead before we notice: see the worker)."""
        return self.returncode is None and not self._killed

    # ------------------------------------------------------------------ stdin

    def write(self, data: bytes) -> None:
        """Queue bytes for stdin; what the pipe does not take now is written when it drains.

        Raises BrokenPipeError if the process has closed stdin (it died or will not read).
        """
        if self.stdin_fd is None:
            raise BrokenPipeError("stdin is closed")
        if self._pending_write:
            self._pending_write += data
            return
        written = os.write(self.stdin_fd, data)
        if written < len(data):
            self._pending_write += memoryview(data)[written:]
            self.loop.add_writer(self.stdin_fd, self._flush)

    def close_stdin(self) -> None:
        """EOF for the plugin once everything queued is written."""
        if self._pending_write:
            self._close_after_write = True
            return
        self._close_stdin_now()

    def _close_stdin_now(self) -> None:
        if self.stdin_fd is not None:
            if self._pending_write:
                self.loop.remove_writer(self.stdin_fd)
                self._pending_write.clear()
            self.stdin_fd = None
            _quiet(self.popen.stdin.close)  # type: ignore[union-attr]

    def _flush(self) -> None:
        fd = self.stdin_fd
        if fd is None:
            return
        try:
            written = os.write(fd, self._pending_write)
        except BlockingIOError:
            return
        except OSError:  # the reader went away: the exit path reports it
            self._close_stdin_now()
            return
        del self._pending_write[:written]
        if not self._pending_write:
            self.loop.remove_writer(fd)
            if self._close_after_write:
                self._close_stdin_now()

    # ------------------------------------------------------------------ stdout / stderr

    def poll_stdout(self) -> bool:
        """Read stdout once without blocking; False when nothing was there."""
        fd = self.stdout_fd
        if fd is None:
            return False
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if data:
            self.on_stdout(data)
        else:
            self._stdout_eof()
        return True

    def _read_stdout(self) -> None:
        self.poll_stdout()

    def _stdout_eof(self) -> None:
        fd = self.stdout_fd
        if fd is None:
            return
        self.loop.remove_reader(fd)
        self.stdout_fd = None
        _quiet(self.popen.stdout.close)  # type: ignore[union-attr]
        self.on_stdout_eof()

    def _read_stderr(self) -> None:
        fd = self.stderr_fd
        if fd is None:
            return
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.stderr.add(data)
            if self.log is not None:
                self.log.feed(data)
        else:
            self.loop.remove_reader(fd)
            self.stderr_fd = None
            _quiet(self.popen.stderr.close)  # type: ignore[union-attr]

    def _drain(self) -> None:
        """After exit: read what is left in the pipes (the whole group is dead, so it is all there)."""
        for _ in range(1024):
            if self.stdout_fd is None or not self.poll_stdout():
                break
        for _ in range(64):
            if self.stderr_fd is None:
                break
            before = self.stderr.total
            self._read_stderr()
            if self.stderr.total == before:
                break
        for fd, close in ((self.stdout_fd, self.popen.stdout), (self.stderr_fd, self.popen.stderr)):
            if fd is not None:
                self.loop.remove_reader(fd)
                _quiet(close.close)  # type: ignore[union-attr]
        self.stdout_fd = self.stderr_fd = None
        self._close_stdin_now()

    # ------------------------------------------------------------------ the whole-sandbox limits

    def _check_group(self) -> None:
        self._watch = None
        if self.returncode is not None or self.group is None:
            return
        why = self.group.exceeded()
        if why is not None:
            self.limit_exceeded = why
            self.kill()
            self.group.kill()
            return
        self._watch = self.loop.call_later(WATCH_INTERVAL_S, self._check_group)

    def _release_group(self) -> None:
        """Remove the group (once every process has left it: the namespace teardown takes a moment)."""
        group, self.group = self.group, None
        if group is None:
            return
        if self.limit_exceeded is None:
            self.limit_exceeded = group.exceeded()  # reached in the last instant before the exit
        if not group.release():
            with contextlib.suppress(RuntimeError):  # loop closed: the supervisor's close settles it
                self.loop.call_later(0.05, _retry_release, group, 100)

    # ------------------------------------------------------------------ ending

    def kill(self) -> None:
        """SIGKILL the whole process group (the leader is not reaped yet, so the id is still ours)."""
        if self.returncode is not None:
            return
        self._killed = True
        _quiet(os.killpg, self.pid, signal.SIGKILL)

    def _reap(self) -> None:
        if self._pidfd is not None:
            self.loop.remove_reader(self._pidfd)
        _quiet(os.killpg, self.pid, signal.SIGKILL)  # stragglers the plugin left in its session
        try:
            _, status = os.waitpid(self.pid, 0)
            code = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            code = -signal.SIGKILL
        if self.sandboxed and 128 < code <= 128 + 64:
            code = 128 - code  # bwrap reports the plugin's death by signal N as 128+N: say it as Popen does
        if self._pidfd is not None:
            _quiet(os.close, self._pidfd)
            self._pidfd = None
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        self._release_group()
        self.returncode = self.popen.returncode = code
        self._drain()
        if self.log is not None:
            self.log.close(code)
        if not self.exited.done():
            self.exited.set_result(code)
        self.on_exit(code)

    def _wait_thread(self) -> None:
        """Fallback without pidfd: wait for the exit without reaping, then reap on the loop."""
        try:
            os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass
        with contextlib.suppress(RuntimeError):  # loop closed
            self.loop.call_soon_threadsafe(self._reap)
