"""The page text a LaTeX source shows (latex_page.py scans the source): its characters, each with the source
span it shows, and its runs (html_blocks.Run) — a heading's, a paragraph's, a list item's, a definition's
term or description, a code block's, a note's — in the open environments' lists and tables."""

from __future__ import annotations

from dataclasses import dataclass, field

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .html_blocks import Run
from .page_text import ShownText

_BLANK_RUN = lazy_pattern(r"[ \t\n\r\f]{2,}")
BLANKS = " \t\n\r\f"
_CLOSING = frozenset(",.;:!?)")
_AS_SPACE = str.maketrans({c: " " for c in BLANKS})


@dataclass(slots=True)
class Env:
    """An open environment: a list's or a table's group of runs, the role and marker of its next run; an
    other environment knows the list or table around it (`ctx`), whose runs its text continues."""

    name: str
    kind: str  # list | table | other
    group: int = -1
    ordered: bool = False
    describes: bool = False
    count: int = 0
    role: str = "li"
    marker: str = ""
    ctx: Env | None = field(default=None, repr=False)


class PageText(ShownText):
    """The page text written so far, its runs, and the open environments."""

    def __init__(self, src: str) -> None:
        super().__init__()
        self.src = src
        # a heading's, a note's or a term's run: its role, group and level
        self.pending: tuple[str, int, int] | None = None
        self.envs: list[Env] = []
        self.cells: list[tuple[int, int]] = []  # a table row's cells so far (page-text spans)
        self.cell_from = 0  # where its current cell starts

    def shown(self, piece: str, a: int, b: int, whole: bool = False) -> None:
        """`piece` shown for the source's [a, b) (`whole`: text a command stands for, not written in the source)."""
        if self.run is None:
            self._open_run(a)
        self._put(piece, a, b, whole)

    def blank(self, a: int, b: int) -> None:
        if not self._last_blank():
            self._put(" ", a, b)

    def text(self, a: int, b: int) -> None:
        """The source's [a, b) as text: a run of blanks is one space (a lone blank shown in its place)."""
        raw = self.src[a:b]
        if self.run is None:
            if not raw.strip(BLANKS):
                return
            self._open_run(a)
        elif raw[:1] in _CLOSING and self.size > self.run.body and self.parts[-1][-1:] == " ":
            self._drop_tail(1)  # a command that showed nothing left its blank before the punctuation
        pos = 0
        for m in _BLANK_RUN.finditer(raw):
            self._words(raw, a, pos, m.start())
            self.blank(a + m.start(), a + m.end())
            pos = m.end()
        self._words(raw, a, pos, len(raw))

    def _words(self, raw: str, a: int, i: int, j: int) -> None:
        if i < j and raw[i] in BLANKS and self._last_blank():
            i += 1
        if i < j:
            self._put(raw[i:j].translate(_AS_SPACE), a + i, a + j)

    def context(self) -> Env | None:
        top = self.envs[-1] if self.envs else None
        return top.ctx if top is not None and top.kind == "other" else top

    def _open_run(self, at: int) -> None:
        marker, level = "", 0
        if self.pending is not None:
            role, group, level = self.pending
        else:
            env = self.context()
            role, group = ("p", -1) if env is None else (env.role, env.group)
            if env is not None and env.kind == "list":
                marker, env.marker = env.marker, ""
        start = self.size
        sep = "\n" if group >= 0 and self.runs and self.runs[-1].group == group else "\n\n"
        if self.size:
            self._put(sep, at, at)
        if marker:
            self._put(marker + " ", at, at)
        self.run = Run(role, start, self.size, self.size, group, marker=marker, level=level)
        self.cells, self.cell_from = [], self.size

    def cell_end(self, a: int) -> None:
        """A table row's cell ends at the source's `&` (a): shown as " | " between the cells."""
        if self.run is None:
            self._open_run(a)
        self.cells.append((self.cell_from, self.size))
        self._put("| " if self._last_blank() else " | ", a, a + 1)
        self.cell_from = self.size

    def close_run(self) -> None:
        run, self.run = self.run, None
        if run is None:
            return
        if not self._run_ended(run):  # nothing shown: the run and its separator are undone
            return
        if run.role == "row":
            run.cells = [*self.cells, (self.cell_from, run.end)]
        self.runs.append(run)
