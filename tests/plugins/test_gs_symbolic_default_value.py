""" "What is the default X?" is answered by a passage that states a default as a value ("The default is 8",
"defaults to 8"), in proportion to how much else of the question it states; "the default X can be changed" names
the default without stating it (issue 20: the asked detail missing)."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.answer_form import states_default

LOOM = """# Loom scheduler

## WAKESIGNAL

    WAKESIGNAL name

The `WAKESIGNAL` directive sets the wake signal that the scheduler sends to a sleeping loom.
The signal may be given by name or by number.
When the directive is missing, the default is `SIGUSR1`.
A loom may replace the default wake signal with its own through `loom run --wake-signal`.

## THREADS

The `THREADS` directive sets how many threads a loom may use.
The defaults are 4 for small looms and 16 for large ones.
"""


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ("The default is 8.", True),
        ("If unset, the width defaults to 80 columns.", True),
        ("Default: none", True),
        ("Retries (default 3) before giving up.", True),
        ("Compression runs by default.", True),
        ("`fast` is the default.", True),
        ("The default port can be changed with --port.", False),
        ("Set the default editor in your profile.", False),
        # the setting named between "default" and its value (session 31)
        ("The default spool size is 64 pages.", True),
        ("Default level changed to -3 in this release.", True),
        ("The default spool size is configurable.", False),
    ],
)
def test_a_default_stated_as_a_value_is_told_from_a_default_named(text: str, states: bool) -> None:
    assert states_default(text) is states


def test_the_default_value_is_quoted_not_a_sentence_that_only_names_the_default() -> None:
    answer = ask("What is the default wake signal?", units_of(LOOM)).answer
    assert "SIGUSR1" in answer
