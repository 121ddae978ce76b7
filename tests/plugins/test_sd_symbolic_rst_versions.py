"""Sphinx's version directives read as the sentence Sphinx renders for them (".. versionadded:: 3.4" ->
"Added in version 3.4."), so a question about when something was added finds it in its own words."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sd_symbolic.source_units.pieces import rendered
from mrpvm.plugins.sdk.embedding import available

REFERENCE = """Frobnication
============

.. function:: frobnicate(items, depth=2)

   Frobnicate every item of *items*, down to *depth* levels.

   .. versionadded:: 2.1

.. function:: defrob(items)

   Undo what :func:`frobnicate` did to *items*.

   .. versionchanged:: 2.4
      Accepts a generator.

   .. deprecated:: 3.0
"""


def test_version_directives_read_as_their_sentences():
    assert rendered(".. versionadded:: 2.1") == "Added in version 2.1."
    assert rendered("down to depth levels. .. versionchanged:: 2.4 Accepts a generator.") == (
        "down to depth levels. Changed in version 2.4. Accepts a generator."
    )
    assert rendered(".. deprecated:: 3.0") == "Deprecated since version 3.0."
    assert rendered("See the notes ... below.") == "See the notes ... below."
    claims = " ".join(u.claim or "" for u in units_of(REFERENCE, "frob.rst") if u.kuType == "atomic")
    assert "Added in version 2.1." in claims
    assert "Deprecated since version 3.0." in claims
    assert ".. version" not in claims


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_when_a_function_was_added_is_answered_from_its_directive():
    doc = ask("In which version was frobnicate added?", units_of(REFERENCE, "frob.rst"))
    assert "2.1" in doc.answer
    assert "2.4" not in doc.answer
