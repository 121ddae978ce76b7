"""The boxes of an HTML page that frame their text (html_page.py keeps the page text and its runs; this keeps
what each box says of them):
- a disclosure, `<details><summary>…</summary>…</details>`: its summary's text and its body's span, an entry
  (details.py folds it into one definition);
- an admonition, a box whose class names one of the admonitions (directive_fences.ADMONITIONS: "admonition
  note", "markdown-alert-warning", "theme-admonition-tip"): its title — the first text in it, when the page
  marks it a title (a class naming a title or heading) or it is the box's kind name alone ("Note") — labels
  the box's first paragraph ("Note: Rinse the sensor monthly."), as the page shows it: a heading over the
  box's text, not a paragraph or a section of its own.
Every step is constant time or amortised over the elements opened.
"""

from __future__ import annotations

from dataclasses import dataclass

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .details import Disclosure
from .directive_fences import ADMONITIONS
from .html_blocks import Run

_CLASS_WORD = lazy_pattern(r"[A-Za-z]+")
_TITLE_CLASS = lazy_pattern(r"(?i)title|heading")
MAX_LABEL_WORDS = 6
MAX_LABEL_CHARS = 60


def _class_of(attrs: list[tuple[str, str | None]]) -> str:
    return next((v or "" for k, v in attrs if k == "class"), "")


@dataclass(slots=True)
class _OpenDetails:
    """An open details: how many runs there were when its summary may open (-1: no summary may now, its first
    content was something else), and its summary's text span in the page text (-1: none yet)."""

    first_run: int
    term_start: int = -1
    term_end: int = -1


@dataclass(slots=True)
class _OpenNote:
    """An open admonition: the reader's stack depth inside it, how many runs there were when it opened (-1: its
    first run was read), and whether the page marked an element in it as its title."""

    depth: int
    first_run: int
    titled: bool = False


class Boxes:
    """What the open boxes say of the reader's runs (`runs`, the list html_page.py fills)."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs = runs
        self.details: list[_OpenDetails] = []
        self.disclosures: list[Disclosure] = []
        self.notes: list[_OpenNote] = []
        self.label: Run | None = None  # an admonition's title, waiting for the paragraph it labels

    # ------------------------------------------------------------------ disclosures

    def summary_closed(self) -> None:
        """A details' summary closed: the text its runs showed is the entry's term."""
        if not self.details:
            return
        entry = self.details[-1]
        first = entry.first_run
        if first >= 0 and entry.term_start < 0 and first < len(self.runs):
            entry.term_start, entry.term_end = self.runs[first].body, self.runs[-1].end
        entry.first_run = -1

    def details_closed(self, size: int) -> None:
        """A details closed (`size`: the page text's length): with a summary, an entry whose body is what
        followed the summary."""
        if not self.details:
            return
        entry = self.details.pop()
        if entry.term_start >= 0:
            term_start, term_end = entry.term_start, entry.term_end
            end = max(size, term_end)
            self.disclosures.append(Disclosure(term_start, end, term_start, term_end, term_end, end))

    # ------------------------------------------------------------------ admonitions

    def opened(self, tag: str, attrs: list[tuple[str, str | None]], depth: int) -> None:
        """An element opened (`depth`: the open elements with it): a details or its summary, an admonition, or
        the element that marks an admonition's title."""
        if tag == "details":
            self.details.append(_OpenDetails(len(self.runs)))
            return
        if tag == "summary" and self.details:
            top = self.details[-1]
            first = top.first_run == len(self.runs) and top.term_start < 0  # the summary is its first content
            top.first_run = len(self.runs) if first else -1
        names = _class_of(attrs)
        if not names:
            return
        if self.waits():  # inside a box, before its first text: what marks its title
            if _TITLE_CLASS.search(names):
                self.notes[-1].titled = True
        elif any(w.lower() in ADMONITIONS for w in _CLASS_WORD.findall(names)):
            self.flush()
            self.notes.append(_OpenNote(depth, len(self.runs)))

    def closed(self, depth: int) -> None:
        """An element closed, `depth` open elements left: an admonition it closes shows a title that labelled
        no paragraph as a paragraph of its own."""
        if self.notes and depth < self.notes[-1].depth:
            self.notes.pop()
            self.flush()

    def waits(self) -> bool:
        """Whether an admonition waits for its first run."""
        return bool(self.notes) and self.notes[-1].first_run == len(self.runs)

    def took(self, run: Run, text: str) -> bool:
        """Whether `run`, just read (`text` its text, or "" when too long for a title), is the title of the
        admonition it opens: held as the label of the next paragraph, not kept by the caller."""
        if not self.waits():
            return False
        note = self.notes[-1]
        note.first_run = -1
        said = " ".join(text.split())
        if (
            not said
            or (run.role != "p" and not run.level)
            or not (note.titled or said.rstrip(":").lower() in ADMONITIONS)
        ):
            return False
        if len(said) > MAX_LABEL_CHARS or len(said.split()) > MAX_LABEL_WORDS or said[-1:] in ".!?":
            return False
        self.flush()
        self.label = run
        return True

    def labels(self, role: str, group: int, marker: str) -> Run | None:
        """The title a run opening now takes as its label: a paragraph's; before any other run, the title is
        shown as a paragraph of its own."""
        label, self.label = self.label, None
        if label is not None and (role != "p" or group >= 0 or marker):
            self.runs.append(label)
            return None
        return label

    def flush(self) -> None:
        """A title waiting for its paragraph shown as a paragraph of its own (what comes next is no paragraph)."""
        if self.label is not None:
            self.runs.append(self.label)
            self.label = None
