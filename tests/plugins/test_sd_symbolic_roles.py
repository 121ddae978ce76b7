"""plugins/sd_symbolic/shared/roles.py: past-tense narration (`is_past`) against its definition."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.plugins.sd_symbolic.shared import roles
from mrpvm.plugins.sdk.text import words


def reference_is_past(text: str) -> bool:
    """The definition: an irregular past form, or an -ed word (`_ED`) not after a passive/perfect marker."""
    ws = set(words(text))
    if ws & roles._PAST_WORDS:
        return True
    return any(
        m.group(1).lower() not in roles._NOT_PAST_BEFORE_ED and not m.group(2).lower().endswith("eed")
        for m in roles._ED.finditer(text)
    )


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("They abandoned the fort.", True),
        ("The fort is abandoned.", False),  # a passive
        ("The value is returned by the call.", False),
        ("Elara fled the city.", True),  # irregular
        ("They waited.", True),
        ("They agreed.", False),  # "-eed" is no past
        ("They proceed.", False),
        ("Open the file.", False),
    ],
)
def test_past_narration(text: str, past: bool) -> None:
    assert roles.is_past(text) is past
    assert roles.is_past(text, set(words(text))) is past


_WORDS = [
    "they",
    "abandoned",
    "the",
    "fort",
    "is",
    "returned",
    "agreed",
    "proceed",
    "fled",
    "bed",
    "ed",
    "red",
]


@given(
    st.lists(st.one_of(st.sampled_from(_WORDS), st.text(max_size=5)), max_size=10),
    st.sampled_from([" ", "."]),
)
@settings(max_examples=300, deadline=None)
def test_is_past_equals_its_definition(parts: list[str], end: str) -> None:
    text = " ".join(parts) + end
    assert roles.is_past(text) == reference_is_past(text)
