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
