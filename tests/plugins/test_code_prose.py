"""An indented paragraph read as prose, when no prose states what is asked (issue 20: false refusals).

Plain-text protocol notes indent their field descriptions, and sd-symbolic reads an indented paragraph as a
code block: "How big can a parcel body be by default?" was refused although the paragraph saying "(default:
2**12)" was in the evidence. Such a block, when it is sentences, is read as prose where the prose leaves the
question unanswered; a default the notes never state stays refused, and a command line stays code."""

from __future__ import annotations

from answer_support import solve_question, units_of
from mrpvm.plugins.gs_symbolic.code_prose import prose_of_code, reads_as_prose
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

NOTES = """The kettle queue protocol
=========================

The kettle server keeps parcels in named pots. Each parcel body is an opaque
sequence of bytes, and a client may lease a parcel for a while.

The "drop" command inserts a parcel into the client's current pot.
It comprises a command line followed by the parcel body:

    drop <urgency> <wait> <bytes>\\r\\n
    <data>\\r\\n

 - <urgency> is an integer < 2**16. Parcels with smaller urgency values are
   leased before parcels with larger ones.

 - <wait> is an integer number of seconds to wait before the parcel can be
   leased. Maximum wait is 2**20.

 - <bytes> is an integer indicating the size of the parcel body, not including the
   trailing "\\r\\n". This value must be less than max-parcel-size (default: 2**12).

 - <data> is the parcel body -- a sequence of bytes of length <bytes> from the
   previous line.

After sending the command line and body, the client waits for a reply, which
may be:

 - "DROPPED <id>\\r\\n" to indicate success.

 - "TOO_BIG\\r\\n" The client has requested to drop a parcel with a body larger
   than max-parcel-size bytes.
"""


def _ask(question: str) -> tuple[str, str]:
    doc = solve_question(question, units_of(NOTES, "protocol.txt"))
    return doc.result.status, doc.answer or ""


def test_the_indented_paragraph_states_the_default() -> None:
    status, answer = _ask("How big can a parcel body be by default?")
    assert "(default: 2**12)" in answer, (status, answer)


def test_a_default_never_stated_is_refused() -> None:
    assert _ask("How long is a parcel leased by default?")[1] == NO_CONTEXT_ANSWER
    assert _ask("How many pots does a server keep by default?")[1] == NO_CONTEXT_ANSWER


def test_what_reads_as_prose() -> None:
    assert reads_as_prose("<wait> is an integer number of seconds to wait before the parcel can be leased.")
    assert not reads_as_prose("drop <urgency> <wait> <bytes>\\r\\n <data>\\r\\n")  # a command line
    assert not reads_as_prose("x = compute(a, b)\\nreturn x.value if x else None")  # code, no sentence end
    assert not reads_as_prose("")
    assert prose_of_code([]) == []
