"""A figure, version or default stated of a neighbouring entry is no answer about the asked one (issue 20:
refusal that generalizes).

"What is the maximum length of the description field?" was answered `success` by "Use a maximum of 64
characters of length." under the *name* field; "Since which version is the compdb-targets tool available?"
by the "Available since …" note of the tool listed before it. The retrieval prefers the passage for the
attribute's words ("maximum", "length", "since", "version"); what the value is stated of is another entry.
For a question asking a value of a marked type (a figure, a version, a date, a duration) or a default, a
word naming the asked thing that the collection holds must be written in the quoted passage's unit or in
the headings it stands under (or a synonym of it): otherwise the documents do not say the asked thing's
value. The asked entry's own value still answers."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.neighbour_entry import named_entries
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

NOTES = """# The kiln.toml reference

Every kiln project keeps a `kiln.toml` file at its root.
A `kiln.toml` file can change the default values of the command line flags.

## The `label` field

The label names the glaze batch in reports.

- Only lowercase letters and digits are allowed.
- Keep it to a maximum length of 40 characters.

## The `summary` field

The summary is a short line of text about the batch. The firing log shows the summary beside the label,
and the kiln index lists it when a batch is searched.

## The `firing` field

The `firing` field sets the peak temperature of the batch in degrees.
Available since kiln version 2.3.

## The `glazes` table

The `glazes` table lists the glazes a batch applies, one key per glaze.

## The `cooling` field

The `cooling` field names the cooling curve applied after the firing.
If the `cooling` field is not present, the curve `slow` is used.
"""


def _ask(question: str) -> str:
    """kb-balanced's retrieval (with the collection's term weights), then gs-symbolic's answer."""
    return ask(question, units_of(NOTES, "kiln.md")).answer or ""


def test_an_entry_is_named_by_its_name_and_kind() -> None:
    assert named_entries("What is the maximum length of the summary field?") == ["summary"]
    assert named_entries("Since which version is the `glaze-map` tool available?") == ["glaze-map"]
    assert named_entries("What is the default timeout setting?") == ["timeout"]  # "default" is asked of it
    assert named_entries("What is the maximum length of a summary?") == []


def test_a_neighbouring_entrys_maximum_is_no_answer() -> None:
    # main: "Keep it to a maximum length of 40 characters." (the label field's)
    assert _ask("What is the maximum length of the firing field?") == NO_CONTEXT_ANSWER


def test_a_neighbouring_entrys_version_is_no_answer() -> None:
    # main: "Available since kiln version 2.3." (the firing field's)
    assert _ask("Since which kiln version is the glazes table available?") == NO_CONTEXT_ANSWER


def test_the_asked_entrys_own_value_still_answers() -> None:
    assert "40" in _ask("What is the maximum length of the label field?")
    assert "2.3" in _ask("Since which kiln version is the firing field available?")
    assert "slow" in _ask("Which curve is used if the cooling field is not present?")


def test_one_unit_text_for_the_entry_check_and_the_option_check() -> None:
    """review34: neighbour_entry's unit texts and window_reading's text around a sentence (names_option's
    context) are one function; the headings come first only where asked for."""
    from mrpvm.plugins.gs_symbolic.context_terms import unit_text
    from mrpvm.protocol.document import KnowledgeUnit

    base = {"sourceId": "s", "chunkId": "c", "kuType": "atomic", "topic": "t"}
    unit = KnowledgeUnit(
        id="u",
        role="Description",
        claim="The label names the batch.",
        title="label",
        sectionTitle="Fields > label",
        **base,
    )
    assert unit_text(unit) == "label The label names the batch."
    assert unit_text(unit, headings=True) == "Fields > label label The label names the batch."
    procedure = KnowledgeUnit(id="p", role="Procedure", procedure="1. Fire it.", **base)
    assert unit_text(procedure, headings=True) == "1. Fire it."
