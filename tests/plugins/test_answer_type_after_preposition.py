"""A "how many/much/long" question that opens with a preposition ("Up to how many …", "For how long …",
"In how many …") asks what the same question without it asks: a number or a duration (it was untyped, and
answered by a list of every sentence sharing its words)."""

from __future__ import annotations

from mrpvm.plugins.sdk.answer_types import expected_type


def test_a_leading_preposition_keeps_the_question_s_type() -> None:
    assert expected_type("Up to how many characters long must readers accept shelf names?") == "number"
    assert expected_type("In how many drawers is a kiln kept?") == "number"
    assert expected_type("By how much does the shelf sag?") == "number"
    assert expected_type("For how long does the glaze cool?") == "duration"
    assert (
        expected_type("In which drawer is the kiln kept?") == "entity"
    )  # a preposition before "which": as before


KILN_RULES = """# Kiln file format

## Names

- Shelf names in kiln files are plain words, similar to the names a pantry list accepts.
- They may hold letters, digits and the dash.
- Readers must accept shelf names with length up to and including 80 characters.
- Readers must accept labels and notes with lengths up to and including 200 and 900 characters respectively.
"""


def test_the_dimension_of_a_measure_frames_the_question() -> None:
    """ "How many characters long …": "long" is the dimension the number is given in, not a thing the
    documents must name (they write "length")."""
    from answer_support import ask, units_of

    for question in (
        "Up to how many characters long must readers accept shelf names?",
        "How many characters long may a shelf name be?",
    ):
        doc = ask(question, units_of(KILN_RULES, name="kiln.md"))
        assert doc.answer.startswith("Readers must accept shelf names with length up to and including 80"), (
            question
        )
        assert "900" not in doc.answer
