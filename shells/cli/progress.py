"""One progress bar for a whole ingest job (every file of `mrpvm ingest`, or a KB import's sources).

The bar counts bytes over the job's total, names the file in work, and shows files done, units made,
units per second and the time left. It draws on stderr only when stderr is a terminal and the command
does not print JSON; results and warnings go through `say` / `warn`, printed above the bar so the bar
stays one line at the bottom.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

NAME_CHARS = 22  # the file name column: the bar fits an 80-column terminal


class JobProgress:
    """A job of `files` files holding `total_bytes` bytes; use as a context manager around the work."""

    def __init__(self, files: int, total_bytes: int, *, out: Console, enabled: bool):
        self.err = Console(stderr=True, highlight=False)
        self.out = out
        self.files = files
        self.total_bytes = max(1, total_bytes)
        self._done_files = 0
        self._done_bytes = 0  # bytes of the files already finished
        self._units = 0  # units of the files already finished
        self._file_units = 0
        self._started = time.perf_counter()
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            TextColumn("{task.fields[files]}"),
            DownloadColumn(),
            TextColumn("{task.fields[units]}"),
            TimeRemainingColumn(),
            console=self.err,
            transient=True,
            disable=not (enabled and self.err.is_terminal),
        )
        self._task: TaskID = self.progress.add_task("", total=self.total_bytes, files="", units="")
        self._refresh("")

    def __enter__(self) -> JobProgress:
        self.progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.stop()

    @property
    def units(self) -> int:
        return self._units + self._file_units

    def rate(self) -> float:
        """Units per second over the whole job so far."""
        return self.units / max(1e-6, time.perf_counter() - self._started)

    def _refresh(self, name: str, file_bytes: int = 0) -> None:
        position = min(self.files, self._done_files + 1)
        shown = name if len(name) <= NAME_CHARS else "…" + name[-(NAME_CHARS - 1) :]
        self.progress.update(
            self._task,
            description=f"{shown:<{NAME_CHARS}}",
            completed=min(self.total_bytes, self._done_bytes + file_bytes),
            files=f"{position}/{self.files}",
            units=f"{self.units:,} units {self.rate():,.0f}/s",
        )

    def file_callbacks(self, name: str):
        """(on_progress(done, total), on_units(n)) for the file `name` now in work."""
        self._file_units = 0
        self._refresh(name)

        def on_progress(done: int, total: int) -> None:
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
        self._refresh("")

    def say(self, message: str) -> None:
        """A result line on stdout (above the bar)."""
        self.out.print(message, markup=False, highlight=False, soft_wrap=True)

    def warn(self, message: str) -> None:
        """A warning or error line on stderr (above the bar)."""
        self.err.print(message, markup=False, highlight=False, soft_wrap=True)
