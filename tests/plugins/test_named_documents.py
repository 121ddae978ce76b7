"""A question that names one of several documents ("the -z option of frob") is answered from that document:
its file name is the title of a document that has no other (issue 20: "What does the -x option of tar do?"
was answered from curl's manual). With one document, the name changes nothing."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sdk.answer_types import expected_type
from mrpvm.plugins.sdk.embedding import available

FROB = """FROB(1)                      General Commands Manual                     FROB(1)

NAME
       frob - pack files into a bundle

OPTIONS
       -c, --create
              Create a new bundle.

       -z, --squeeze
              Filter the bundle through squeeze(1).

       -v, --verbose
              List the files processed. Use -z when the bundle is large.
"""

SPOOL = """SPOOL(1)                     General Commands Manual                    SPOOL(1)

NAME
       spool - print queued jobs

OPTIONS
       -z, --zero
              Terminate each listed job name with a NUL byte instead of a newline.
              Without the -z option, job names with unusual characters are quoted.

       -q, --quiet
              Print nothing but errors.
"""

KILN = """KILN(1)                      General Commands Manual                     KILN(1)

NAME
       kiln - fire clay models

OPTIONS
       -t, --temperature=DEGREES
              Set the firing temperature. The -z option of other tools does not apply here.
"""


def _collection() -> list:
    return (
        units_of(FROB, "frob.txt", "frob-1")
        + units_of(SPOOL, "spool.txt", "spool-1")
        + units_of(KILN, "kiln.txt", "kiln-1")
    )


def test_an_option_written_out_is_asked_about_not_asked_for() -> None:
    assert expected_type("What does the -z option of frob do?") == "definition"
    assert expected_type("What does the --squeeze flag do?") == "definition"
    assert expected_type("Which option makes frob list the files?") == "option"


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_the_named_document_answers_and_its_entry_lead_is_a_success() -> None:
    doc = ask("What does the -z option of frob do?", _collection())
    assert "Filter the bundle through squeeze(1)." in doc.answer
    assert "NUL byte" not in doc.answer and "does not apply" not in doc.answer
    assert doc.result.status == "success"
    assert doc.sources and all(s.startswith("frob-1::") for s in doc.sources)


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_the_other_document_is_answered_when_it_is_named() -> None:
    doc = ask("What does the -z option of spool do?", _collection())
    assert "Terminate each listed job name with a NUL byte" in doc.answer
    assert "squeeze" not in doc.answer
