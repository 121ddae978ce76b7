"""sd-symbolic's role cues with their cheap pre-checks (session 25) give what the plain patterns give.

Each pre-check skips a regex scan only where the pattern cannot match; these tests compare the cues with the
plain patterns (the pre-session forms, kept here) on invented sentences, hedged, shouted, non-ASCII and
near misses included.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.plugins.sd_symbolic.shared import roles

# the pre-session pattern: the hedges looked behind at every position
OLD_DEFINITION_CUE = re.compile(
    r"(?<!usually )(?<!often )(?<!typically )(?<!probably )(?<!likely )(?<!generally )(?<!also )\bmeans\b"
    r"|\b(?:is defined as|are defined as|refers to|refer to|is called|are called|is known as|are known as"
    r"|stands for|is the term for|denotes|is a (?:kind|type|form|sort) of|are (?:kinds|types|forms) of)\b",
    re.I,
)

SENTENCES = [
    "A quorum means a majority of the voting members.",
    "This usually means the cache is cold.",
    "That USUALLY MEANS a restart, and it also means downtime.",
    "A retry often means nothing; it generally means the link is slow.",
    "The flag typically means verbose output, probably means more.",
    "It likely means that the meanest value wins.",
    "Blue means go, which also means the lane is open.",
    "Téa means the brand new pump.",
    "If the pump fails, reset the breaker.",
    "When the relay BREAKS the fan stops.",
    "Once the valve stops, nothing happens.",
    "If the mixer hangs for a minute, unplug it.",
    "When the motor runs, the belt turns.",
    "Whenever the dial is failing to turn, oil it.",
    "If the lamp ſtops, check the fuse.",
    "When the gate faıls, call the guard.",
    "Troubleshooting the heater takes an hour.",
    "The DIAGNOSTIC panel shows an error code.",
    "A diagnosis needs a crash log.",
    "The stove is described in chapter two.",
    "Tröubleshoot the kettle when it crashes.",
    "The red pump, versus the blue one, is louder.",
    "Unlike the kettle, the stove is slower than the oven.",
    "The dial is the same as the knob; on the other hand the lever differs.",
    "While the other fan spins, this one waits.",
    "The gauge is similar to a clock, compared with a meter, in contrast to a scale.",
    "You must not open the lid, and you shouldn't shake it.",
    "Never leave the stove on.",
    "never touch the wire.",
    " Always unplug first.",
    "Do not MIX the paints; the load is LIMITED TO ten kilos.",
    "The tank holds at least four litres and at most nine.",
    "Under no circumstances is it required, mandatory or forbidden.",
    "Pumps rarely stop.",
    "The fan is quiet.",
]


def assert_prechecks_keep_matches(text: str) -> None:
    """Each cheap pre-check lets through every text its full pattern matches."""
    if roles._DIAGNOSTIC_COND.search(text):
        assert roles._may_hold(text, roles._DIAGNOSTIC_COND_KEYS)
    assert roles._diagnostic_prefix(text) == bool(roles._DIAGNOSTIC_PREFIX.search(text))
    if roles._COMPARISON.search(text):
        assert roles._may_hold(text, roles._COMPARISON_KEYS)
    if roles._CONSTRAINT.search(text):
        assert roles._may_hold(text, roles._CONSTRAINT_KEYS, roles._CONSTRAINT_OPENERS)


@pytest.mark.parametrize("sentence", SENTENCES)
def test_definition_cue_matches_as_the_old_pattern(sentence: str) -> None:
    assert bool(roles._DEFINITION_CUE.search(sentence)) == bool(OLD_DEFINITION_CUE.search(sentence))


@pytest.mark.parametrize("sentence", SENTENCES)
def test_prechecks_never_skip_a_match(sentence: str) -> None:
    assert_prechecks_keep_matches(sentence)


def test_skipped_texts_are_ones_the_patterns_miss() -> None:
    assert not roles._may_hold("The fan is quiet.", roles._COMPARISON_KEYS)
    assert not roles._may_hold("The fan is quiet.", roles._CONSTRAINT_KEYS, roles._CONSTRAINT_OPENERS)
    assert roles._may_hold("Always unplug it.", roles._CONSTRAINT_KEYS, roles._CONSTRAINT_OPENERS)
    assert roles._may_hold("Le réservoir est plein.", roles._COMPARISON_KEYS)  # non-ASCII: always tried


def test_hedged_means_is_no_definition_but_a_plain_one_is() -> None:
    assert roles.sentence_role("A quorum means a majority of the voting members.") == "Definition"
    assert roles.sentence_role("A red light usually means the battery is low.") != "Definition"


def test_conditional_failure_is_diagnostic_and_prefix_finds_troubleshooting() -> None:
    assert roles.sentence_role("If the pump fails, reset the breaker.") == "Diagnostic"
    assert roles.sentence_role("When the motor runs, the belt turns.") is None
    assert roles.sentence_role("Troubleshooting steps for the heater: check the crash log.") == "Diagnostic"


_PARTS = st.sampled_from(
    [
        "usually",
        "also",
        "means",
        "MEANS",
        "meant",
        "if",
        "When",
        "fails",
        "FAIL",
        "breaks",
        "stops",
        "hangs",
        "troubleshoot",
        "DIAGNOSE",
        "the",
        "pump",
        "versus",
        "vs.",
        "taller",
        "than",
        "other",
        "hand",
        "on",
        "same",
        "as",
        "Never",
        "must",
        "should",
        "not",
        "may",
        "limited",
        "to",
        "Avoid",
        "don't",
        ",",
        ".",
        "ſ",
        "ı",
        "é",
        "-",
        "  ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PARTS, max_size=14), st.sampled_from([" ", "", "\n"]))
def test_random_texts_agree_with_the_plain_patterns(parts: list[str], sep: str) -> None:
    text = sep.join(parts)
    assert bool(roles._DEFINITION_CUE.search(text)) == bool(OLD_DEFINITION_CUE.search(text))
    assert_prechecks_keep_matches(text)
