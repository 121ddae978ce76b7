"""sd-symbolic reads a man page's roff source (man(7) and BSD mdoc(7) macros) as its rendered page shows it
(issue 20 item 4): `.SH`/`.SS` are the section tree, an option's tag line (`.TP`, `.IP tag`, mdoc's `.It`) is
its unit's heading and a paragraph that goes on inside the entry is the option's, no macro or escape reaches
a unit, and the units' offsets still slice the source. Pages invented (a tool "quillsync" in both flavours);
a Markdown or plain-text page that names `.TH` keeps its reader, and malformed input neither fails nor grows.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.roff_page import read_roff
from mrpvm.plugins.sd_symbolic.source_units.roff_text import escaped, looks_like_roff
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from reader_units import atomic_units, unit_holding

MAN = r""".\" Copyright the quillsync authors
.\" Invented for a test.
.TH QUILLSYNC 1 "2031-04-02" "quillsync 3.2" "User Commands"
.ds QS quillsync
.SH NAME
quillsync \- mirror a notebook folder to a writing tablet
.SH SYNOPSIS
.B quillsync
[\fIOPTIONS\fR] \fIFOLDER\fR
.SH DESCRIPTION
.B \*(QS
copies the pages of a notebook folder to a tablet over USB and keeps
them in step.
A page edited on both sides is kept twice, the tablet's copy
renamed with a
.I .tablet
suffix.
.SH OPTIONS
.TP
.BR \-n ", " \-\-newer
Copy only pages newer than the tablet's copy.
Older pages are left as they are.
.IP
The default is to copy every page.
.TP
.BR \-w ", " \-\-wait =\fISECONDS\fP
Wait this long for the tablet to appear before giving up.

The default wait is 30 seconds.
.TP
\fB\-q\fR, \fB\-\-quiet\fR
.TQ
\fB\-s\fR
Print nothing but errors \(em not even the summary line.
.PP
Options may be given in any order\&.
.SS Exit status
.IP \(bu 2
0 when every page was copied.
.IP \(bu
4 when the tablet was not found.
.SS Tablet models
.TS
allbox tab(:);
lB lB
l l.
Model:Page size
Inkpad 2:A5
T{
Folio
.B Max
T}:A4
.TE
.SH EXAMPLES
Mirror the folder \fIdrafts\fP and wait a minute:
.PP
.RS 4
.EX
$ quillsync \-w 60 drafts
.EE
.RE
.SH SEE ALSO
.BR rsync (1),
.BR usb-devices (1)
"""

MDOC = r""".\" Invented for a test.
.Dd April 2, 2031
.Dt QUILLSYNC 1
.Os
.Sh NAME
.Nm quillsync
.Nd mirror a notebook folder to a writing tablet
.Sh SYNOPSIS
.Nm
.Op Fl nq
.Op Fl w Ar seconds
.Ar folder
.Sh DESCRIPTION
The
.Nm
utility copies the pages of a notebook folder to a tablet over USB.
The options are as follows:
.Bl -tag -width Ds
.It Fl n , Fl \-newer
Copy only pages newer than the tablet's copy.
.Pp
The default is to copy every page.
.It Fl w Ar seconds
Wait this long for the tablet to appear, see
.Xr usb-devices 1 .
.El
.Sh LIMITS
.Bl -column "Setting" "Default"
.It Sy Setting Ta Sy Default
.It Va pages Ta 500
.It Va retries	three
.El
.Sh EXIT STATUS
.Ex -std
"""

_MACRO = re.compile(r"(?m)^\s*[.'][A-Za-z]{1,3}\b|\\[fe(\[*&\-]|\\$")


# words a macro shows that its line does not write: a string's value (\\*(QS, mdoc's bare .Nm) and .Ex -std's
_GENERATED = {"quillsync", "The", "utility", "exits", "success", "and", "error", "occurs"}


def _units(text: str) -> list:
    return atomic_units(text, "quillsync.1")


_holding = unit_holding


def test_a_man_source_is_known_by_its_shape() -> None:
    assert looks_like_roff(MAN)
    assert looks_like_roff(MDOC)
    markdown = """.TH is the request that opens a man page; we explain it below.

# Writing man pages

Start with `.TH NAME 1` and then `.SH NAME`. A section is opened by `.SH`.

- `.TP` makes a tagged paragraph
- `.B` sets bold text
"""
    assert not looks_like_roff(markdown)
    tutorial = (
        "# Writing a man page\n\nStart from this skeleton:\n\n```\n"
        + MAN
        + "```\n\nThen run `man ./quillsync.1`.\n"
    )
    assert not looks_like_roff(tutorial)
    rendered = "QUILLSYNC(1)        User Commands        QUILLSYNC(1)\n\nNAME\n       quillsync - mirror\n"
    assert not looks_like_roff(rendered)
    assert not looks_like_roff("...\n... and so on.\n.5 of the budget\n")


def test_an_options_tag_line_is_its_units_heading() -> None:
    units = _units(MAN)
    newer = _holding(units, "Copy only pages newer than the tablet's copy.")
    assert newer.sectionTitle == "OPTIONS > -n, --newer"  # the citation names the option's own line
    wait = _holding(units, "Wait this long for the tablet")
    assert wait.sectionTitle == "OPTIONS > -w, --wait=SECONDS"
    quiet = _holding(units, "Print nothing but errors")
    assert quiet.sectionTitle == "OPTIONS > -q, --quiet, -s"
    assert "— not even the summary line." in (quiet.claim or "")


def test_a_default_in_its_own_paragraph_belongs_to_the_option() -> None:
    units = _units(MAN)
    newer = _holding(units, "The default is to copy every page.")
    assert newer.sectionTitle == "OPTIONS > -n, --newer"
    wait = _holding(units, "The default wait is 30 seconds.")
    assert wait.sectionTitle == "OPTIONS > -w, --wait=SECONDS"
    after = _holding(units, "Options may be given in any order.")  # .PP: back to the margin
    assert after.sectionTitle == "OPTIONS"


def test_no_macro_or_escape_in_any_unit() -> None:
    for source in (MAN, MDOC):
        for unit in build_tree(source, SourceMeta("s", "quillsync.1", "text")):
            for text in (unit.claim, unit.textBody, unit.procedure, unit.title, unit.sectionTitle):
                assert not _MACRO.search(text or ""), text


def test_sections_lists_and_code_are_read() -> None:
    units = _units(MAN)
    assert _holding(units, "copies the pages of a notebook folder").claim.startswith("quillsync copies")
    status = _holding(units, "4 when the tablet was not found.")
    assert status.sectionTitle == "OPTIONS > Exit status"
    assert status.unitType == "list"
    example = _holding(units, "$ quillsync -w 60 drafts")
    assert example.unitType == "code"
    see = _holding(units, "rsync(1), usb-devices(1)")
    assert see.sectionTitle == "SEE ALSO"


def test_a_table_is_read_as_rows_of_cells() -> None:
    units = _units(MAN)
    table = _holding(units, "Inkpad 2 | A5")
    assert table.unitType == "table"
    assert "Folio Max | A4" in (table.claim or "")
    assert table.sectionTitle == "OPTIONS > Tablet models"


def test_a_pages_own_indent_macro_and_a_term_line_over_a_block() -> None:
    page = r""".TH QUILLSYNC 1 "" ""
.de1 INDENT
. nr qs-level +1
. RS \\$1
..
.de UNINDENT
. RE
..
.SH OPTIONS
.sp
\fB\-\-mirror\fP
.INDENT 0.0
.INDENT 3.5
Mirror deletions as well.
.UNINDENT
.UNINDENT
.sp
The pages are listed as follows:
.INDENT 0.0
.sp
A page list is a text file.
.UNINDENT
"""
    units = _units(page)
    assert _holding(units, "Mirror deletions as well.").sectionTitle == "OPTIONS > --mirror"
    assert _holding(units, "A page list is a text file.").sectionTitle == "OPTIONS"  # a lead-in is no term
    assert "qs-level" not in read_roff(page).text


def test_requests_for_typesetters_and_definitions_show_nothing() -> None:
    page = read_roff(
        r""".TH X 1
.de Qq
secret macro body
..
.ie t \{\
typeset only
.\}
.el \{\
terminal text
.\}
.if !t shown when not typeset
.if t hidden when typeset
.SH A
kept
"""
    ).text
    assert "terminal text" in page and "shown when not typeset" in page and "kept" in page
    assert "secret" not in page and "typeset only" not in page and "hidden" not in page


def test_offsets_slice_the_source() -> None:
    for source in (MAN, MDOC):
        page = read_roff(source)
        units = _units(source)
        starts = [u.charStart for u in units]
        assert starts == sorted(starts)
        for unit in units:
            assert unit.charStart is not None and unit.charEnd is not None
            piece = source[unit.charStart : unit.charEnd]
            for word in re.findall(r"[A-Za-z]{3,}", unit.claim or unit.procedure or ""):
                assert word in piece or word in _GENERATED, (word, piece)
        assert page.source_span(0, 1)[0] >= 0


def test_mdoc_reads_as_a_bsd_page_shows_it() -> None:
    units = _units(MDOC)
    newer = _holding(units, "Copy only pages newer")
    assert newer.sectionTitle == "DESCRIPTION > -n, --newer"
    assert "The default is to copy every page." in (newer.claim or "")
    wait = _holding(units, "Wait this long")
    assert wait.sectionTitle == "DESCRIPTION > -w seconds"
    assert "see usb-devices(1)." in (wait.claim or "")
    page = read_roff(MDOC).text
    assert "quillsync [-nq] [-w seconds] folder" in page
    assert "quillsync — mirror a notebook folder" in page
    assert "The quillsync utility exits 0 on success" in page
    limits = _holding(units, "pages | 500")
    assert limits.unitType == "table" and "retries | three" in (limits.claim or "")


def test_a_page_of_requests_without_a_title_is_roff() -> None:
    fragment = "\n".join(
        [".SH OPTIONS", ".TP", ".B \\-a", "Copy all pages.", ".TP", ".B \\-d", "Dry run.", ".PP"]
        + [".TP", ".BR \\-v ", "Verbose.", ".SH FILES", ".I ~/.quillrc", ".SH BUGS", "None known."]
    )
    assert looks_like_roff(fragment)
    units = _units(fragment)
    assert _holding(units, "Dry run.").sectionTitle == "OPTIONS > -d"


def test_escapes_show_what_they_print() -> None:
    line = r"a\-b \(em c\[bu]d \fBbold\fP\&. \(lqq\(rq \e \*(Tm \[u00E9] \f(CWx\fR \s-1y\s0"
    shown = "".join(t for t, _, _ in escaped(line, 0, len(line), {}))
    assert shown == "a-b — c•d bold. “q” \\ ™ é x y"


def test_bad_input_neither_fails_nor_grows() -> None:
    cases = {
        "unterminated": ".TH X 1\n.SH A\ntext \\[unclosed \\*[ \\f( \\s[ \\h'never\n" * 50,
        "font at end": ".TH X 1\n.SH A\nlast word\\f",
        "one long line": ".TH X 1\n.SH A\n.BR " + "word " * 200_000 + "\n",
        "nested": ".TH X 1\n.SH A\n" + ".RS\n.TP\ntag\nbody.\n" * 20_000 + ".RE\n" * 20_000,
        "conditional": ".TH X 1\n.SH A\n.ie n \\{\\\ntext\n" * 1000 + ".el \\{\\\nother\n" * 1000,
        "junk": ".TH X 1\n.SH A\n" + "".join(chr(k % 0x2FF) for k in range(60_000)),
        "definition never closed": ".TH X 1\n.SH A\n.de XX\ntext\n" * 100,
    }
    for name, text in cases.items():
        page = read_roff(text)
        assert len(page.text) <= len(text) + 1_000, name
        assert all(0 <= s <= len(text) for s in page._starts), name
        build_tree(text, SourceMeta("s", "x.1", "text"))
    long_page = read_roff(cases["one long line"])
    assert long_page.text.count("word") == 200_000
    nested = read_roff(cases["nested"])
    assert nested.text.count("tag") == 20_000


def test_an_escape_s_text_shows_its_whole_escape() -> None:
    """A defined string's or an escape's text as long as its escape ("Quill" for `\\*(Qu`, "BSD" for mdoc's
    `.Bx`) maps each of its characters to the whole escape or macro, not letter by letter: a span inside the
    text slices the escape, never a part of it; the source's own words still show their own characters."""
    source = ".TH QUILL 1\n.ds Qu Quill\n.SH NAME\nThe \\*(Qu viewer opens the pad.\n"
    page = read_roff(source)
    assert page.text.endswith("NAME\n\nThe Quill viewer opens the pad.")
    at = page.text.index("uil")
    a, b = page.source_span(at, at + 3)
    assert source[a:b] == "\\*(Qu"
    at = page.text.index("viewer")
    a, b = page.source_span(at, at + 6)
    assert source[a:b] == "viewer"
    mdoc = ".Dd May 2, 2031\n.Dt QUILL 1\n.Sh HISTORY\nFirst on\n.Bx\nhosts.\n"
    page = read_roff(mdoc)
    at = page.text.index("SD")
    a, b = page.source_span(at, at + 2)
    assert mdoc[a:b] == ".Bx"


def test_a_list_left_open_at_a_section_ends_there() -> None:
    """A section heading ends the blocks open before it: an mdoc list never closed (`.Bl` without `.El`) and an
    item in the next section is read as text, not a crash."""
    source = ".Dd May 2, 2031\n.Dt QUILL 1\n.Sh OPTIONS\n.Bl -tag\n.It Fl n\nDry run.\n.Sh NOTES\n.It Fl q\nQuiet.\n"
    page = read_roff(source)
    assert "Dry run." in page.text and "Quiet." in page.text
