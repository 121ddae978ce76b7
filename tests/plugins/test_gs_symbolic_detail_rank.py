""" "Which <plural noun> …" prefers, among passages that state the question alike, the one that names its
instances ("the MIT and Apache-2.0 licences"), not one that speaks of the class ("under several licences")."""

from __future__ import annotations

from answer_support import ask, units_of

LOOM = """# Loom scheduler

## Licensing

The loom scheduler may be redistributed under several open licences, as its authors chose.
Redistribution of the loom scheduler is permitted under the Zlib and BSD-2-Clause licences.
Patches are accepted under the same terms.
"""


def test_a_which_plural_question_quotes_the_named_instances() -> None:
    answer = ask("Under which licences may the loom scheduler be redistributed?", units_of(LOOM)).answer
    assert "Zlib" in answer


KILN = """# Kiln controller manual

## Fields

`zone`
    A zone is a whole number between one and four, printed on the shelf.
    Leave it blank and the controller reads the top shelf.
    Note that the purpose of zones is to allow us to fire two glazes at once without mixing their curves.
"""


def test_what_is_x_for_quotes_the_stated_purpose_not_the_definition() -> None:
    answer = ask("What is the zone for?", units_of(KILN)).answer
    assert "fire two glazes" in answer
