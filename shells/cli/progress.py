"""One progress bar for a whole ingest job (every file of `mrpvm ingest`, or a KB import's sources).

The bar counts bytes over the job's total, names the file in work, and shows files done, units made,
units per second and the time left. A step with no byte count (the kb-plugins indexing a file's units:
kb-balanced embeds each one) is named on the bar with a spinner and its elapsed seconds, so a long
embedding never looks like a hang. It draws on stderr only when stderr is a terminal and the command
does not print JSON; results and warnings go through `say` / `warn`, printed above the bar so the bar
stays one line at the bottom. A job whose bar cannot be drawn (--json, stderr no terminal) uses
job_counts.JobCounts alone and never loads rich.
"""

from __future__ import annotations

from types import TracebackType

from mrpvm.shells.cli.job_counts import JobCounts
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


class JobProgress(JobCounts):
    """A job of `files` files holding `total_bytes` bytes, drawn as a bar (job_counts.py keeps the counts);
    use as a context manager around the work."""

    def __init__(self, files: int, total_bytes: int, *, out: Console, enabled: bool):
        super().__init__(files, total_bytes)
        self.err = Console(stderr=True, highlight=False)
        self.out = out
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

    def say(self, message: str) -> None:
        """A result line on stdout (above the bar)."""
        self.out.print(message, markup=False, highlight=False, soft_wrap=True)

    def warn(self, message: str) -> None:
        """A warning or error line on stderr (above the bar)."""
        self.err.print(message, markup=False, highlight=False, soft_wrap=True)
