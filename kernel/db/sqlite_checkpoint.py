"""WAL checkpoints off the committing thread, for a long-running process (the daemon).

SQLite checkpoints its WAL into the database file inside the COMMIT that passes `wal_autocheckpoint`
(1,000 pages): that commit copies the frames and syncs both files before it returns. The daemon commits on
its event loop (store_calls.py), so such a commit stopped every turn in flight: over 1,000 turns of
bench/daemon_kb_load.py on a busy machine, 30 of ~2,000 commits took over 5 ms, the longest 255 ms, 0.9 s in
all, where the median commit takes 0.04 ms (bench/daemon_pauses.py). With `checkpoint_in_background` the
process's connections never checkpoint when they commit; a thread of its own runs a PASSIVE checkpoint (it
never waits for readers or writers) after commits, at most once per CHECKPOINT_INTERVAL_S. The sqlite3
module releases the GIL while SQLite works, so the loop runs meanwhile. Durability is unchanged: a commit
is in the WAL either way, and a checkpoint only moves committed frames into the database file.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable

CHECKPOINT_INTERVAL_S = 1.0
STOP_TIMEOUT_S = 10.0


class BackgroundCheckpoints:
    """A thread that checkpoints the WAL after `committed()` calls, at most once per interval."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], interval_s: float = CHECKPOINT_INTERVAL_S):
        self._connect = connect  # this thread's connection (the database's per-thread one)
        self._interval_s = interval_s
        self._pending = threading.Event()
        self._stopping = threading.Event()
        self.runs = 0  # checkpoints run (tests)
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoints", daemon=True)
        self._thread.start()

    def committed(self) -> None:
        """A transaction committed: its frames are checkpointed soon."""
        self._pending.set()

    def stop(self) -> None:
        """Stop the thread (a pending checkpoint is left to SQLite's own, when the last connection closes)."""
        self._stopping.set()
        self._pending.set()
        self._thread.join(STOP_TIMEOUT_S)

    def _run(self) -> None:
        while True:
            self._pending.wait()
            if self._stopping.is_set():
                return
            self._pending.clear()
            try:
                self._connect().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.runs += 1
            except sqlite3.Error:
                pass  # busy, or the store closing: the next commit asks again
            except Exception:  # noqa: BLE001 - the store is closed (StoreError): nothing more to do
                return
            if self._stopping.wait(self._interval_s):
                return
