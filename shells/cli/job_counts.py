"""An ingest job's counts (files, bytes, units, units/s) and its printed lines, without a bar: what
`mrpvm ingest` uses when no bar can be drawn (--json, or stderr is no terminal), so such a run never loads
rich (~0.07 s of CPU, on the path to the sd call). progress.py's JobProgress draws the bar on top of it."""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Self


def bar_possible() -> bool:
    """stderr may be a terminal for rich (a tty, or TTY_COMPATIBLE=1 / FORCE_COLOR says so): else a bar is
    never drawn there."""
    return sys.stderr.isatty() or os.environ.get("TTY_COMPATIBLE") == "1" or "FORCE_COLOR" in os.environ


class JobCounts:
    """A job of `files` files holding `total_bytes` bytes; use as a context manager around the work."""

    def __init__(self, files: int, total_bytes: int):
        self.files = files
        self.total_bytes = max(1, total_bytes)
        self._done_files = 0
        self._done_bytes = 0  # bytes of the files already finished
        self._units = 0  # units of the files already finished
        self._file_units = 0
        self._started = time.perf_counter()
        self._phase = ""
        self._phase_started = 0.0
        self._file_bytes = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    @property
    def units(self) -> int:
        return self._units + self._file_units

    def rate(self) -> float:
        """Units per second over the whole job so far."""
        return self.units / max(1e-6, time.perf_counter() - self._started)

    def _refresh(self, name: str, file_bytes: int = 0) -> None:
        """Show the job's state (the bar's redraw; nothing here)."""

    def phase_text(self, short: bool = False) -> str:
        """The step in work that has no byte count (`short`: its first word, for the bar), with its
        elapsed seconds; empty when there is none."""
        if not self._phase:
            return ""
        what = self._phase.split()[0] + "…" if short else self._phase
        return f"{what} {time.perf_counter() - self._phase_started:.0f}s"

    def phase(self, name: str, text: str) -> None:
        """The file `name` is in a step with no byte count (`text`, e.g. "indexing 1,234 units")."""
        self._phase, self._phase_started = text, time.perf_counter()
        self._refresh(name, self._file_bytes)

    def file_callbacks(self, name: str):
        """(on_progress(done, total), on_units(n)) for the file `name` now in work."""
        self._file_units = 0
        self._file_bytes = 0
        self._phase = ""
        self._refresh(name)

        def on_progress(done: int, total: int) -> None:
            self._file_bytes = done
            self._refresh(name, done)

        def on_units(n: int) -> None:
            self._file_units = n
            self._refresh(name)

        return on_progress, on_units

    def file_done(self, size: int, units: int) -> None:
        """The file in work is finished (ingested, unchanged or failed) with `units` units."""
        self._done_files += 1
        self._done_bytes += size
        self._units += units
        self._file_units = 0
        self._phase = ""
        self._refresh("")

    def say(self, message: str) -> None:
        """A result line on stdout."""
        sys.stdout.write(message + "\n")
        sys.stdout.flush()

    def warn(self, message: str) -> None:
        """A warning or error line on stderr."""
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
