"""sd-symbolic's Markdown reader: an indented code block (CommonMark: four spaces after a blank line) is
code, kept with the sentence that leads into it; indented prose or a list stays prose; a short line right
under a heading opens its body, it is no heading of its own."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.sd_symbolic.source_units.tree import _joined

README = """Quill
=====

Quill keeps recipes in plain files. See the [manual](https://quill.example/manual) for more.

Installation
------------

The latest release can be installed from the package index:

    pip install quill

It is also possible to include the optional plotting extras:

    pip install quill[plot]

Quill can also be installed with a system package.

Development
-----------

Quill development takes place on Forgejo: https://forge.example/quill

Please report bugs on the tracker with a recipe that shows the problem. Questions about recipes are more at
home on the forum, where there is a quill tag.
"""


def _atomic(text: str) -> list[tuple[str, str]]:
    return [
        (u.sectionTitle or "", u.claim or "") for u in units_of(text, "README.md") if u.kuType == "atomic"
    ]


def test_each_lead_sentence_keeps_the_indented_command_after_it():
    claims = [claim for _, claim in _atomic(README)]
    extras = next(c for c in claims if "optional plotting extras" in c)
    assert "pip install quill[plot]" in extras
    first = next(c for c in claims if "latest release" in c)
    assert "pip install quill" in first and "plotting" not in first
    assert not any(c.startswith("pip install quill It is") for c in claims)


QUOTED = """Quill notes
===========

Quill keeps recipes in plain files. See the [manual](https://quill.example/manual) for more.

A maintainer answered on the list:

    Recipes without a header are rejected. Add the header line and
    run the check again.

Quill can also be installed with a system package.
"""


def test_indented_prose_stays_sentences():
    claims = [claim for _, claim in _atomic(QUOTED)]
    assert any(c.startswith("Recipes without a header are rejected.") for c in claims)
    assert not any("```" in c for c in claims)


@needs_model
def test_how_to_install_the_extras_is_answered_with_its_command():
    doc = ask("How do I install the optional plotting extras?", units_of(README, "README.md"))
    assert "pip install quill[plot]" in doc.answer


def test_a_short_line_right_under_a_heading_opens_its_body():
    sections = {section for section, claim in _atomic(README) if "Forgejo" in claim or "report bugs" in claim}
    assert sections == {"Quill > Development"}


def test_a_line_without_punctuation_ends_its_paragraph_in_the_claim():
    texts = [
        "Quill development takes place on Forgejo: https://forge.example/quill",
        "Please report bugs here.",
    ]
    assert (
        _joined(texts)
        == "Quill development takes place on Forgejo: https://forge.example/quill\n\nPlease report bugs here."
    )
    assert _joined(["It is done.", "It works"]) == "It is done. It works"


@needs_model
def test_the_sentence_after_an_unpunctuated_line_answers_alone():
    doc = ask("Where should I report bugs?", units_of(README, "README.md"))
    assert "on the tracker" in doc.answer and "Forgejo" not in doc.answer
