"""A tbl(1) table in a man page source (.TS … .TE) read as its rows of cells: the options line (`allbox
tab(:);`) and the format lines (`l l.`, again after `.T&`) show nothing; each data line is a row, its cells
parted by the tab character; a `T{` … `T}` text block is one cell over several lines; `_` and `=` lines are
rules. roff_page.py writes each row as a table row (the HTML reader's row), so the rows make a table block."""

from __future__ import annotations

from collections.abc import Callable

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .roff_text import Text

_TAB = lazy_pattern(r"\btab\s*\(\s*(.)\s*\)")
_RULE = frozenset({"_", "=", "\\_", ""})


class Table:
    """The state of a table being read: where in it the reader is, and the row under way."""

    def __init__(self) -> None:
        self.phase = "options"  # options | format | data
        self.tab = "\t"
        self.cells: list[Text] = []
        self.block: Text | None = None  # a T{ … T} cell under way

    def line(self, src: str, a: int, b: int, text_of: Callable[[int, int], Text]) -> list[Text] | None:
        """Read one line of the table; a row when the line completes one. `text_of(a, b)`: what a line of
        text (or a request) inside the table shows."""
        line = src[a:b]
        if self.phase == "options":
            self.phase = "format"
            if line.rstrip().endswith(";"):
                m = _TAB.search(line)
                self.tab = m.group(1) if m else self.tab
                return None
        if self.phase == "format":
            if line.rstrip().endswith("."):
                self.phase = "data"
            return None
        if line.startswith(".T&"):
            self.phase = "format"
            return None
        if self.block is not None:
            if not line.startswith("T}"):
                shown = text_of(a, b)
                if shown:
                    self.block.extend([(" ", a, a), *shown] if self.block else shown)
                return None
            self.cells.append(self.block)
            self.block = None
            a += 2
            if a < b and src[a] == self.tab:
                a += 1
            elif a >= b or not src[a:b].strip():
                return self._row()
        elif line.strip() in _RULE and not self.cells:
            return None
        return self._cells(src, a, b, text_of)

    def _cells(self, src: str, a: int, b: int, text_of: Callable[[int, int], Text]) -> list[Text] | None:
        start = a
        while True:
            k = src.find(self.tab, start, b)
            end = b if k < 0 else k
            if src[start:end].strip() == "T{" and k < 0:
                self.block = []
                return None
            self.cells.append(text_of(start, end) if src[start:end].strip() not in _RULE else [])
            if k < 0:
                return self._row()
            start = k + 1

    def _row(self) -> list[Text]:
        row, self.cells = self.cells, []
        return row
