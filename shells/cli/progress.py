"""One progress bar for a whole ingest job (every file of `mrpvm ingest`, or a KB import's sources).

The bar counts bytes over the job's total, names the file in work, and shows files done, units made,
units per second and the time left. A step with no byte count (the kb-plugins indexing a file's units:
kb-balanced embeds each one) is named on the bar with a spinner and its elapsed seconds, so a long
embedding never looks like a hang. It draws on stderr only when stderr is a terminal and the command
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
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

NAME_CHARS = 22  # the file name column: the bar fits an 80-column terminal


class _PhaseColumn(TimeRemainingColumn):
    """The time left; during a step without a byte count, that step's verb and its elapsed seconds
    instead (re-read at every refresh: the bar keeps moving while a kb-plugin embeds)."""

    def __init__(self, job: JobProgress):
        super().__init__()
        self.job = job

    def render(self, task: Task) -> Text:
        if self.job.phase_text():
            return Text(self.job.phase_text(short=True))
        return super().render(task)


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
        self._phase = ""
        self._phase_started = 0.0
        self._file_bytes = 0
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=10),
            TextColumn("{task.fields[files]}"),
            DownloadColumn(),
            TextColumn("{task.fields[units]}"),
            _PhaseColumn(self),
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
        """A result line on stdout (above the bar)."""
        self.out.print(message, markup=False, highlight=False, soft_wrap=True)

    def warn(self, message: str) -> None:
        """A warning or error line on stderr (above the bar)."""
        self.err.print(message, markup=False, highlight=False, soft_wrap=True)
