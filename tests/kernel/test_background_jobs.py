"""kernel/background.py on its own: a job that has ended but whose done-callback has not run yet.

asyncio runs a task's done-callbacks on the loop iteration after the task ends. A `drain` that counted
such a job as pending looped without yielding, so the callback never ran and the daemon's event loop
spun forever (an explainability request right after a turn hung the daemon, and SIGTERM with it).
"""

from __future__ import annotations

import asyncio

from mrpvm.kernel.background import Background


async def _ended_with_callback_pending() -> tuple[Background, asyncio.Task]:
    background = Background()

    async def job() -> int:
        return 1

    task = background.start(job(), ["planner-a"], "session-1")
    # One loop iteration: the job's step runs (it ends and schedules its done-callback), then this
    # coroutine resumes in the same iteration, before that callback.
    await asyncio.sleep(0)
    return background, task


def test_an_ended_job_whose_callback_has_not_run_is_not_pending():
    async def go() -> tuple[bool, int, list, list]:
        background, task = await _ended_with_callback_pending()
        return task.done(), len(background), background.pending(), background.pending("session-1")

    done, tracked, pending_all, pending_session = asyncio.run(go())
    assert done and tracked == 1  # still tracked: its done-callback has not run
    assert pending_all == [] and pending_session == []


def test_drain_returns_and_the_job_is_forgotten_once_its_callback_ran():
    async def go() -> tuple[int, int]:
        background, task = await _ended_with_callback_pending()
        await asyncio.wait_for(background.drain("session-1"), timeout=60)
        await asyncio.sleep(0)  # the done-callback's turn
        return len(background), task.result()

    assert asyncio.run(go()) == (0, 1)


def test_drain_waits_for_a_running_job_of_its_session_only():
    async def go() -> tuple[bool, bool]:
        background = Background()
        release = asyncio.Event()

        async def blocked() -> None:
            await release.wait()

        mine = background.start(blocked(), ["planner-a"], "mine")
        other = background.start(blocked(), ["planner-a"], "other")
        drained = asyncio.ensure_future(background.drain("mine"))
        await asyncio.sleep(0)
        waited = not drained.done()
        release.set()
        await asyncio.wait_for(drained, timeout=60)
        await asyncio.wait_for(background.drain(), timeout=60)
        return waited, mine.done() and other.done()

    assert asyncio.run(go()) == (True, True)
