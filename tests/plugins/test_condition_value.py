"""A condition's polarity includes a setting's negative value (gs_symbolic directives.stated_condition), and
"What happens when X is false?" sets a condition the answer must share (solver._CONDITIONED; issue 20)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.directives import stated_condition
from mrpvm.plugins.sdk.embedding import available

OPTIONS = """Glaze options
=============

.. attribute:: keep_drips

   (default: ``True``) If true, drips on the shelf are kept as they fell and fired with the piece.
   If false, drips are ground away before firing, but you need to set :attr:`polish` to false if you
   want a rough foot.

.. attribute:: polish

   (default: ``True``) Feet are polished after the firing, unless :attr:`keep_drips` is false.
"""


def test_a_negative_value_negates_a_condition_and_unless_negates_it_again():
    assert stated_condition("If false, drips are ground away.") is True
    assert stated_condition("If true, drips are kept.") is False
    assert stated_condition("when keep_drips is disabled") is True
    assert stated_condition("Feet are polished, unless keep_drips is false.") is False  # = if true
    assert stated_condition("No condition here.") is None


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_what_happens_when_a_setting_is_false_is_answered_by_the_false_case():
    doc = ask("What happens when keep_drips is false?", units_of(OPTIONS, "glaze.rst"))
    assert "ground away" in doc.answer


def test_what_happens_when_sets_a_condition():
    from mrpvm.plugins.gs_symbolic.solver import _CONDITIONED

    assert _CONDITIONED.match("What happens when keep_drips is false?")
    assert _CONDITIONED.match("If I don't pass -f, where does it go?")
    assert not _CONDITIONED.match("What happens to drips after firing?")
