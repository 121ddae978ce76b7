"""A question asking for a text verbatim ("What exact line …") is `success` only when the answer quotes a
literal (code, a quoted string, a path, an option); a sentence describing the text is weak (issue 20,
deliverable 2: an honest status)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.sdk.answer_shapes import quotes_literal
from mrpvm.plugins.sdk.answer_types import asks_literal
from mrpvm.plugins.sdk.embedding import available

DESCRIBED = """# Writing Quill recipes

## Headers

Every Quill recipe file should start with a header line that names the recipe format, so that older
Quill readers can refuse the recipe file instead of misreading it.
"""

QUOTED = """# Writing Quill recipes

## Headers

Every Quill recipe file should start with the header line `%quill-recipe 2`, so that older Quill readers
can refuse the recipe file instead of misreading it.
"""

QUESTION = "What exact header line should a Quill recipe file start with?"


def test_the_question_shape_and_the_literal_shapes():
    assert asks_literal(QUESTION) and asks_literal("Which precise value does it take?")
    assert not asks_literal("What header line should a Quill recipe file start with?")
    assert quotes_literal("start with `%quill-recipe 2`") and quotes_literal('set it to "on"')
    assert quotes_literal("install it under /usr/share/quill") and quotes_literal("pass --strict")
    assert quotes_literal("begin with #!/bin/sh")
    assert not quotes_literal("a header line that names the recipe format, so that readers can't misread it")


@pytest.mark.skipif(not available(), reason="the sentence-embedding model is not installed")
def test_a_sentence_describing_the_asked_text_is_weak_and_one_quoting_it_succeeds():
    described = ask(QUESTION, units_of(DESCRIBED, "recipes.md"))
    assert "header line" in described.answer
    assert described.result.status == "insufficient"
    assert "no literal quoted" in (described.result.evidence or "")
    quoted = ask(QUESTION, units_of(QUOTED, "recipes.md"))
    assert "%quill-recipe 2" in quoted.answer
    assert quoted.result.status == "success"
