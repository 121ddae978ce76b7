"""One-shot mode (kernel/supervisor/core.py): one process per call, stdin in, CNL out, exit code read."""

from __future__ import annotations

import asyncio
from typing import Any

from mrpvm.protocol.errors import parse_error_line
from mrpvm.protocol.vocab import EXIT_INVALID_INPUT, EXIT_PROCESSING_ERROR, EXIT_TIMEOUT

from .errors import (
    CRASHED,
    OUTPUT_TOO_LARGE,
    PLUGIN_ERROR,
    PLUGIN_INVALID_INPUT,
    SANDBOX_LIMIT,
    TIMEOUT,
    ProcessFailure,
    describe_exit,
)
from .plugin_state import PluginState
from .process import ChildProcess
from .worker_mode import WorkerMode


class OneShotOutcome:
    __slots__ = ("stdout", "stderr", "code", "timed_out", "over_cap", "limit")

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = b""
        self.code: int | None = None
        self.timed_out = False
        self.over_cap = False
        self.limit: str | None = None  # a whole-sandbox limit ended the process (why)


class OneShotMode(WorkerMode):
    # ------------------------------------------------------------------ one-shot mode

    async def _one_shot(
        self,
        plugin: PluginState,
        loop: asyncio.AbstractEventLoop,
        body: bytes,
        deadline: float,
        artifacts: str | None = None,
        request_id: str = "",
    ) -> OneShotOutcome:
        """Start, write the request, EOF, collect stdout (capped) and the stderr tail, reap."""
        sem = plugin.oneshots
        if sem.locked():
            try:
                async with asyncio.timeout_at(deadline):
                    await sem.acquire()
            except TimeoutError:
                raise ProcessFailure(
                    TIMEOUT,
                    "no free one-shot slot before the deadline",
                    details={"queued": True},
                    crash=False,
                ) from None
        else:
            await sem.acquire()
        try:
            return await self._run_one_shot(plugin, loop, body, deadline, artifacts, request_id)
        finally:
            sem.release()

    async def _run_one_shot(
        self,
        plugin: PluginState,
        loop: asyncio.AbstractEventLoop,
        body: bytes,
        deadline: float,
        artifacts: str | None,
        request_id: str = "",
    ) -> OneShotOutcome:
        out = OneShotOutcome()
        cap = plugin.max_out
        proc: ChildProcess

        def on_stdout(data: bytes) -> None:
            if out.over_cap:
                return
            out.stdout += data
            if len(out.stdout) > cap:
                out.over_cap = True
                del out.stdout[cap:]
                proc.kill()

        def on_timeout() -> None:
            out.timed_out = True
            proc.kill()

        plugin.spawns += 1
        argv, group = self._command(plugin, [artifacts] if artifacts else [])
        proc = ChildProcess(
            argv,
            group=group,
            cwd=plugin.cwd,
            env=self._env,
            loop=loop,
            on_stdout=on_stdout,
            on_stdout_eof=lambda: None,
            on_exit=lambda code: self._oneshot_procs.discard(proc),
            memory_bytes=self._memory,
            sandboxed=self.sandbox.active,
            log=lambda pid: self.logs.for_process(plugin.id, pid),
        )
        if proc.log is not None:
            proc.log.request = request_id
        self._oneshot_procs.add(proc)
        try:
            proc.write(body)
        except OSError:
            pass  # it exited without reading: the exit code tells why
        proc.close_stdin()
        timer = loop.call_at(deadline, on_timeout)
        try:
            out.code = await asyncio.shield(proc.exited)
        except asyncio.CancelledError:
            proc.kill()
            raise
        finally:
            timer.cancel()
        out.stderr = proc.stderr.value()
        out.limit = proc.limit_exceeded
        return out

    def _one_shot_result(self, out: OneShotOutcome) -> bytes:
        """The stdout of a successful run, or the ProcessFailure its exit code means (DS016)."""
        code = out.code
        if out.limit:
            raise ProcessFailure(SANDBOX_LIMIT, out.limit, stderr=out.stderr, exit_code=code)
        if out.over_cap:
            raise ProcessFailure(
                OUTPUT_TOO_LARGE,
                "output exceeds the output cap; process killed",
                stderr=out.stderr,
                exit_code=code,
            )
        if out.timed_out:
            raise ProcessFailure(
                TIMEOUT, "deadline passed; process killed", stderr=out.stderr, exit_code=code
            )
        if code == 0:
            return bytes(out.stdout)
        info = parse_error_line(out.stderr) if code in (1, 2, 3) else None
        details: dict[str, Any] = {}
        if info is not None:
            details = {"pluginCode": info.code, "pluginMessage": info.message, "pluginDetails": info.details}
        if code == EXIT_PROCESSING_ERROR:
            kind, what = PLUGIN_ERROR, "processing error"
        elif code == EXIT_INVALID_INPUT:
            kind, what = PLUGIN_INVALID_INPUT, "invalid input"
        elif code == EXIT_TIMEOUT:
            kind, what = TIMEOUT, "the plugin's own deadline passed"
            details["reportedByPlugin"] = True
        else:
            raise ProcessFailure(CRASHED, f"plugin {describe_exit(code)}", stderr=out.stderr, exit_code=code)
        if info is not None:
            message = f"{what}: {info.code}: {info.message}"
        else:
            last = out.stderr.strip().splitlines()[-1:] or [b""]
            message = f"{what} (exit {code}) without an error line on stderr" + (
                f"; last stderr line: {last[0][:200].decode('utf-8', 'replace')}" if last[0] else ""
            )
        # A plugin-reported timeout is an honest answer, not a kernel kill: it does not feed the breaker.
        raise ProcessFailure(kind, message, stderr=out.stderr, exit_code=code, details=details, crash=False)
