"""A printf-style conversion is a term, and a run of labelled entries is read entry by entry (issue 20).

"What does the %e placeholder show?" was refused over an AsciiDoc labelled list ("`%e`:: Elapsed time in
seconds."): the analyser dropped "e" as a single character, so "%e" matched nothing, and sd-symbolic joins the
list's lines into one paragraph, which gs-symbolic read as one long sentence. A conversion ("%e", "%X",
"%6.2f") is now one term, case kept, as a short option is; a percentage is none. A paragraph of labelled
entries ("term:: text") is read as its entries. A conversion the list never writes stays refused."""

from __future__ import annotations

from answer_support import solve_question, units_of
from mrpvm.plugins.gs_symbolic.unit_pieces import labelled_entries
from mrpvm.protocol.analysis import terms, text_terms
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

MANUAL = """The stamp log daemon
====================

Line format
-----------

The `STAMP_FORMAT` variable sets the prefix of every log line. These conversions are available:

`%h`:: The host name of the stamp server.
`%q`:: The length of the upload queue, in jobs.
`%w`:: The wait before the next upload in milliseconds
`%W`:: The wait before the next upload in [h:]mm:ss form.
`%%`:: A plain `%` character.

The default prefix is `"[%h] "`.
"""


def _ask(question: str) -> str:
    return solve_question(question, units_of(MANUAL, "stamp.txt")).answer or ""


def test_a_conversion_is_one_term_with_its_case() -> None:
    assert terms("What does %q print?") == ["%q", "print"]
    assert terms("%w and %W differ") == ["%w", "%W", "differ"]
    assert terms("use %6.2f or %-5d") == ["use", "%6.2f", "%-5d"]
    assert text_terms("`%q`:: The length") == ["%q", "length"]
    assert terms("50% done, 100%d") == ["50", "done", "100"]  # a percentage opens no conversion


def test_labelled_entries_are_read_one_by_one() -> None:
    joined = "These are available: `%h`:: The host name. `%q`:: The queue length per second `%w`:: The wait."
    assert labelled_entries(joined) == [
        "These are available:",
        "`%h`:: The host name.",
        "`%q`:: The queue length per second",
        "`%w`:: The wait.",
    ]
    assert labelled_entries("Text::Wrap wraps text; std::vector grows.") == []
    # a table of conversions flattened into one paragraph: one entry per conversion opening it
    flat = '%h the host name %q the queue length %w the wait; same as "%4d"'
    assert labelled_entries(flat) == ["%h the host name", "%q the queue length", '%w the wait; same as "%4d"']
    assert labelled_entries("%h and %q are common in prefixes") == []


def test_the_asked_conversion_is_answered_by_its_entry() -> None:
    answer = _ask("What does the %q conversion show?")
    assert "upload queue" in answer and "host name" not in answer, answer
    assert "[h:]mm:ss" in _ask("What does %W show?")


def test_a_conversion_the_list_never_writes_stays_refused() -> None:
    assert _ask("What does the %z conversion show?") == NO_CONTEXT_ANSWER
