"""Asked for advice in the passive ("Should the tracker be used for support questions?"), a command of the
documents answers: "Please, don't use the tracker for this." is No (gs_symbolic propositions.asks_advice; issue
20, polarity). A command is still no statement of what a thing does ("Does the tracker …?")."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.propositions import asks_advice
from mrpvm.plugins.sdk.embedding import available

GUIDE = """Contributing to Kiln
====================

Thanks for helping with Kiln.

Support questions
=================

Please, don't use the bug tracker for this. Ask on the ``#kiln`` chat channel instead, where
maintainers answer most days.

Reporting bugs
==============

Include the version of Kiln and the shelf layout you used.
"""


def test_a_passive_question_with_a_modal_asks_for_advice():
    assert asks_advice("Should the bug tracker be used for support questions")
    assert asks_advice("Must patches be signed off")
    assert not asks_advice("Does the bug tracker answer support questions")
    assert not asks_advice("Should I use the bug tracker")  # active: the reader is its subject already


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_a_command_not_to_use_it_answers_no():
    doc = ask("Should the bug tracker be used for support questions?", units_of(GUIDE, "CONTRIBUTING.rst"))
    assert doc.answer.startswith("No.")
    assert "don't use the bug tracker" in doc.answer
