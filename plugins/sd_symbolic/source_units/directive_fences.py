"""MyST directive fences whose body is prose: ```` ```{note} ````, ```` ```{tab} Windows ````, ```` ```{dropdown} ````.

MyST Markdown (Sphinx and Jupyter Book documentation) writes a directive as a fenced block whose info string
is the directive's name in braces. A code directive (```` ```{code-block} python ````, ```` ```{literalinclude} ````)
holds code, but an admonition, a tab or a dropdown holds Markdown that the page shows as text: read as code, its
sentences, lists and definition lists are lost to retrieval and answers. The directives read as prose here are
MyST's and Sphinx's own body-markup directives (the names their documentation gives), not words of any
document; an unknown directive stays code. Its option lines (`:class: tip`, `:sync: win`) are markup. MyST's
colon fence (```` :::{note} ````, its `colon_fence` syntax for directives whose body is Markdown) is read the same
way.
"""

from __future__ import annotations

from mrpvm.plugins.sdk.lexicon import word_set
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import FENCE

from .segments import line_spans

# the admonitions (MyST's and reStructuredText's names, which Sphinx, MkDocs, Docusaurus and GitHub's alerts
# also give the boxes they render: html_page.py reads a box so classed as one)
ADMONITIONS = word_set(
    "note warning tip hint important caution attention danger error seealso admonition todo"
)
# the directives whose body is Markdown content (MyST's admonitions, sphinx-design's and sphinx-tabs'
# containers, Sphinx's version notes and topic-like blocks)
PROSE_DIRECTIVES = ADMONITIONS | word_set(
    "versionadded versionchanged deprecated versionremoved "
    "tab tab-item tab-set tabs group-tab dropdown card grid-item-card grid-item grid "
    "topic sidebar margin epigraph pull-quote highlights rubric div container"
)
_OPENER = lazy_pattern(r"^ {0,3}(`{3,}|~{3,}|:{3,})\{([\w-]+)\}(.*)$")
_OPTION = lazy_pattern(r"^\s*:[\w-]+:")
_ATX = lazy_pattern(r"^ {0,3}(#{1,6})[ \t]")
# the directives whose argument is the title of their body (a tab's label, an admonition's title)
TITLED = word_set("tab tab-item group-tab admonition dropdown card grid-item-card topic sidebar")


def without_directive_fences(text: str) -> str:
    """`text` with the fences of its MyST prose directives rewritten in place (the same length, the line
    breaks kept: every offset stays) so that their bodies are read as the page's text: the opening fence, its
    option lines and the closing fence blanked; a tab's or titled block's title made the heading of its body
    when nothing follows the block in its section (another block or a heading comes next: the body is a
    section of its own); a plain directive's argument kept as its first words. A fence of code (and what it
    holds) is left as it is."""
    if "{" not in text:
        return text
    lines = line_spans(text, 0, len(text))
    edits: list[tuple[int, int, str]] = []
    closers: set[int] = set()
    level = 0  # the level of the heading the lines stand under
    i = 0
    while i < len(lines):
        line = text[slice(*lines[i])]
        if (atx := _ATX.match(line)) is not None:
            level = len(atx.group(1))
        if (directive := prose_fence(text, lines, i)) is not None:
            first, close = directive
            edits.append((*lines[i], _opening(line, level, _closes_section(text, lines, close, closers))))
            edits.extend((lines[k][0], lines[k][1], "") for k in (*range(i + 1, first), close))
            closers.add(close)
            i = first
            continue
        if i not in closers and (fence := FENCE.match(line)) is not None:
            i = _code_end(text, lines, i, fence.group(1))
        i += 1
    if not edits:
        return text
    out = []
    done = 0
    # a directive nested in another's body (a tab-set's tab-items) is edited after the outer one's closing
    # fence: in line order, each line once (an inner block left unclosed ends on the outer's closing fence)
    for a, b, new in sorted({a: (a, b, new) for a, b, new in reversed(edits)}.values()):
        out.append(text[done:a] + new.ljust(b - a))
        done = b
    return "".join(out) + text[done:]


def _opening(line: str, level: int, headed: bool) -> str:
    """What the opening fence's line reads as: a titled block's heading, a plain directive's argument, or
    nothing."""
    opener = _OPENER.match(line)
    assert opener is not None
    name, argument = opener.group(2).lower(), opener.group(3).strip()
    if not argument:
        return ""
    if name in TITLED:
        return f"{'#' * min(level + 1, 6)} {argument}" if headed else ""
    return " " * opener.start(3) + opener.group(3)  # "```{note} Text": the note's first words


def _closes_section(text: str, lines: list[tuple[int, int]], close: int, outer: set[int]) -> bool:
    """After the closing fence on line `close` comes a heading, another titled block (the next tab) or the
    end; the closing fences of the blocks it stands in (`outer`: a tab set's, after its last tab item) are
    passed over."""
    for j in range(close + 1, len(lines)):
        line = text[slice(*lines[j])]
        if line.strip() and j not in outer:
            opener = _OPENER.match(line)
            titled = (
                opener is not None and opener.group(2).lower() in TITLED and bool(opener.group(3).strip())
            )
            return _ATX.match(line) is not None or (titled and prose_fence(text, lines, j) is not None)
    return True


def _code_end(text: str, lines: list[tuple[int, int]], i: int, mark: str) -> int:
    """The line closing the fence of code opened on line `i` (the last line when it is left open)."""
    close = _closing(text, lines, i + 1, mark)
    return len(lines) - 1 if close is None else close


def _closing(text: str, lines: list[tuple[int, int]], first: int, mark: str) -> int | None:
    """The first line from `first` on that closes a fence opened by `mark`: the fence characters alone, at
    least as many (an inner fence is shorter: MyST nests a directive by lengthening the outer fence)."""
    for j in range(first, len(lines)):
        line = text[slice(*lines[j])].strip()
        if line and set(line) == {mark[0]} and len(line) >= len(mark):
            return j
    return None


def prose_fence(text: str, lines: list[tuple[int, int]], i: int) -> tuple[int, int] | None:
    """For a MyST prose directive opening on line `i`: (its first body line, its closing fence's line);
    None for any other line (a code fence, a code directive, a directive left unclosed)."""
    opener = _OPENER.match(text[slice(*lines[i])])
    if opener is None or opener.group(2).lower() not in PROSE_DIRECTIVES:
        return None
    mark = opener.group(1)
    first = _options_end(text, lines, i + 1)
    close = _closing(text, lines, first, mark)
    return None if close is None else (first, close)


def _options_end(text: str, lines: list[tuple[int, int]], first: int) -> int:
    """The first line after a directive's options from line `first` on: ":class: tip" lines, or a YAML block
    between two `---` lines (MyST's other way to write them; read as text, its last line over `---` is a
    setext heading)."""
    if first < len(lines) and text[slice(*lines[first])].strip() == "---":
        for j in range(first + 1, len(lines)):
            if text[slice(*lines[j])].strip() == "---":
                return j + 1
        return first
    while first < len(lines) and _OPTION.match(text[slice(*lines[first])]):
        first += 1
    return first
