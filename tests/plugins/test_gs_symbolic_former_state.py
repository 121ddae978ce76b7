"""A state given as a former one ("X used to be the default", "formerly", "previously") does not say what holds
now: a present-tense question is answered by the passage that states the present (issue 20, item 5)."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.clauses import tokenize
from mrpvm.plugins.gs_symbolic.qualifiers import past_only, states_former

KILN = """# Kiln controller

## Firing modes

The controller offers three firing modes: bisque, glaze and crystal.
Each mode follows its own temperature curve.

## Cooling

When the last segment ends, the kiln cools with its door shut.
Opening the door early cracks the glaze.

## Changes

The ramp rate is set per segment in degrees per hour.
Release notes: 'bisque' used to be the default firing mode of the controller. Now, 'glaze' is the default.
"""


def test_a_former_state_is_told_from_a_passive_of_purpose_and_a_reduced_relative() -> None:
    for sentence in (
        "'bisque' used to be the default firing mode.",
        "The door was formerly locked during cooling.",
        "Previously the ramp was fixed.",
    ):
        assert states_former(sentence), sentence
    for sentence in (
        "The dial is used to set the ramp rate.",
        "The tool used to create firing curves is called kilnctl.",
        "Glaze is the default firing mode.",
        "This release fixes a previously reported crash of the controller.",
    ):
        assert not states_former(sentence), sentence
    # the yes/no readers' past-only test no longer takes a passive of purpose for a past state
    assert not past_only(tokenize("The dial is used to set the ramp rate."))
    assert past_only(tokenize("The dial used to set the ramp rate."))


def test_the_present_default_is_quoted_not_only_the_former_one() -> None:
    answer = ask("What is the default firing mode of the controller?", units_of(KILN)).answer
    assert "'glaze' is the default" in answer


def test_a_question_about_the_past_still_takes_the_former_state() -> None:
    answer = ask("What was the default firing mode of the controller before?", units_of(KILN)).answer
    assert "'bisque' used to be the default" in answer
