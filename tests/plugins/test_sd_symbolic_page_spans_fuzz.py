"""Every marked-up source reader (HTML, LaTeX, roff, YAML) maps each character of its page text back into the
source, whatever the input: seeded random token soups (invented; deterministic) check that each character's
source span lies inside the source, that a letter or digit shown for a single source character is that
character or part of a piece shown for that character as a whole (text an escape, entity or macro stands for
shows its whole escape, never one of its letters), and
that the units built from the source have offsets inside it."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.html_page import read_page
from mrpvm.plugins.sd_symbolic.source_units.latex_page import read_latex
from mrpvm.plugins.sd_symbolic.source_units.page_text import Page
from mrpvm.plugins.sd_symbolic.source_units.roff_page import read_roff
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.plugins.sd_symbolic.source_units.yaml_tree import read_yaml

ROUNDS = 40  # inputs per reader
_WORDS = ("Quill", "pad", "ink", "Tidewright", "écrit", "x", "42", "v2.1", "a-b", "Ok")

_HTML = (
    *("<p>", "</p>", "<h2>", "</h2>", "<ul>", "<li>", "</ul>", "<ol>", "<dl>", "<dt>", "<dd>", "</dl>"),
    *("<table>", "<tr>", "<td>", "</td>", "<th>", "</table>", "<pre>", "</pre>", "<br>", "<b>", "</b>"),
    *("<details>", "<summary>", "</summary>", "</details>", "<div class='note'>", "</div>", "<title>"),
    *("</title>", "<script>", "</script>", "&amp;", "&lt;", "&#65;", "&eacute;", "&nope", "\n", "  ", "\t"),
)
_LATEX = (
    *(
        "\\section{",
        "\\subsection*{",
        "}",
        "{",
        "\\begin{itemize}",
        "\\item ",
        "\\end{itemize}",
        "\\item[",
        "]",
    ),
    *("\\begin{description}", "\\end{description}", "\\begin{tabular}{ll}", "&", "\\\\", "\\end{tabular}"),
    *("\\begin{verbatim}", "\\end{verbatim}", "\\verb|", "|", "\\textbf{", "\\emph{", "\\'{e}", "\\ldots"),
    *("\\tool", "\\tool{}", "\\(", "\\)", "$", "%", "~", "--", "``", "''", "\\footnote{", "\\label{a}"),
    *("\\url{", "\\LaTeX", "\n\n", "\n", " "),
)
_ROFF_LINES = (
    *(".SH", ".SS", ".PP", ".TP", ".IP", ".IP \\(bu", ".RS", ".RE", ".nf", ".fi", ".EX", ".EE", ".br"),
    *(".B", ".BR", ".I", ".IR", ".sp", ".ds Qu Quill", ".ds ab a b", ".TS", "l l.", ".TE", ".Bl -tag"),
    *(".It", ".It Fl", ".El", ".Bl -bullet", ".Bd -literal", ".Ed", ".Nm", ".Bx", ".Ux", ".Fl", ".Xr", ".Dl"),
    *(".Ar", ".Op", ".Pq", ".In", ".Fn", ".Ex -std", ""),
)
_ROFF_INLINE = (
    *("\\*(Qu", "\\*(ab", "\\*[Qu]", "\\(em", "\\[bu]", "\\-", "\\fB", "\\fR", "\\fI", "\\e", "\\&", "\\c"),
    *("\\(lq", "\\(rq", "\\[u00E9]", "\\N'65'", "\\s-1", "\\s0", "\\~", '""', '"', "\t", " ", "Ta"),
)


def _html(rng: random.Random) -> str:
    return "".join(
        rng.choice(_HTML if rng.random() < 0.5 else _WORDS) + rng.choice(("", " ")) for _ in range(80)
    )


def _latex(rng: random.Random) -> str:
    body = "".join(
        rng.choice(_LATEX if rng.random() < 0.5 else _WORDS) + rng.choice(("", " ")) for _ in range(80)
    )
    return (
        "\\documentclass{article}\n\\newcommand{\\tool}{Quill}\n\\begin{document}\n"
        + body
        + "\n\\end{document}\n"
    )


def _roff(rng: random.Random) -> str:
    lines = [".TH QUILL 1", ".SH NAME"]
    for _ in range(40):
        head = rng.choice(_ROFF_LINES)
        words = [rng.choice(_ROFF_INLINE if rng.random() < 0.4 else _WORDS) for _ in range(rng.randrange(4))]
        glue = rng.choice(("", " "))
        lines.append((head + " " if head else "") + glue.join(words))
    return "\n".join(lines) + "\n"


def _yaml_value(rng: random.Random, depth: int, indent: int, anchors: list[str]) -> str:
    pad = " " * indent
    roll = rng.random()
    if depth >= 3 or roll < 0.35:
        scalar = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(1, 4)))
        if anchors and rng.random() < 0.15:
            return " *" + rng.choice(anchors)
        return " " + rng.choice((scalar, f'"{scalar}"', f"'{scalar}'", "42", "true", "~"))
    if roll < 0.45:
        return " |\n" + "\n".join(
            pad + "  " + rng.choice(_WORDS) + " line" for _ in range(rng.randrange(1, 3))
        )
    anchor = ""
    if rng.random() < 0.2:
        anchor = f" &a{len(anchors)}"
        anchors.append(f"a{len(anchors)}")
    lines = []
    if roll < 0.7:
        for _ in range(rng.randrange(1, 4)):
            lines.append(pad + "  -" + _yaml_value(rng, depth + 1, indent + 4, anchors))
        return anchor + "\n" + "\n".join(lines)
    keys = rng.sample(("name", "port", "mode", "ink colour", "pad", "x", "Quill"), rng.randrange(1, 4))
    for key in keys:
        lines.append(pad + "  " + key + ":" + _yaml_value(rng, depth + 1, indent + 2, anchors))
    return anchor + "\n" + "\n".join(lines)


def _yaml(rng: random.Random) -> str:
    anchors: list[str] = []
    keys = rng.sample(("service", "options", "limits", "paths", "Notes", "defaults"), 3)
    text = "# an invented configuration\n" + "\n".join(
        k + ":" + _yaml_value(rng, 0, 0, anchors) for k in keys
    )
    return text + "\n"


def _same_span(page: Page, i: int, a: int, b: int) -> bool:
    return 0 <= i < len(page.text) and page._starts[i] == a and page._ends[i] == b


def _check_page(source: str, page: Page) -> None:
    n = len(source)
    assert len(page._starts) == len(page._ends) == len(page.text)
    for i, ch in enumerate(page.text):
        a, b = page._starts[i], page._ends[i]
        assert 0 <= a <= b <= n, (i, ch, a, b)
        if b - a == 1 and ch.isalnum() and source[a] != ch:  # text the one character stands for (a label
            # shown at a one-letter key): a piece mapped whole, its neighbour on the same span
            assert _same_span(page, i - 1, a, b) or _same_span(page, i + 1, a, b), (
                i,
                ch,
                source[a - 5 : b + 5],
            )
    if page.text:
        a, b = page.source_span(0, len(page.text))
        assert 0 <= a <= b <= n


READERS: dict[str, tuple[Callable[[random.Random], str], Callable[[str], Page | None], str]] = {
    "html": (_html, read_page, "page.html"),
    "latex": (_latex, read_latex, "paper.tex"),
    "roff": (_roff, read_roff, "quill.1"),
    "yaml": (_yaml, read_yaml, "quill.yaml"),
}


@pytest.mark.parametrize("kind", sorted(READERS))
def test_every_shown_character_maps_inside_its_source(kind: str) -> None:
    make, read, name = READERS[kind]
    rng = random.Random(f"page-spans-{kind}")
    read_any = 0
    for _ in range(ROUNDS):
        source = make(rng)
        page = read(source)
        if page is None:  # a YAML soup that does not parse: another reader's
            continue
        read_any += 1
        _check_page(source, page)
        for unit in build_tree(source, SourceMeta("s", name, "text")):
            if unit.charStart is not None and unit.charEnd is not None:
                assert 0 <= unit.charStart <= unit.charEnd <= len(source), (unit.charStart, unit.charEnd)
    assert read_any >= ROUNDS // 2
