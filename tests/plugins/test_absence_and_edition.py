"""A condition of absence worded as a predicate, and a release named by its number (issue 20: false refusals).

"Which edition is assumed if the edition field is missing?" was refused over "If the `edition` field is not
present …, then the 2015 edition is assumed": "missing" was read as a positive condition, so the stated "not
present" opposed it, and "the 2015 edition" was no version shape for a question about an edition. A predicate
of absence ("missing", "absent", "unset", "unspecified", as "omitted" already was) is the negation of presence,
and a release noun beside a number ("the 2019 edition", "revision 12") states a version. A case the notes
state only under the opposite condition stays refused, as does an edition they never name."""

from __future__ import annotations

from answer_support import solve_question, units_of
from mrpvm.plugins.gs_symbolic.directives import absence_condition, condition_of
from mrpvm.plugins.sdk.answer_shapes import mentions_type
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

NOTES = """# The loom.toml file

Every loom project has a `loom.toml` file at its root.

## The `dialect` field

The `dialect` field chooses the rules the weaver applies to the pattern files.
If the `dialect` field is not present in `loom.toml`, then the 2019 edition of the rules is
assumed for compatibility with old projects.

## The `retries` field

If the `retries` field is present, each failed fetch of a yarn index is tried again that many times.

## The `mirror` field

The `mirror` field names a host to fetch yarn indexes from instead of the main index.
"""


def _ask(question: str) -> str:
    return solve_question(question, units_of(NOTES, "loom.md")).answer or ""


def test_a_predicate_of_absence_is_a_negated_condition() -> None:
    missing = condition_of("if the dialect field is missing")
    assert missing is not None and missing.negated
    assert condition_of("when the mirror key is unset").negated  # type: ignore[union-attr]
    assert not condition_of("if the dialect field is present").negated  # type: ignore[union-attr]
    assert absence_condition("Which host is used if the mirror field is absent?")


def test_a_release_named_by_its_number_is_a_version() -> None:
    assert mentions_type("then the 2019 dialect edition is assumed", "version") is False  # noun apart
    assert mentions_type("then the 2019 edition is assumed", "version")
    assert mentions_type("Edition 2021 changed the prelude.", "version")
    assert mentions_type("Fixed in revision 12.", "version")
    assert not mentions_type("It keeps five editions of the index.", "version")


def test_the_missing_field_is_answered_by_the_not_present_case() -> None:
    answer = _ask("Which edition is assumed if the dialect field is missing?")
    assert "2019" in answer, answer


def test_a_case_stated_only_under_the_opposite_condition_stays_refused() -> None:
    assert _ask("How many times is a fetch tried again if the retries field is missing?") == NO_CONTEXT_ANSWER


def test_an_edition_never_named_stays_refused() -> None:
    assert _ask("Which edition is assumed if the mirror field is missing?") == NO_CONTEXT_ANSWER
