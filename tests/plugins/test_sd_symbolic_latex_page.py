"""sd-symbolic reads a LaTeX source as the text its typeset page shows (issue 20 item 4): the preamble is
dropped, sectioning commands are the section tree, a section's paragraphs are prose (not code), itemize and
enumerate items are list items, a description item's term is its definition's title, verbatim environments
are code, footnotes are notes of their own, commands and comments are no text; the units' offsets still slice
the source. Documents invented; a Markdown page with a LaTeX snippet keeps its reader, and malformed or
adversarial LaTeX neither fails nor reads another file.
"""

from __future__ import annotations

import json
import re

from cli_support import cli_env, mrpvm
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.latex_page import read_latex
from mrpvm.plugins.sd_symbolic.source_units.latex_shape import looks_like_latex
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from reader_units import atomic_units, unit_holding

THESIS = r"""% Thesis of the Corran Ferry survey -- draft 3
\documentclass[11pt]{report}
\usepackage{hyperref}
\usepackage{listings}
\newcommand{\gauge}{Tidewright\xspace}
\title{Tides at Corran Ferry}
\author{M. Oduya}
\begin{document}
\maketitle

\chapter{Measuring the Tide}
\label{ch:measuring}

The ferry slip at Corran is surveyed twice a year.\footnote{The spring survey
was moved to May after the slipway flooded in 2019.} Each survey takes three
days and needs a boat, a level and the \gauge\ logger~\cite{oduya2021}.

\section{The Gauge}

The \textbf{tide gauge} is bolted to the north pier, 40~cm above the
\emph{lowest astronomical tide}. It reports every six minutes % not every five
and keeps 95\% of its readings when the pier is iced.

\subsection{Calibration}

\subsubsection{Zero Checks}

A zero check compares the gauge with a staff read by eye. It is done at
slack water, when the surface is calmest, and written to
\texttt{zero.log}; see Section~\ref{sec:logs} and
\href{https://example.org/staff}{the staff manual}.

\begin{itemize}
  \item Clean the stilling well with the long brush.
  \item Read the staff three times and average the readings.
  \item Record the mean as $z_0 = \bar{s} - g$ in centimetres.
\end{itemize}

\begin{enumerate}
\item Unlock the housing.
\item Swap the desiccant bag.
\end{enumerate}

\begin{description}
  \item[Slack water] The short time between flood and ebb when the current
  stops.
  \item[\textit{Stilling well}] A pipe that damps the waves around the float.
\end{description}

\subsection{Logs}
\label{sec:logs}

The logger writes one line per reading, for example:

\begin{verbatim}
2023-04-02T06:12 1.84 OK
2023-04-02T06:18 1.91 OK
\end{verbatim}

\begin{lstlisting}[language=Python, caption={Reading a log}]
for line in open("zero.log"):
    print(line.split()[1])
\end{lstlisting}

Use \verb|tail -f zero.log| to watch the readings arrive.

\begin{table}[h]
\begin{tabular}{|l|r|r|}
\hline
Pier & Range (m) & \textbf{Readings} \\ \hline
North & 4.2 & 240 \\
South & \multicolumn{2}{c}{not surveyed} \\
\hline
\end{tabular}
\caption{Tidal range by pier.}
\end{table}

\begin{tikzpicture}
  \draw (0,0) -- (1,1);
\end{tikzpicture}

\begin{remark}[Ice]
In hard winters the float freezes and the gauge reports a flat line.
\end{remark}

\end{document}
"""


def _units(text: str) -> list:
    return atomic_units(text, "thesis")


_holding = unit_holding


def _texts(unit) -> list[str]:
    return [t for t in (unit.claim, unit.textBody, unit.procedure, unit.title) if t]


def test_a_document_and_a_chapter_file_look_like_latex() -> None:
    assert looks_like_latex(THESIS)
    chapter = "\\section{Piers}\nThe north pier.\n\n\\subsection{Rails}\nRails.\n\\begin{itemize}\n\\item A\n\\end{itemize}\n"
    assert looks_like_latex(chapter)


def test_markdown_with_latex_in_it_keeps_its_reader() -> None:
    markdown = """# Tide notes

The mean is computed as

$$
\\begin{aligned}
z_0 &= \\bar{s} - g \\\\
\\end{aligned}
$$

\\begin{equation}
h = a \\cos(\\omega t)
\\end{equation}

A thesis starts like this:

```latex
\\documentclass{report}
\\begin{document}
\\section{Intro}
\\end{document}
```
"""
    assert not looks_like_latex(markdown)
    rst = "Tides\n=====\n\n.. math::\n\n   \\begin{align}\n   h &= a \\\\\n   \\end{align}\n\n"
    assert not looks_like_latex(rst + "\\section{Piers}\n\\begin{itemize}\n\\item x\n\\end{itemize}\n")
    assert not looks_like_latex("Use \\n for a new line and \\t for a tab.\n")
    # a plain note that mentions one environment is no LaTeX document
    assert not looks_like_latex("Wrap it in \\begin{center} and \\end{center}.\n\\section{A}\n")


