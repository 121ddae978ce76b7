"""Question forms gs-symbolic refused with the answer in hand (issue #20), on a document written here:

- "Who …?" is answered by a role, an occupation or a group ("a library", "the head librarian") or the agent of
  a passive ("assigned by the regional registry") as well as by a personal name, when the passage says the
  asked verb; "Who may …?" by the rule that grants it, best by the one that says who alone ("only if …");
- "What is the maximum time in seconds …?" asks for an amount of time (a number), not a date;
- "In which Lantern version …?": the name qualifying the asked kind is not repeated by the answer ("Added in
  version 2.7."); it is no key the passage must state;
- "… an exchange format such as MARC21?": an example illustrates the kind asked about; it is no key either;
- "What is the purpose of X?" asks what X does (a definition), a word the answer seldom writes; X it names;
- "How often …?" is answered by a frequency ("weekly") as well as by a figure;
- "According to the Lantern handbook, …" / "In the Lantern handbook, …": the document the question cites is
  where to look, not what the answer states (before: "According" was a key name, and the cited phrase
  hid the question's form).
A question of each form the document does not answer stays refused."""

from __future__ import annotations

import pytest
from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.question import analyse
from mrpvm.plugins.sdk.agent_answers import asks_permission, grants, names_role, restricts
from mrpvm.plugins.sdk.answer_types import expected_type, type_qualifiers
from mrpvm.plugins.sdk.asked_forms import function_of
from mrpvm.plugins.sdk.time_answers import asks_frequency, states_frequency
from mrpvm.protocol.document import CnlDocument

HANDBOOK = """# Lantern reading room handbook

Lantern is a catalogue server for small libraries.

## Shelf codes

Shelf codes are short labels printed on the spine of each book.
Several libraries may want the same shelf code prefix and clash.
A library can claim the prefix ``ROOM.$CODE`` if, and only if, it holds the charter for ``$CODE`` in the
regional registry.

## Sessions

A reader session is closed when the reader logs out.
Only the head librarian can delete a reader account.
Reader cards are printed by the county press.
The spine printer is cleaned weekly by volunteers.

Idle limit 900
: Maximum idle time in seconds before a reader session is closed

## Imports

The ``import_records`` command reads records in a library exchange format and stores them in the catalogue.

## Exports

``export_csv(shelf)``
: Write every record of a shelf as comma-separated values. Added in version 2.7.

``export_xml(shelf)``
: Write every record of a shelf as XML. Added in version 2.9.
"""


def solve(question: str) -> CnlDocument:
    return ask(question, units_of(HANDBOOK, "handbook.md", "handbook"))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who may claim a given shelf code prefix?", "regional registry"),
        ("Who can delete a reader account?", "head librarian"),
        ("Who prints reader cards?", "county press"),
        ("What is the maximum idle time in seconds for a reader session?", "900"),
        ("In which Lantern version was export_csv added?", "2.7"),
        ("Which command reads records in an exchange format such as MARC21?", "import_records"),
        ("What is the purpose of export_csv?", "comma-separated values"),
        ("According to the Lantern handbook, who prints reader cards?", "county press"),
        ("How often is the spine printer cleaned?", "weekly"),
        (
            "In the Lantern handbook, which command reads records in a library exchange format?",
            "import_records",
        ),
    ],
)
def test_a_question_answered_in_another_form_than_asked_is_answered(question: str, expected: str) -> None:
    doc = solve(question)
    assert doc.result.status in ("success", "insufficient"), doc.answer
    assert expected in doc.answer


@pytest.mark.parametrize(
    "question",
    [
        "Who repaired the spine printer?",  # no one is said to have done it
        "Who designed the reader account?",  # a role is named near the words, not as doing this
        "Who can delete a shelf code prefix?",  # a role deletes something else (a reader account)
        "What is the maximum number of books a reader may borrow?",  # no such figure
        "In which Lantern version was export_json added?",  # never added
        "Which command converts covers in an image format such as PNG8?",  # no such command
        "What is the role of the night porter?",  # never named
        "How often is the reading room repainted?",  # no frequency of that
        "How often is the spine printer replaced?",  # a frequency of another event ("cleaned weekly")
    ],
)
def test_a_question_of_those_forms_the_document_does_not_answer_is_refused(question: str) -> None:
    doc = solve(question)
    assert doc.result.status != "success", doc.answer


def test_how_the_forms_are_read() -> None:
    assert expected_type("What is the maximum time in seconds for login?") == "number"
    assert expected_type("What is the time in minutes before a retry?") == "number"
    assert expected_type("What time does the room open?") == "date"
    assert type_qualifiers("In which Lantern version was it added?") == ["lantern"]
    assert expected_type("What is the purpose of the mirror setting?") == "definition"
    assert asks_frequency("How often are the hoses checked?") and not asks_frequency("How long is it?")
    assert states_frequency("It is checked weekly.") and states_frequency("Emptied twice a year.")
    assert not states_frequency("The hoses are green.")
    assert expected_type("According to the guide, where are the logs kept?") == "location"
    assert expected_type("In which Lantern version was it added, and why?") == "version"
    assert function_of("What is the role of the night porter?") == "the night porter"
    assert type_qualifiers("Which port does it use?") == []
    asked = analyse("Which attribute checks files out in an encoding like UTF-16 but stores UTF-8?", None)
    assert asked.examples == {"16", "utf-16"} and {"8", "utf"} <= set(asked.keyable)
    assert not analyse("I would like to know the port.", None).examples
    assert asks_permission("Who is allowed to use a sub-table?")
    assert asks_permission("Who can merge a change?")
    assert not asks_permission("Who wrote the handbook?")
    assert names_role("Only the maintainers can merge.", {"merg"})
    assert not names_role("The table holds the data.", {"tabl"})
    assert grants("A library can claim it.") and not grants("Libraries clash.")
    assert restricts("A library can claim it if, and only if, it holds the charter.")
    assert not restricts("A library can claim it.")
