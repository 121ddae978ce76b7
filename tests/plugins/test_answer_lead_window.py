"""A paragraph's last sentence that leads into a code block stands in the block's unit (sd-symbolic); a
passage may still read it after the sentences of its paragraph (gs_symbolic passages.windows; issue 20)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.evidence import Sentence
from mrpvm.plugins.gs_symbolic.windows import windows
from mrpvm.plugins.sdk.embedding import available
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.document import KnowledgeUnit

NOTES = """Kiln plugins
============

Saving the list
---------------

Plugins are added one by one with ``kiln add``.

``kiln freeze`` prints every installed plugin with its version,
in the format that ``kiln add`` reads back.
A common habit is to keep this list in a ``plugins.lock`` file:

.. code-block:: bash

  $ kiln freeze > plugins.lock
  $ cat plugins.lock
  glaze==1.2.0

The lock file can then be committed with the rest of the project.
"""


def _sentence(text: str, index: int, chunk_type: str, code: bool = False, gap: int = 1) -> Sentence:
    unit = KnowledgeUnit(
        id=f"u{index}",
        sourceId="s",
        chunkId="c",
        kuType="atomic",
        role="Description",
        topic="t",
        unitIndex=index,
        chunkType=chunk_type,
        charStart=index * 100 + (gap if index else 0),
        charEnd=index * 100 + 100 if index == 0 else index * 100 + 150,
    )
    return Sentence(text, unit, terms(text), (0, index, 0), code=code)


def test_a_window_reaches_the_lead_in_of_the_next_code_unit_only():
    prose = _sentence("kiln freeze prints the list.", 0, "paragraph")
    lead = _sentence("Keep this list in a plugins.lock file:", 1, "code")
    block = _sentence("$ kiln freeze > plugins.lock", 1, "code", code=True)
    spanning = [w for w in windows([prose, lead, block]) if len({s.unit.id for s in w}) > 1]
    assert spanning == [[prose, lead]]
    apart = _sentence("Keep this list in a plugins.lock file:", 1, "code", gap=2)  # its own paragraph
    assert all(len({s.unit.id for s in w}) == 1 for w in windows([prose, apart, block]))
    told = _sentence("It prints the list.", 1, "code")  # no colon: it leads into nothing
    assert all(len({s.unit.id for s in w}) == 1 for w in windows([prose, told, block]))


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_the_sentence_that_finishes_a_paragraph_answers_though_it_leads_into_a_block():
    doc = ask("In which file is the output of kiln freeze usually kept?", units_of(NOTES, "plugins.rst"))
    assert "plugins.lock" in doc.answer
    assert doc.result.status == "success"  # the lead-in alone does not say what "this list" is: weak
