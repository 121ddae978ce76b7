"""A condition that names another value than the question's is another case: "When set to 'cut', …" does not
answer "… when $tangle is set to 'loop'?", however many of the question's words the window around it states."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.directives import condition_of, trailing_condition

LOOM = """# Loom options

## Overlong threads

When a thread is longer than the loom's width, the loom ties a knot at the edge, unless `$tangle` is set.
When set to 'cut', long threads are trimmed at the frame.
When set to 'loop', long threads are wound back onto the spool.

## Variables

The loom reads `$tangle` once per row, so a change to `$tangle` applies from the next row on.
`$tangle` and `$width` are kept in the loom's card.
"""


def test_the_case_the_question_names_is_quoted_not_its_neighbour() -> None:
    doc = ask("What happens to long threads when $tangle is set to 'loop'?", units_of(LOOM, name="loom.md"))
    assert "wound back onto the spool" in doc.answer
    assert "trimmed at the frame" not in doc.answer


def test_a_condition_naming_another_value_is_another_case() -> None:
    asked = trailing_condition("What happens when $tangle is set to 'loop'?")
    assert asked is not None and asked.values == frozenset({"loop"})
    other = condition_of("When set to 'cut', long threads are trimmed.")
    same = condition_of("When set to “loop”, threads are wound back.")
    unquoted = condition_of("When set, threads are wound back.")
    assert other is not None and other.names_other_value(asked)
    assert same is not None and not same.names_other_value(asked)
    assert unquoted is not None and not unquoted.names_other_value(asked)  # no value named: not another case
