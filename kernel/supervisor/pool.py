"""The warm workers of one plugin: at most `size`, started lazily, reused most-recent-first.

The pool is a dispatcher. A submitted job goes to an idle worker, or to a new worker if a slot is free,
or into a FIFO queue. When a reply arrives the reader callback finishes that job and sends the next
queued frame on the same worker at once, so a worker never waits for a caller's task to be scheduled.
A worker that dies or is killed frees its slot, which goes straight to the next queued job.

Invariant: jobs are queued only while every slot is busy.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

from .errors import CRASHED, SHUTDOWN, TIMEOUT, ProcessFailure
from .worker import Job, Worker

EWMA_ALPHA = 0.2


class WorkerPool:
    def __init__(self, size: int, spawn: Callable[[WorkerPool], Worker], loop: asyncio.AbstractEventLoop):
        self.size = size
        self.loop = loop
        self._spawn = spawn
        self.idle: list[Worker] = []
        self.workers: set[Worker] = set()  # every process started and not yet reaped
        self.slots = 0  # workers counted against `size`
        self.busy = 0
        self.queue: deque[Job] = deque()
        self.closed = False
        self.ewma_s = 0.0  # send → reply time
        self.generation = 0  # workers of an older generation finish their job and leave (`retire`)
        # started at its size (`fill()`, a daemon's warm pools): a retired worker is replaced at once, so a
        # new artifacts folder (a new KB) does not leave the pool to grow again in the middle of a load
        self.full = False

    # ------------------------------------------------------------------ submitting

    def submit(self, job: Job) -> None:
        """Start the job now if a worker can take it, else queue it. Outcomes arrive on job.fut."""
        if self.closed:
            self._finish(job, exc=ProcessFailure(SHUTDOWN, "the supervisor is shutting down"))
            return
        job.timer = self.loop.call_at(job.deadline, self._expire, job)
        idle = self.idle
        while idle:
            worker = idle.pop()
            if worker.usable:
                self.busy += 1
                worker.start(job)
                return
            self.slots -= 1  # died while idle: its slot is free again
        if self.slots < self.size:
            self.slots += 1
            self._start_fresh(job)
            return
        self.queue.append(job)

    def _start_fresh(self, job: Job) -> None:
        """Spawn a worker in an already claimed slot and give it the job."""
        try:
            worker = self._spawn(self)
        except ProcessFailure as failure:
            self.slots -= 1
            self._finish(job, exc=failure)
            return
        self.workers.add(worker)
        self.busy += 1
        worker.start(job)

    def _next_job(self) -> Job | None:
        queue = self.queue
        while queue:
            job = queue.popleft()
            if not job.fut.done():
                return job
        return None

    def _free_slot(self) -> None:
        """A slot was given up; the next queued job, if any, starts a worker in it."""
        self.slots -= 1
        while not self.closed and self.queue and self.slots < self.size:
            job = self._next_job()
            if job is None:
                return
            self.slots += 1
            self._start_fresh(job)

    @staticmethod
    def _finish(job: Job, body: bytes | None = None, exc: BaseException | None = None) -> None:
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        fut = job.fut
        if not fut.done():
            if exc is None:
                fut.set_result(body)  # type: ignore[arg-type]
            else:
                fut.set_exception(exc)

    # ------------------------------------------------------------------ outcomes (called by workers)

    def done(self, worker: Worker, job: Job, body: bytes) -> None:
        self.ewma_s += EWMA_ALPHA * (time.perf_counter() - job.sent_at - self.ewma_s)
        self._finish(job, body)
        worker.after_call()
        if not self.closed and worker.usable and worker.generation == self.generation:
            following = self._next_job()
            if following is not None:
                worker.start(following)
                return
            self.busy -= 1
            self.idle.append(worker)
        else:
            self.busy -= 1
            retired = worker.generation != self.generation and worker.usable
            if retired:
                worker.close()  # retired: done with its job, it leaves on EOF
            else:
                worker.kill()
            self._free_slot()
            if retired:
                self._refill()

    def retire(self) -> None:
        """Workers started until now serve no new job: idle ones get EOF now, busy ones after their job.

        Used when a worker must be started differently (the sandbox binds a new artifacts folder).
        """
        self.generation += 1
        for worker in self.idle:
            worker.close()
        self.slots -= len(self.idle)  # nothing is queued while a worker is idle: no job waits for these
        self.idle.clear()
        self._refill()

    def _refill(self) -> None:
        """A pool kept at its size (`full`) starts fresh workers in its free slots; a spawn failure is left
        to the next call, which reports it."""
        if self.full and not self.closed:
            try:
                self.fill()
            except ProcessFailure:
                pass

    def failed(self, worker: Worker, job: Job, failure: ProcessFailure) -> None:
        """The job failed and the worker was killed."""
        self.busy -= 1
        self._finish(job, exc=failure)
        self._free_slot()

    def stale(self, worker: Worker, job: Job) -> None:
        """The worker had left before taking the job: retry once on a fresh worker."""
        self.busy -= 1
        if job.retried or worker.served == 0:
            failure = ProcessFailure(
                CRASHED, "worker exited before taking the request", stderr=worker.proc.stderr.value()
            )
            self._finish(job, exc=failure)
        elif not job.fut.done():
            job.retried = True
            self.queue.appendleft(job)
        self._free_slot()

    def gone(self, worker: Worker) -> None:
        """A worker process was reaped. If it was idle its slot is free; a busy one was handled already."""
        self.workers.discard(worker)
        if worker in self.idle:
            self.idle.remove(worker)
            self._free_slot()

    def _expire(self, job: Job) -> None:
        job.timer = None
        if job.fut.done():
            return
        worker = job.worker
        if worker is not None:
            worker.fail(ProcessFailure(TIMEOUT, "no reply before the deadline; worker killed"))
            return
        try:
            self.queue.remove(job)
        except ValueError:
            pass
        self._finish(
            job,
            exc=ProcessFailure(
                TIMEOUT, "no free worker before the deadline", details={"queued": True}, crash=False
            ),
        )

    def cancel(self, job: Job) -> None:
        """The caller gave up (its task was cancelled)."""
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        worker = job.worker
        if worker is not None:
            job.worker = None
            worker.abandon()
            self.busy -= 1
            self._free_slot()
            return
        try:
            self.queue.remove(job)
        except ValueError:
            pass

    # ------------------------------------------------------------------ warm-up and shutdown

    def fill(self, upto: int | None = None) -> int:
        """Start workers in every free slot (or until `upto` are alive); how many were started (spawn
        failures raise). Filled to its size once, the pool is kept `full` from then on."""
        started = 0
        target = self.size if upto is None else min(self.size, upto)
        self.full = self.full or upto is None
        while self.slots < target and not self.closed:
            self.slots += 1
            try:
                worker = self._spawn(self)
            except ProcessFailure:
                self.slots -= 1
                raise
            self.workers.add(worker)
            self.idle.append(worker)
            started += 1
        return started

    def close(self) -> None:
        """Refuse new jobs, fail the queued ones, EOF to idle workers, kill busy ones."""
        self.closed = True
        while self.queue:
            self._finish(
                self.queue.popleft(), exc=ProcessFailure(SHUTDOWN, "the supervisor is shutting down")
            )
        for worker in list(self.workers):
            if worker.job is None:
                worker.close()
            else:
                worker.kill()
