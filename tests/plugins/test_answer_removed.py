"""Golden tests of an honest status when the sentence that answers is not in the document (issue 20), on a
note-taking tool's manual written here. bench/status_negatives.py asks each question again of its document
without the answer's lines; what came back `success` there is, in general:
- a passage said under the opposite condition: "What happens when wrap_tabs is false?" answered by "If true,
  tabs … are expanded" (support.py, _condition_kept);
- a lead-in that ends where its example would follow: "use a command like the following (replace NAME …)."
  without the command (answer_form.py);
- a condition read with its polarity: "if neither X nor Y is set" is a negated one (directives.py);
- "how do I make <object>": a passage that does not name the object ("make numbered backups" for
  "incremental backups"; a light verb's object, action.py);
- the name asked about only as the alternative set aside: "install notelint instead of quillcheck" does not
  say which command installs quillcheck.
The same questions over what the manual does say stay `success`."""

from __future__ import annotations

import pytest
from answer_support import ask, needs_model, units_of
from mrpvm.protocol.document import CnlDocument

MANUAL = """# quill

quill is a small note-taking tool that keeps notes in plain text files.

## Settings

### wrap_tabs

If true (the default), tabs in a note are expanded to four spaces before wrapping.

### autosave

If false (the default), quill asks before closing a note with unsaved changes.

## Themes

If you have not chosen a theme or a font for your notes, quill shows each note with the plain theme and the system font.

## Cache

The cache holds rendered previews of every note. To reset the cache, use a command like the following (replace NAME with your profile name).

Clearing the cache does not delete any note.

## Backups

Run `quill backup --numbered` to make numbered backups of every note.

## Checking notes

If you want to check every note, you will have to install the ``notelint`` command instead of ``quillcheck``.

## Listing notes

Print only the title of the note with id 42:

    quill show 42 --field title

Print the notes tagged work:

    quill list --tag work
"""

# the cache section as a manual that quotes its command writes it
WITH_COMMAND = MANUAL.replace(
    "(replace NAME with your profile name).",
    "(replace NAME with your profile name):\n\n    quill cache reset --profile NAME\n",
)


def _ask(question: str, text: str = MANUAL) -> CnlDocument:
    return ask(question, units_of(text))


@needs_model
@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("What happens when wrap_tabs is false?", "If true"),
        ("How do I reset the cache?", "like the following"),
        ("How do I make incremental backups with quill?", "numbered backups"),
        ("Which command installs quillcheck?", "instead of ``quillcheck``"),
    ],
)
def test_a_passage_that_does_not_state_what_was_asked_is_not_success(question: str, quoted: str) -> None:
    doc = _ask(question)
    assert quoted in doc.answer  # the best candidate is still given ...
    assert doc.result.status != "success"  # ... as weak


@needs_model
@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("What happens when wrap_tabs is true?", "If true"),
        ("What happens if autosave is false?", "If false"),
        ("What happens if neither a theme nor a font is chosen for my notes?", "plain theme"),
        ("How do I make numbered backups?", "quill backup --numbered"),
        ("Which command installs notelint?", "``notelint``"),
        ("How do I print the title of a note?", "quill show 42 --field title"),
    ],
)
def test_a_passage_that_states_it_stays_success(question: str, quoted: str) -> None:
    doc = _ask(question)
    assert quoted in doc.answer
    assert doc.result.status == "success"


@needs_model
def test_a_lead_in_quoted_with_its_command_stays_success() -> None:
    doc = _ask("How do I reset the cache?", WITH_COMMAND)
    assert "quill cache reset --profile NAME" in doc.answer
    assert doc.result.status == "success"
