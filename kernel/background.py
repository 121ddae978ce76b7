"""Plugin calls a turn leaves running once its answer is ready (recordOutcome with `defer_outcome`).

A later turn of the same session waits for the ones pending when it started before it calls the same
plugin, so a conversation sees exactly what it would have seen had its turns run in sequence; another
session's turn never waits for them (a buildPlan is never held behind someone else's recordOutcome; it
reads the planner's table as it is). `KernelContext.aclose` drains them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from typing import Any, Protocol

log = logging.getLogger("mrpvm.kernel")


class Batcher(Protocol):
    """Outcomes held back to share one call (kernel/engine/outcome_batch.py)."""

    def hurry(self, plugin_id: str) -> None: ...

    async def flush(self) -> None: ...


class Background:
    """Plugin calls left running after a turn answered (one per kernel context: `ctx.background`).

    A job is tagged with the plugin ids it calls, the session it belongs to and its scope: the KB the
    turn had mounted (None: none), since a plugin keeps what it learns per KB (its artifact folder).
    `snapshot(scope, session)` (taken when a turn starts) and `wait_for(...)` let a later turn of the
    same session and scope wait, before calling a plugin, for exactly the jobs calling it that were
    pending when it started; a turn of another session or on another KB never waits for them. A job's failure is logged, never raised to a waiter: the
    turn that started it has already answered.
    """

    def __init__(self) -> None:
        # job -> (plugin ids it calls, its session, its scope, the tasks a later call to those plugins
        # waits for)
        self._jobs: dict[
            asyncio.Task, tuple[frozenset[str], str | None, str | None, tuple[asyncio.Task, ...]]
        ] = {}
        self.batcher: Batcher | None = None  # made by the engine on its first batched outcome

    def __len__(self) -> int:
        return len(self._jobs)

    def start(
        self,
        job: Coroutine[Any, Any, Any],
        plugin_ids: Iterable[str],
        session_id: str | None = None,
        calls: Iterable[asyncio.Task] = (),
        scope: str | None = None,
    ) -> asyncio.Task:
        """Run `job`; a later turn of `scope` calling one of `plugin_ids` waits for `calls` (the job's
        plugin calls; default: the whole job), not for the bookkeeping the job does after them."""
        task = asyncio.get_running_loop().create_task(job)
        self._jobs[task] = (frozenset(plugin_ids), session_id, scope, tuple(calls) or (task,))
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task) -> None:
        self._jobs.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("a background plugin call failed", exc_info=task.exception())

    def snapshot(self, scope: str | None, session_id: str | None) -> dict[str, list[asyncio.Task]]:
        """Plugin id -> the calls to it still running in a job of `session_id` and `scope` now (empty
        when none: the common case)."""
        if not self._jobs:
            return {}
        out: dict[str, list[asyncio.Task]] = {}
        for plugin_ids, job_session, job_scope, calls in self._jobs.values():
            if job_scope != scope or job_session != session_id:
                continue
            waits = [c for c in calls if not c.done()]
            for plugin_id in plugin_ids if waits else ():
                out.setdefault(plugin_id, []).extend(waits)
        return out

    def pending(self, session_id: str | None = None) -> list[asyncio.Task]:
        """Jobs still running (of one session when given). A job that has ended stays in `_jobs` until
        its done-callback runs on a later loop iteration; it is not pending (`drain` would spin on it
        without yielding, and the callback could never run)."""
        return [
            t
            for t, (_, s, _, _) in self._jobs.items()
            if not t.done() and (session_id is None or s == session_id)
        ]

    def hurry(self, plugin_id: str) -> None:
        """A turn is about to wait for jobs calling `plugin_id`: their held-back outcomes go out now."""
        if self.batcher is not None:
            self.batcher.hurry(plugin_id)

    @staticmethod
    async def wait_for(tasks: Iterable[asyncio.Task]) -> None:
        """Wait until these jobs end; their outcome is theirs (failures are logged by `_done`).
        Cancelling the waiter does not cancel the jobs."""
        waiting = [t for t in tasks if not t.done()]
        if waiting:
            await asyncio.wait(waiting)

    async def drain(self, session_id: str | None = None) -> None:
        """Wait for every pending job (of one session when given), including jobs started meanwhile;
        held-back outcomes are sent first (nothing waits for the batch timer)."""
        if self.batcher is not None:
            await self.batcher.flush()
        while jobs := self.pending(session_id):
            await self.wait_for(jobs)
