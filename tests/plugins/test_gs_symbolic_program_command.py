"""gs-symbolic: "which <program> command …" is not answered by a definition's term of another kind (a
field the program reads), only by a term naming the program or one of its options (shapes.labels_command).

Golden cases written for these tests (no story of the eval suites), asked as a turn does (answer_support).
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.shapes import asked_program, labels_command

FIELDS = """# Quill manual

## Fields

shelf-mark
:   Quill will split the catalogue number at the last slash to determine the shelf-mark and the copy number.

copy-number
:   The copy number counts the copies of one title.
"""


def test_the_program_of_a_command_question():
    assert asked_program("Which quill command merges two catalogues?") == "quill"
    assert asked_program("Which command merges two catalogues?") == ""


def test_a_term_names_the_program_or_its_option():
    assert not labels_command("shelf-mark", "quill")
    assert labels_command("quill merge", "quill")
    # a definition's term as Markdown writes it: code, bold, a hyphenated subcommand
    assert labels_command("`quill merge`", "quill")
    assert labels_command("**quill merge**", "quill")
    assert labels_command("quill-merge", "quill")
    assert not labels_command("`shelf-mark`", "quill")
    assert labels_command("`--merge`", "quill")
    assert labels_command("shelf-mark", "")


def test_a_field_term_is_not_the_programs_command():
    """Session 26 quoted "`shelf-mark`: Quill will split …" as a success: the term was taken for the command."""
    for question in (
        "Which quill command compares two catalogue numbers?",
        "Which quill command splits the catalogue number?",
    ):
        doc = ask(question, units_of(FIELDS))
        assert doc.result.status != "success", doc.answer
