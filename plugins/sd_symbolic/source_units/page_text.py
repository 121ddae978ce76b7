"""The page text a reader of a marked-up source writes (html_page.py, latex_text.py, roff_blocks.py): its
pieces, its runs (html_blocks.Run), and for each of its characters the source span it shows, so units built
from the page text slice the source; the `Page` each of those readers and the YAML one return."""

from __future__ import annotations

from array import array

from .html_blocks import Run
from .segments import Block

BLANKS = " \t\n\r\f"  # what a run's end trims


class Page:
    """The page text of a source, its blocks, and the source span each of its characters shows."""

    def __init__(self, text: str, blocks: list[Block], starts: array, ends: array):
        self.text = text
        self.blocks = blocks
        self._starts = starts
        self._ends = ends

    def source_span(self, a: int, b: int) -> tuple[int, int]:
        """The source's span that the page text [a, b) shows."""
        n = len(self.text)
        if n == 0:
            return 0, 0
        a = min(max(a, 0), n - 1)
        b = min(max(b, a + 1), n)
        return self._starts[a], max(self._ends[b - 1], self._starts[a])


class ShownText:
    """The page text so far: `parts` joined, `size` characters, `starts`/`ends` each one's source span; the
    runs ended (`runs`) and the one open (`run`)."""

    parts: list[str]
    size: int
    starts: array
    ends: array
    runs: list[Run]
    run: Run | None

    def __init__(self) -> None:
        self.parts = []
        self.size = 0
        self.starts = array("q")
        self.ends = array("q")
        self.runs = []
        self.run = None

    def _last_blank(self) -> bool:
        """No run open, nothing shown in it yet, or the page text ends with a blank."""
        return self.run is None or self.size == self.run.body or self.parts[-1][-1:] in (" ", "\n")

    def _run_ended(self, run: Run) -> bool:
        """A run's end: its trailing blanks undone and its end set (True); when it showed nothing, it and its
        separator are undone (False)."""
        while self.size > run.body and self.parts[-1][-1:] in BLANKS:
            self._drop_tail(1)
        if self.size == run.body:
            self._drop_tail(self.size - run.start)
            return False
        run.end = self.size
        return True

    def _put(self, piece: str, a: int, b: int, whole: bool = False) -> None:
        """Page text that shows the source's [a, b): a piece as long as its span is the source's own characters,
        each showing its own; any other piece (or one shown for its span as a `whole`: a command's text, which
        may be as long as the command by chance) shows the span as a whole in each character."""
        self.parts.append(piece)
        self.size += len(piece)
        if whole or len(piece) == 1 or b - a != len(piece):
            self.starts.extend([a] * len(piece))
            self.ends.extend([b] * len(piece))
        else:  # a verbatim piece: each character shows its own
            self.starts.extend(range(a, b))
            self.ends.extend(range(a + 1, b + 1))

    def _drop_tail(self, n: int) -> None:
        """The last n characters of the page text undone."""
        self.size -= n
        del self.starts[self.size :]
        del self.ends[self.size :]
        while n > 0:
            last = self.parts.pop()
            if len(last) > n:
                self.parts.append(last[:-n])
                return
            n -= len(last)