def test_a_section_s_paragraphs_are_prose_not_code() -> None:
    units = _units(THESIS)
    zero = _holding(units, "A zero check compares the gauge with a staff read by eye.")
    assert zero.chunkType != "code" and zero.unitType != "code"
    assert zero.sectionTitle == "Measuring the Tide > The Gauge > Calibration > Zero Checks"
    assert "written to zero.log; see Section and the staff manual." in (zero.claim or zero.textBody or "")


def test_the_preamble_and_comments_are_dropped_and_commands_show_what_a_reader_sees() -> None:
    units = build_tree(THESIS, SourceMeta("s", "thesis", "text"))
    everything = " ".join(t for u in units for t in _texts(u))
    for hidden in (
        "hyperref",
        "Oduya",
        "draft 3",
        "not every five",
        "oduya2021",
        "ch:measuring",
        "example.org",
    ):
        assert hidden not in everything, hidden
    gauge = _holding(
        units, "The tide gauge is bolted to the north pier, 40 cm above the lowest astronomical tide."
    )
    assert "keeps 95% of its readings" in (gauge.claim or gauge.textBody or "")
    assert _holding(
        units, "a level and the Tidewright logger."
    )  # a defined macro shows its text; a citation nothing
    for unit in units:
        if unit.chunkType == "code":
            continue
        for text in _texts(unit):
            # no command in any unit's text but the math written as its source
            assert not re.search(r"\\[A-Za-z]+", re.sub(r"\$[^$]*\$", "", text)), text


def test_lists_definitions_tables_and_code() -> None:
    units = _units(THESIS)
    steps = _holding(units, "Read the staff three times and average the readings.")
    text = steps.procedure or steps.claim or steps.textBody or ""
    assert "Clean the stilling well with the long brush.\n" in text
    assert "$z_0 = \\bar{s} - g$" in text  # math as its source
    numbered = _holding(units, "Swap the desiccant bag.")
    assert "2. Swap the desiccant bag." in (numbered.procedure or numbered.claim or "")
    slack = _holding(units, "The short time between flood and ebb when the current stops.")
    assert slack.title == "Slack water" and slack.unitType == "definition"
    well = _holding(units, "A pipe that damps the waves around the float.")
    assert well.title == "Stilling well"
    log = _holding(units, "2023-04-02T06:12 1.84 OK\n2023-04-02T06:18 1.91 OK")
    assert log.chunkType == "code"
    listing = _holding(units, 'for line in open("zero.log"):\n    print(line.split()[1])')
    assert listing.chunkType == "code" and "language=Python" not in (listing.procedure or listing.claim or "")
    assert _holding(units, "Use tail -f zero.log to watch the readings arrive.")
    assert _holding(units, "In hard winters the float freezes")  # an unknown environment's body is prose
    row = _holding(units, "| North | 4.2 | 240 |")
    assert row.chunkType == "table" and "\\hline" not in (row.claim or "")
    assert _holding(units, "Tidal range by pier.")


def test_a_footnote_is_a_note_of_its_own() -> None:
    units = _units(THESIS)
    note = _holding(units, "The spring survey was moved to May after the slipway flooded in 2019.")
    assert "surveyed twice a year" not in (note.claim or "")
    survey = _holding(units, "The ferry slip at Corran is surveyed twice a year.")
    assert "spring survey" not in (survey.claim or "")
    assert note.sectionTitle == survey.sectionTitle == "Measuring the Tide"


def test_offsets_slice_the_source() -> None:
    units = _units(THESIS)
    for unit in units:
        assert unit.charStart is not None and unit.charEnd is not None
        piece = THESIS[unit.charStart : unit.charEnd]
        for word in re.findall(r"[A-Za-z]{4,}", unit.claim or ""):
            assert word in piece or word == "Tidewright", (word, piece)
    note = _holding(units, "spring survey")
    assert THESIS[note.charStart : note.charEnd].startswith("The spring survey")
    zero = _holding(units, "A zero check compares")
    assert THESIS[zero.charStart : zero.charEnd].startswith("A zero check compares")
    starts = [u.charStart or 0 for u in units]
    assert starts == sorted(starts)
    meta = SourceMeta("s", "thesis", "text", chunk_base=3, char_offset=5000)
    assert all(
        5000 <= (u.charStart or 0) <= (u.charEnd or 0) <= 5000 + len(THESIS) for u in build_tree(THESIS, meta)
    )


