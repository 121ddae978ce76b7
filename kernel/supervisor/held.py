"""Work held for a plugin until the kernel next calls it (`Supervisor.before_next_call`).

A session-context notice to a kb-plugin that has no running worker is held here instead of starting the
worker for it: it runs right before the next call to that plugin (every caller of that call waits for
it, so nothing overtakes it), or never, when this kernel ends without calling the plugin again; or from
`start` on, beside the kernel's other work, once the plugin's worker has been started anyway (its next
call still waits for the run to end).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar

HeldJob = Callable[[], Awaitable[None]]
# The plugins whose held work the current task (and the tasks it starts) is running: their own calls
# to that plugin go straight through instead of waiting for themselves.
_RELEASING: ContextVar[frozenset[str]] = ContextVar("mrpvm_releasing", default=frozenset())


class HeldWork:
    def __init__(self) -> None:
        self._held: dict[str, list[HeldJob]] = {}
        self._running: dict[str, asyncio.Task[None]] = {}

    def hold(self, plugin_id: str, job: HeldJob) -> None:
        self._held.setdefault(plugin_id, []).append(job)

    def pending(self, plugin_id: str) -> bool:
        return plugin_id in self._held or plugin_id in self._running

    def start(self, plugin_id: str) -> bool:
        """Start running what is held for the plugin, without waiting for it (its next call, `release`,
        waits for that run); False when nothing is held or it runs already."""
        jobs = None if plugin_id in self._running else self._held.pop(plugin_id, None)
        if not jobs:
            return False
        task = self._running[plugin_id] = asyncio.get_running_loop().create_task(_run(plugin_id, jobs))
        task.add_done_callback(lambda _: self._running.pop(plugin_id, None))
        return True

    async def release(self, plugin_id: str) -> None:
        """Run what is held for the plugin (once; concurrent callers wait for the same run)."""
        if plugin_id in _RELEASING.get():
            return
        self.start(plugin_id)
        task = self._running.get(plugin_id)
        if task is not None:
            await asyncio.shield(task)

    def start_where(self, started: Callable[[str], bool]) -> list[str]:
        """Start delivering what is held for each plugin whose worker `started` says runs already (a one-turn
        process's prestarted kb-plugins: their notices overlap the turn's first stages instead of delaying
        their first call); the others' stays held. The ids whose delivery started."""
        return [p for p in list(self._held) if started(p) and self.start(p)]

    def drop(self) -> int:
        """Forget everything held and cancel the deliveries under way (the kernel closes: nothing it
        started outlives it); how many jobs were dropped."""
        dropped = sum(len(jobs) for jobs in self._held.values())
        self._held.clear()
        for task in list(self._running.values()):
            task.cancel()
        return dropped


async def _run(plugin_id: str, jobs: list[HeldJob]) -> None:
    _RELEASING.set(_RELEASING.get() | {plugin_id})  # this task's own context (create_task copied it)
    for job in jobs:
        await job()  # a job reports its own failures (a held notice becomes a warning, never an error)
