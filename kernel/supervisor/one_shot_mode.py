"""One-shot mode (kernel/supervisor/core.py): one process per call, stdin in, CNL out, capped and reaped
(what its exit means: oneshot.py)."""

from __future__ import annotations

import asyncio

from .errors import TIMEOUT, ProcessFailure
from .oneshot import OneShotOutcome
from .plugin_state import PluginState
from .process import ChildProcess
from .worker_mode import WorkerMode


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