def test_malformed_latex_reads_in_one_pass_and_reads_no_other_file() -> None:
    head = "\\documentclass{article}\n\\begin{document}\n\\section{Piers}\n"
    assert read_latex(head + "{" * 1_000_000).text == "Piers"
    assert read_latex(head + "}" * 200_000 + " Quay.").text == "Piers\n\nQuay."
    page = read_latex(head + "\\begin{quote} Open. " * 20_000)
    assert page.text.startswith("Piers\n\nOpen.") and len(page.blocks) == 20_001
    page = read_latex(head + "Use \\verb|tail -f and more\n\nNext \\verb+x+ line.")
    assert page.text == "Piers\n\nUse tail -f and more\n\nNext x line."
    page = read_latex(head + "\\footnote{never closed\n\nText after.")
    assert page.text == "Piers\n\nnever closed\n\nText after."
    page = read_latex(head + "\\input{/etc/hostname}\\include{chapter2} Done.\n\\begin{verbatim}\nkept")
    assert page.text == "Piers\n\nDone.\n\nkept"
    page = read_latex(head + "\\catcode`\\|=13 \\def|{bar}|x| and \\makeatletter\\@gobble{y} \\\\ z")
    assert "\\" not in page.text and "Piers" in page.text
    assert read_latex(head + "\\begin{description}\n" + "\\item[a " * 50_000).blocks


def test_a_question_is_answered_from_a_footnote_and_from_an_item(tmp_path) -> None:
    source = tmp_path / "thesis.tex"
    source.write_text(THESIS)
    env = cli_env(tmp_path / "home")
    noted = mrpvm(
        env, "ask", "--source", str(source), "When was the spring survey moved to May?", "--json", timeout=300
    )
    assert noted.returncode == 0, noted.stderr.decode()
    answer = json.loads(noted.stdout)["response_document"]["groups"][0]["answerMarkdown"]
    assert "2019" in answer and "\\footnote" not in answer, answer
    item = mrpvm(
        env, "ask", "--source", str(source), "How many times is the staff read?", "--json", timeout=300
    )
    assert item.returncode == 0, item.stderr.decode()
    answer = json.loads(item.stdout)["response_document"]["groups"][0]["answerMarkdown"]
    assert "three times" in answer and "\\item" not in answer, answer


def test_a_declared_short_verb_is_verbatim_text() -> None:
    source = (
        "\\documentclass{article}\n\\usepackage{shortvrb}\n\\MakeShortVerb{\\|}\n\\begin{document}\n"
        "\\section{Winch}\nRun |\\winch{3} % slow| before $t_0$; a bar |never closed\nNext line.\n\\end{document}\n"
    )
    assert (
        read_latex(source).text
        == "Winch\n\nRun \\winch{3} % slow before $t_0$; a bar never closed Next line."
    )
    # undeclared, a bar is a bar and the % opens a comment
    assert read_latex(source.replace("\\MakeShortVerb{\\|}\n", "")).text.startswith(
        "Winch\n\nRun |3 Next line."
    )


def test_a_macro_s_text_shows_its_whole_command() -> None:
    """A defined macro's text as long as its command ("Quill" for `\\tool`) maps each of its characters to the
    whole command, not letter by letter: a span inside the text slices the command, never a part of it."""
    source = (
        "\\documentclass{article}\n\\newcommand{\\tool}{Quill}\n\\begin{document}\n\\section{Setup}\n"
        "The \\tool viewer opens \\'{e}tats and logs.\n\\end{document}\n"
    )
    page = read_latex(source)
    assert page.text == "Setup\n\nThe Quill viewer opens états and logs."
    at = page.text.index("uill")
    a, b = page.source_span(at, at + 3)
    assert source[a:b] == "\\tool"
    at = page.text.index("é")
    a, b = page.source_span(at, at + 1)
    assert source[a:b] == "\\'{e}"
    a, b = page.source_span(page.text.index("viewer"), page.text.index("viewer") + 6)
    assert source[a:b] == "viewer"  # the source's own words still show their own characters


class _CountedSource(str):
    """A source that counts the characters its searches for a string cover (str.find)."""

    searched = 0

    def find(self, sub: str, start: int | None = None, end: int | None = None, /) -> int:  # type: ignore[override]
        a = 0 if start is None else start
        b = len(self) if end is None else min(end, len(self))
        _CountedSource.searched += max(0, b - a)
        return super().find(sub, start, end)


def test_unclosed_inline_math_is_searched_once() -> None:
    """`\\(` or `\\[` with no closer: each used to search to the body's end again (quadratic); a span searched
    in vain is not searched again, and what each shows is unchanged."""
    head = "\\documentclass{article}\n\\begin{document}\n\\section{Piers}\n"
    for opener in ("\\( x ", "\\[ y "):
        source = _CountedSource(head + opener * 5_000 + "tail")
        _CountedSource.searched = 0
        page = read_latex(source)
        assert _CountedSource.searched < 20 * len(source)
        assert page.text.startswith("Piers\n\nx x x" if "(" in opener else "Piers\n\ny y y")
    closed = read_latex(head + "Say \\(a+b\\) and \\[c\\] then \\( open.")
    assert closed.text == "Piers\n\nSay \\(a+b\\) and \\[c\\] then open."
