"""The page text a reader of a marked-up source writes (html_page.py, latex_text.py): its pieces, and for each
of its characters the source span it shows, so units built from the page text slice the source."""

from __future__ import annotations

from array import array


class ShownText:
    """The page text so far: `parts` joined, `size` characters, `starts`/`ends` each one's source span."""

    parts: list[str]
    size: int
    starts: array
    ends: array

    def __init__(self) -> None:
        self.parts = []
        self.size = 0
        self.starts = array("q")
        self.ends = array("q")

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
