"""gs-symbolic's passage choice reads polarity and written literals: a sentence negating what the question
asks about ("Not affected releases") says the opposite of it; a token the question writes with symbols
("${NAME:?msg}") is matched as written, not only by the word stems a near form ("${NAME?msg}") shares."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.narrowing import contradicts, literals, quoted_share

ADVISORY = """Quill overwrites a recipe with -R
=================================

Quill can be made to overwrite a recipe file by a hostile mirror. See [the report](https://quill.example/r).

AFFECTED RELEASES
-----------------

- Affected releases: quill 2.1 up to and including 2.4, on every platform
- Not affected releases: quill < 2.1 and quill >= 2.5
"""

FORMS = """# Substitution

Quill recipes may name variables of the environment. See [forms](https://quill.example/forms).

- `${NAME?msg}` stops with an error showing `msg` only if `NAME` is unset.
- `${NAME:?msg}` stops with an error showing `msg` if `NAME` is unset or empty.
"""


def test_the_readings():
    assert literals("When does ${NAME:?msg} stop, with -R or --force?") == {"${NAME:?msg}", "-R", "--force"}
    assert literals("Which releases are affected?") == frozenset()
    assert contradicts("Not affected releases: quill < 2.1", {"affect", "releas"})
    assert not contradicts("Not affected releases: quill < 2.1", {"affect", "releas", "no-affect"})
    assert not contradicts("Affected releases: quill 2.1", {"affect", "releas"})
    assert quoted_share("`${NAME?msg}` stops", frozenset({"${NAME:?msg}"})) == 0.0


@needs_model
def test_a_passage_negating_the_asked_word_is_not_the_answer():
    doc = ask("Which quill releases are affected?", units_of(ADVISORY, "advisory.md"))
    assert "2.1 up to and including 2.4" in doc.answer
    assert "Not affected" not in doc.answer


@needs_model
def test_a_written_form_is_matched_as_written():
    doc = ask("When does ${NAME:?msg} stop with an error?", units_of(FORMS, "forms.md"))
    assert "unset or empty" in doc.answer
    assert "${NAME?msg}" not in doc.answer
