"""gs-symbolic reads a row of badges (Markdown images, a logo's HTML tag) as stating nothing: their alt
texts ("PyPI Version", "License") name pictures, so they never answer a question that shares a word."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.evidence import pictures_only

README = """<img src="https://quill.example/logo.svg"><br>

Quill: recipes in plain files
=============================

[![PyPI Version](https://img.shields.io/pypi/v/quill.svg)](https://pypi.org/project/quill/) [![License](https://img.shields.io/pypi/l/quill.svg)](https://forge.example/quill/LICENSE.md) [![DOI](https://joss.example/papers/10.21105/joss.04242/status.svg)](https://doi.org/10.21105/joss.04242)

Quill is a recipe manager based on plain text files.

Dependencies
------------

Reading recipes requires [lxml](https://lxml.de/) and pandas.
"""


def test_badges_and_logos_are_pictures_only():
    assert pictures_only(
        "[![PyPI Version](https://img.shields.io/v.svg)](https://pypi.org/q/) [![ci][ci]][ci-url]"
    )
    assert pictures_only('<img src="https://quill.example/logo.svg"><br>')
    assert not pictures_only("See ![the flow](flow.png) before you start.")
    assert not pictures_only("Quill needs [lxml](https://lxml.de/) and pandas.")


@needs_model
def test_a_badge_row_does_not_answer_a_question_sharing_its_alt_text():
    doc = ask("Which version of quill is required?", units_of(README, "README.md"))
    assert "img.shields" not in doc.answer
    assert doc.result.status != "success"
